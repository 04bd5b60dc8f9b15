package isoserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Server serves the agent ISO (and the per-node views) for as long as nodes may read it. The
// command's session owns it (cmd/bootstrap/session.go: stages.WithISOServer, Close when the
// process ends); the stages that need it — boot, and install, which nodes spend reading their
// live ISO — call Ensure (through stages.ServeISO), so a run resumed in install serves the ISO too. It also keeps the fetch log,
// the witness that a node really booted from its ISO after its power action
// (bmc.WithBootEvidence), and persists its reads in the work dir (ReadLog) so that a resumed run
// knows which nodes read their ISO before the previous process died. Ensure is idempotent.
type Server struct {
	mu      sync.Mutex
	started bool
	fetches []agentiso.Fetch
	stop    context.CancelFunc
	done    chan struct{}
	log     *os.File
	logged  map[string]time.Time // path+node → last read written to the log
	// bmcs maps each node to the addresses of its BMC: a BMC's virtual media read the ISO from
	// its own address, which tells one node's reads of a shared ISO from another's.
	bmcs map[string][]string
}

// bmcAddresses resolves every node's bmc.address host (best effort: a name that does not
// resolve is kept as is).
func bmcAddresses(nodes []site.Node) map[string][]string {
	out := map[string][]string{}
	for _, n := range nodes {
		host := n.BMC.Address
		if u, err := url.Parse(host); err == nil && u.Host != "" {
			host = u.Hostname()
		} else if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host == "" {
			continue
		}
		if _, err := netip.ParseAddr(host); err == nil {
			out[n.Name] = []string{host}
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		ips, _ := net.DefaultResolver.LookupHost(ctx, host)
		cancel()
		out[n.Name] = append(ips, host)
	}
	return out
}

// remoteHost is the address part of a fetch's remote "host:port".
func remoteHost(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}

// ReadLog is the file, in the work dir, where the ISO server appends the reads it served.
const ReadLog = "iso-reads.jsonl"

// readLogGap is how long a (path, node) reads before its next read is written to ReadLog: a
// boot reads hundreds of ranges in a burst, and the first read after a power action follows
// the server's POST, tens of seconds at least, so it is always written.
const readLogGap = 10 * time.Second

// Close stops the server (if started) and closes the read log.
func (s *Server) Close() {
	s.mu.Lock()
	stop, done, log := s.stop, s.done, s.log
	s.stop, s.log, s.started = nil, nil, false
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	if log != nil {
		_ = log.Close()
	}
}

// loadReads reads the reads an earlier process logged (a torn last line is ignored).
func (s *Server) loadReads(path string) {
	b, err := fsroot.ReadBeneath(path, fsroot.Log)
	if err != nil {
		return
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var f agentiso.Fetch
		if len(line) > 0 && json.Unmarshal(line, &f) == nil && len(s.fetches) < maxFetches {
			s.fetches = append(s.fetches, f)
		}
	}
}

// record keeps a fetch in memory and writes a successful read to the log (caller holds s.mu).
func (s *Server) record(f agentiso.Fetch) {
	if len(s.fetches) < maxFetches {
		s.fetches = append(s.fetches, f)
	}
	if s.log == nil || f.Method != "GET" || f.Status >= 300 || f.Bytes == 0 {
		return
	}
	key := f.Path + "\x00" + f.Node
	if last, ok := s.logged[key]; ok && f.Time.Sub(last) < readLogGap {
		return
	}
	s.logged[key] = f.Time
	line, err := json.Marshal(agentiso.Fetch{Time: f.Time, Remote: f.Remote, Method: f.Method, Path: f.Path, Node: f.Node, Status: f.Status, Bytes: f.Bytes})
	if err == nil {
		_, _ = s.log.Write(append(line, '\n'))
	}
}

// maxFetches bounds the fetch log kept in memory (a boot reads a few hundred ranges per node).
const maxFetches = 100_000

// Config is what Ensure serves: the ISO the iso stage built and the site it was built for.
type Config struct {
	// Site gives the nodes (their per-node views and BMC addresses) and iso.serveAddress,
	// iso.tlsCert and iso.tlsKey.
	Site *site.Site
	// WorkDir holds the read log (ReadLog) and the URL token key (TokenKeyFile); "" keeps neither.
	WorkDir string
	// ISO and SHA256 are the built agent ISO and its digest; URL is where nodes read it.
	ISO, SHA256, URL string
	// Log receives one debug record per fetch; nil discards them.
	Log *slog.Logger
	// OnServing, when set, is called once the listener is open, with a line saying where.
	OnServing func(msg string)
}

// ErrNoISO says that no agent ISO has been built here to serve.
var ErrNoISO = errors.New("no agent ISO has been built here: run `bootstrap run --until iso` first, or serve the ISO from another web server and set iso.baseURL to it (bootstrap then starts no server of its own)")

// Ensure starts the server unless it runs already. It serves c.ISO at iso.serveAddress and
// returns once the listener is open.
func (s *Server) Ensure(ctx context.Context, c Config) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return nil
	}
	if c.ISO == "" {
		return ErrNoISO
	}
	custom, err := agentiso.NodeCustomizations(c.Site)
	if err != nil {
		return err
	}
	p, err := agentiso.Prepare(agentiso.PrepareOptions{BaseISO: c.ISO, BaseDigest: c.SHA256, Nodes: custom})
	if err != nil {
		return err
	}
	var route func(string) (string, string, bool)
	if c.WorkDir != "" {
		if route, err = TokenRoute(c.WorkDir, c.Site); err != nil {
			p.Close()
			return err
		}
	}
	s.bmcs = bmcAddresses(c.Site.Nodes)
	logPath := filepath.Join(c.WorkDir, ReadLog)
	s.loadReads(logPath)
	if s.log, err = os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		p.Close()
		return fmt.Errorf("ISO read log: %w", err)
	}
	s.logged = map[string]time.Time{}
	h, err := agentiso.NewHandler(agentiso.HandlerOptions{Images: p.Images(), Route: route, OnFetch: func(f agentiso.Fetch) {
		s.mu.Lock()
		s.record(f)
		s.mu.Unlock()
		if c.Log != nil {
			c.Log.Info("iso fetch", "remote", f.Remote, "path", f.Path, "node", f.Node, "range", f.Range, "status", f.Status, "bytes", f.Bytes)
		}
	}})
	if err != nil {
		p.Close()
		return err
	}
	ready := make(chan net.Addr, 1)
	failed := make(chan error, 1)
	// The server lives until Close (the session's end); the stage's cancellation does not stop it.
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := agentiso.Serve(sctx, agentiso.ServeOptions{Addr: c.Site.ISO.ServeAddress, Handler: h,
			TLSCert: c.Site.ISO.TLSCert, TLSKey: c.Site.ISO.TLSKey, Ready: func(a net.Addr) { ready <- a }})
		p.Close()
		failed <- err
	}()
	select {
	case a := <-ready:
		s.started, s.stop, s.done = true, stop, done
		if c.OnServing != nil {
			c.OnServing(fmt.Sprintf("serving the agent ISO on %s (%s)", a, c.URL))
		}
		return nil
	case err := <-failed:
		stop()
		_ = s.log.Close()
		s.log = nil
		return fmt.Errorf("%w (is another `bootstrap serve` already listening on %s?)", err, c.Site.ISO.ServeAddress)
	}
}

