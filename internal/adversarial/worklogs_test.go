package adversarial

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
)

// TestMirrorStateLogsHostile: the work dir's mirror-blobs.log and mirror-repositories.log were read
// whole with os.ReadFile and appended to through links. A FIFO, a link (to /dev/zero, or to a file
// outside the work dir) and a sparse file past the cap are refused at once, named, and the link's
// target is left as it was.
func TestMirrorStateLogsHostile(t *testing.T) {
	dst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/" {
			http.NotFound(w, r)
		}
	}))
	defer dst.Close()
	host := strings.TrimPrefix(dst.URL, "http://")
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plant := map[string]struct {
		make func(path string) error
		want error
	}{
		"fifo":          {func(p string) error { return unix.Mkfifo(p, 0o644) }, fsroot.ErrNotRegular},
		"dev zero link": {func(p string) error { return os.Symlink("/dev/zero", p) }, fsroot.ErrLink},
		"outside link":  {func(p string) error { return os.Symlink(outside, p) }, fsroot.ErrLink},
		"sparse 1 TiB": {func(p string) error {
			f, err := os.Create(p)
			if err == nil {
				err = f.Truncate(1 << 40)
				f.Close()
			}
			return err
		}, nil},
	}
	for _, log := range []string{"mirror-blobs.log", "mirror-repositories.log"} {
		for name, tc := range plant {
			t.Run(log+"/"+name, func(t *testing.T) {
				work := t.TempDir()
				if err := tc.make(filepath.Join(work, log)); err != nil {
					t.Fatal(err)
				}
				o := mirror.DefaultOptions(mirror.Dest{Host: host, Insecure: true})
				o.BlobLog = filepath.Join(work, "mirror-blobs.log")
				o.RepoLog = filepath.Join(work, "mirror-repositories.log")
				err := fast(t, 5*time.Second, log, func() error {
					_, err := mirror.Copy(context.Background(), []mirror.Image{{Source: host + "/a:1", Dest: host + "/a:1"}}, o)
					return err
				})
				var tl *fsroot.TooLargeError
				switch {
				case err == nil:
					t.Fatal("accepted")
				case tc.want != nil && !errors.Is(err, tc.want):
					t.Fatalf("%v, want %v", err, tc.want)
				case tc.want == nil && (!errors.As(err, &tl) || !strings.Contains(err.Error(), "256 MiB")):
					t.Fatalf("%v, want refused by its size", err)
				case !strings.Contains(err.Error(), log):
					t.Fatalf("%v does not name %s", err, log)
				}
				if b, _ := os.ReadFile(outside); string(b) != "keep me\n" {
					t.Errorf("the file outside became %q", b)
				}
			})
		}
	}
}
