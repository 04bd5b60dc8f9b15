package stages

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// ISOServer serves the agent ISO (and the per-node views) from the process that runs the boot
// stage, for as long as that process lives: nodes keep reading the ISO until install ends, so
// the server must outlive the stage. It also keeps the fetch log, the witness that a node really
// booted from its ISO after its power action (bmc.WithBootEvidence). One value serves a whole run;
// Ensure is idempotent.
type ISOServer struct {
	mu      sync.Mutex
	started bool
	fetches []agentiso.Fetch
}

// maxFetches bounds the fetch log kept in memory (a boot reads a few hundred ranges per node).
const maxFetches = 100_000

// Ensure starts the server unless it runs already. It serves the ISO the iso stage built, at
// iso.serveAddress, and returns once the listener is open.
func (s *ISOServer) Ensure(ctx context.Context, env *pipeline.Env) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return nil
	}
	out, ok, err := ISOOutputKey.Read(env)
	if err != nil {
		return fmt.Errorf("read the iso stage's output: %w", err)
	}
	if !ok || out.Build == nil || out.Build.ISO == "" {
		return errors.New("no agent ISO has been built: run `bootstrap run --until iso` first, or serve it elsewhere with `bootstrap serve`")
	}
	custom, err := agentiso.NodeCustomizations(env.Site)
	if err != nil {
		return err
	}
	p, err := agentiso.Prepare(agentiso.PrepareOptions{BaseISO: out.Build.ISO, BaseDigest: out.Build.SHA256, Nodes: custom})
	if err != nil {
		return err
	}
	h, err := agentiso.NewHandler(agentiso.HandlerOptions{Images: p.Images(), OnFetch: func(f agentiso.Fetch) {
		s.mu.Lock()
		if len(s.fetches) < maxFetches {
			s.fetches = append(s.fetches, f)
		}
		s.mu.Unlock()
		if env.Log != nil {
			env.Log.Info("iso fetch", "remote", f.Remote, "path", f.Path, "node", f.Node, "range", f.Range, "status", f.Status, "bytes", f.Bytes)
		}
	}})
	if err != nil {
		p.Close()
		return err
	}
	ready := make(chan net.Addr, 1)
	failed := make(chan error, 1)
	go func() {
		// The server lives as long as the process; the stage's cancellation does not stop it.
		err := agentiso.Serve(context.WithoutCancel(ctx), agentiso.ServeOptions{Addr: env.Site.ISO.ServeAddress, Handler: h,
			TLSCert: env.Site.ISO.TLSCert, TLSKey: env.Site.ISO.TLSKey, Ready: func(a net.Addr) { ready <- a }})
		p.Close()
		failed <- err
	}()
	select {
	case a := <-ready:
		s.started = true
		if env.Events != nil {
			env.Events(pipeline.Event{Time: time.Now(), Kind: pipeline.Info, Stage: NameBoot,
				Message: fmt.Sprintf("serving the agent ISO on %s (%s)", a, out.URL)})
		}
		return nil
	case err := <-failed:
		return fmt.Errorf("%w (is another `bootstrap serve` already listening on %s?)", err, env.Site.ISO.ServeAddress)
	}
}

// Evidence reports whether the node's ISO was read after since: a successful GET of the node's
// URL path (its own view, or the shared ISO) that transferred bytes. With per-node views the
// fetch names the node; with the shared ISO any reader of it counts, which is weaker evidence.
func (s *ISOServer) Evidence(_ context.Context, node, rawURL string, since time.Time) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.fetches {
		if f.Path == u.Path && (f.Node == "" || f.Node == node) && f.Method == "GET" &&
			f.Status < 300 && f.Bytes > 0 && !f.Time.Before(since) {
			return nil
		}
	}
	return fmt.Errorf("node %s has not read %s since %s", node, u.Path, since.Format(time.TimeOnly))
}