// Evidence reports whether the node's ISO was read after since: a successful GET of the node's
// URL path (its own view, or the shared ISO) that transferred bytes. With per-node views the
// fetch names the node. A read of the shared ISO counts when it came from the node's BMC address
// — as soon as any read came from a BMC address, the BMCs read from their own, and another
// node's read must not stand for this one's; until then any reader counts (weaker evidence, for
// BMCs behind NAT or fetching from another interface).
func (s *Server) Evidence(_ context.Context, node, rawURL string, since time.Time) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fromBMC := map[string]string{} // address → node
	for n, as := range s.bmcs {
		for _, a := range as {
			fromBMC[a] = n
		}
	}
	bySource := false
	for _, f := range s.fetches {
		if _, ok := fromBMC[remoteHost(f.Remote)]; ok && f.Node == "" {
			bySource = true
			break
		}
	}
	for _, f := range s.fetches {
		if f.Path != u.Path || f.Method != "GET" || f.Status >= 300 || f.Bytes == 0 || f.Time.Before(since) {
			continue
		}
		switch {
		case f.Node != "":
			if f.Node == node {
				return nil
			}
		case !bySource || fromBMC[remoteHost(f.Remote)] == node:
			return nil
		}
	}
	return fmt.Errorf("node %s has not read %s since %s", node, u.Path, since.Format(time.TimeOnly))
}
