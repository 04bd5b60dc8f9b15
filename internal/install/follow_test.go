package install_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/install"
	"github.com/bootstrap-dev/bootstrap/internal/install/installtest"
)

func TestFollowerReportsAFailingValidationThenItsFix(t *testing.T) {
	api := installtest.New("watcher-jwt")
	defer api.Close()
	api.SetHost("master-0", "master", "known", "Host is ready to be installed")
	api.SetValidation("master-0", "network", "ntp-synced", "success", "Host NTP is synced")
	api.SetHost("master-1", "master", "insufficient", "Host cannot be installed due to following failing validation(s): Host couldn't synchronize with any NTP server")
	api.SetValidation("master-1", "network", "ntp-synced", "failure", "Host couldn't synchronize with any NTP server")
	api.SetValidation("master-1", "hardware", "sufficient-installation-disk-speed", "success", "Speed of installation disk is sufficient")

	f := &install.Follower{BaseURL: api.URL, WatcherToken: "watcher-jwt"}
	ctx := context.Background()
	first, err := f.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(strs(first), "\n")
	for _, want := range []string{
		"cluster: insufficient: Cluster is not ready for install",
		"cluster: validation all-hosts-are-ready-to-install failure",
		"host master-1: validation ntp-synced failure: Host couldn't synchronize with any NTP server",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("first poll misses %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "master-0: validation") {
		t.Errorf("a passing validation is not news:\n%s", got)
	}
	if again, _ := f.Poll(ctx); len(again) != 0 {
		t.Fatalf("nothing changed, yet: %v", strs(again))
	}
	if fl := f.Failing(); len(fl) != 2 || fl[1].Host != "master-1" || fl[1].Validation != "ntp-synced" {
		t.Fatalf("failing: %v", fl)
	}

	// The engineer fixes NTP; the disk turns out slow.
	api.SetValidation("master-1", "network", "ntp-synced", "success", "Host NTP is synced")
	api.SetValidation("master-1", "hardware", "sufficient-installation-disk-speed", "failure", "While preparing the previous installation the installation disk speed measurement failed or was found to be insufficient")
	api.SetHost("master-1", "master", "known", "Host is ready to be installed")
	next, err := f.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"host master-1: known: Host is ready to be installed",
		"host master-1: validation ntp-synced passes now: Host NTP is synced",
		"host master-1: validation sufficient-installation-disk-speed failure: While preparing the previous installation the installation disk speed measurement failed or was found to be insufficient",
	}
	if strings.Join(strs(next), "\n") != strings.Join(want, "\n") {
		t.Fatalf("second poll:\n%s\nwant:\n%s", strings.Join(strs(next), "\n"), strings.Join(want, "\n"))
	}
}

func TestFollowerNeedsTheWatcherToken(t *testing.T) {
	api := installtest.New("watcher-jwt")
	defer api.Close()
	_, err := (&install.Follower{BaseURL: api.URL, WatcherToken: "stale"}).Poll(context.Background())
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("want 401, got %v", err)
	}
}

func TestFollowReportsAnUnreachableAPIOnce(t *testing.T) {
	api := installtest.New("")
	url := api.URL
	api.Close() // the rendezvous host is rebooting
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var got []install.Finding
	(&install.Follower{BaseURL: url, Interval: 10 * time.Millisecond}).Follow(ctx, func(x install.Finding) { got = append(got, x) })
	if len(got) != 1 || got[0].Status != "api-unreachable" {
		t.Fatalf("want one api-unreachable finding over many polls, got %v", got)
	}
}

func strs(fs []install.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

func TestWatcherTokenFromInstallerState(t *testing.T) {
	dir := t.TempDir()
	if tok, err := install.WatcherToken(dir); tok != "" || err != nil {
		t.Fatalf("no state: %q %v", tok, err)
	}
	state := `{"*gencrypto.AuthConfig":{"PublicKey":"pk","AgentAuthToken":"a","UserAuthToken":"u","WatcherAuthToken":"w.jwt"},"*installconfig.InstallConfig":{}}`
	if err := os.WriteFile(filepath.Join(dir, install.StateFile), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := install.WatcherToken(dir); tok != "w.jwt" || err != nil {
		t.Fatalf("token: %q %v", tok, err)
	}
}
