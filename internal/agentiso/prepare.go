package agentiso

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// Image is one servable ISO: the shared agent ISO or a node's view of it.
type Image struct {
	// Path is the URL path it is served under ("/iso/agent.x86_64.iso", "/iso/nodes/xe7740-1.iso").
	Path string
	// Node is the node the view belongs to; empty for the shared ISO.
	Node    string
	Content io.ReaderAt
	Size    int64
	// ETag is a strong entity tag (quoted); it changes whenever the bytes would.
	ETag    string
	ModTime time.Time
	// PatchBytes is the memory the node's patches hold (0 for the shared ISO).
	PatchBytes int64
	// Patches are the regions that differ from the base ISO.
	Patches []Patch
}

// PrepareOptions say which ISO to serve and how each node's view differs.
type PrepareOptions struct {
	// BaseISO is the agent ISO openshift-install wrote.
	BaseISO string
	// BaseDigest is its SHA-256 when known (the build records it); it makes the ETags content
	// addresses. Empty uses the file's size, modification time and inode instead.
	BaseDigest string
	// Nodes maps node names to their customizations; nodes with an empty one share the base ISO.
	Nodes map[string]Customization
	// Progress, if set, is called after each node is prepared.
	Progress func(node string, done, total int)
}

// Prepared is the shared ISO and the per-node views, ready to serve. Close releases the file.
type Prepared struct {
	Base   Image
	Nodes  map[string]Image
	Layout *Layout
	file   *os.File
}

// Close closes the base ISO.
func (p *Prepared) Close() error { return p.file.Close() }

// Images returns the base image then the node views sorted by node name.
func (p *Prepared) Images() []Image {
	out := []Image{p.Base}
	names := make([]string, 0, len(p.Nodes))
	for n := range p.Nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, p.Nodes[n])
	}
	return out
}

// Prepare opens the base ISO, locates its embed areas once and computes each node's patches. No
// ISO is copied: a node's view costs its patches in memory (a few KiB of kernel arguments, the
// compressed ignition area) and nothing on disk.
func Prepare(opts PrepareOptions) (*Prepared, error) {
	f, err := fsroot.OpenFile(opts.BaseISO, fsroot.Stream)
	if err != nil {
		return nil, fmt.Errorf("open agent ISO: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open agent ISO: %w", err)
	}
	baseTag := opts.BaseDigest
	if baseTag == "" {
		baseTag = fileIdentity(st)
	}
	p := &Prepared{
		Base: Image{Path: "/iso/" + safeName(st.Name()), Content: f, Size: st.Size(),
			ETag: `"` + shortHash(baseTag) + `"`, ModTime: st.ModTime()},
		Nodes: map[string]Image{},
		file:  f,
	}
	names := make([]string, 0, len(opts.Nodes))
	for n, c := range opts.Nodes {
		if !c.Empty() {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) > 0 {
		if p.Layout, err = ReadLayout(f, st.Size()); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", opts.BaseISO, err)
		}
	}
	for i, n := range names {
		patches, err := p.Layout.Customize(f, opts.Nodes[n])
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("node %s: ISO customization: %w", n, err)
		}
		v, err := NewView(f, st.Size(), patches)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("node %s: %w", n, err)
		}
		var mem int64
		for _, pt := range patches {
			mem += int64(len(pt.Data))
		}
		p.Nodes[n] = Image{Path: "/iso/nodes/" + safeName(n) + ".iso", Node: n, Content: v, Size: v.Size(),
			ETag: `"` + shortHash(baseTag+"/"+PatchesDigest(patches)) + `"`, ModTime: st.ModTime(), PatchBytes: mem, Patches: patches}
		if opts.Progress != nil {
			opts.Progress(n, i+1, len(names))
		}
	}
	return p, nil
}

// ImageFor returns the image a node boots: its view when it has one, else the shared ISO.
func (p *Prepared) ImageFor(node string) Image {
	if img, ok := p.Nodes[node]; ok {
		return img
	}
	return p.Base
}

func fileIdentity(st os.FileInfo) string {
	return fmt.Sprintf("%s/%d/%d/%d", st.Name(), st.Size(), st.ModTime().UnixNano(), inode(st))
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// safeName keeps URL path segments to unreserved characters, so BMCs need no escaping.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
