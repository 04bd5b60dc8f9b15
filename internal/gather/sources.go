package gather

import (
	"context"
	"fmt"
	"io"
	"path"
	"sync"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// File collects a local file (the bootstrap journal).
type File struct {
	// Path on the jump host; As is the name in the tarball.
	Path, As string
}

// Name implements Source.
func (f File) Name() string { return f.As }

// Collect implements Source.
func (f File) Collect(_ context.Context, w io.Writer) error {
	r, err := fsroot.OpenFile(f.Path, fsroot.Stream)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(w, r)
	return err
}

// Command is one remote command and the file its output becomes.
type Command struct {
	File string
	Cmd  string
}

// DefaultCommands are what the agent-based install's support articles ask for: the journals of the
// agent, assisted-service (rendezvous host only; elsewhere the unit is absent), bootkube and
// kubelet, and agent-gather's archive where the tool is present (RHCOS agent images ship it).
// core is in the systemd-journal group on RHCOS, so journalctl needs no sudo; agent-gather does.
func DefaultCommands() []Command {
	return []Command{
		{"agent.log", "journalctl --no-pager -b -u agent.service"},
		{"assisted-service.log", "journalctl --no-pager -b -u assisted-service.service"},
		{"bootkube.log", "journalctl --no-pager -b -u bootkube.service"},
		{"kubelet.log", "journalctl --no-pager -b -u kubelet.service"},
		{"agent-gather.tar.xz", "if command -v agent-gather >/dev/null 2>&1; then sudo -n agent-gather -O; else echo 'agent-gather is not present on this node' >&2; exit 127; fi"},
	}
}

// Node is one node to collect from.
type Node struct {
	Name    string
	Address string
}

// NodeSources returns one Source per command per node, under nodes/<name>/. The sources of a node
// share one connection, dialled on first use; a node that cannot be reached fails each of its
// sources with the same error.
func NodeSources(d *Dialer, nodes []Node, cmds []Command) []Source {
	var out []Source
	for _, n := range nodes {
		conn := &lazyConn{d: d, addr: n.Address}
		for _, c := range cmds {
			out = append(out, &remote{node: n.Name, conn: conn, cmd: c})
		}
	}
	return out
}

type lazyConn struct {
	d    *Dialer
	addr string
	once sync.Once
	c    *Client
	err  error
}

func (l *lazyConn) get(ctx context.Context) (*Client, error) {
	l.once.Do(func() { l.c, l.err = l.d.Dial(ctx, l.addr) })
	return l.c, l.err
}

type remote struct {
	node string
	conn *lazyConn
	cmd  Command
}

func (r *remote) Name() string { return path.Join("nodes", r.node, r.cmd.File) }

func (r *remote) Collect(ctx context.Context, w io.Writer) error {
	c, err := r.conn.get(ctx)
	if err != nil {
		return err
	}
	if err := c.Run(ctx, r.cmd.Cmd, w); err != nil {
		return fmt.Errorf("node %s: %w", r.node, err)
	}
	return nil
}

// Close closes every connection NodeSources opened.
func Close(sources []Source) {
	seen := map[*lazyConn]bool{}
	for _, s := range sources {
		if r, ok := s.(*remote); ok && !seen[r.conn] {
			seen[r.conn] = true
			if r.conn.c != nil {
				r.conn.c.Close()
			}
		}
	}
}
