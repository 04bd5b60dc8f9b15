package stages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/bootstrap-dev/bootstrap/internal/isoserver"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// DefaultISOName is the file the boot stage asks BMCs for under iso.baseURL when the iso stage
// published no URL.
const DefaultISOName = "agent.x86_64.iso"

// Boot is the stage that boots every node from the agent ISO over Redfish virtual media. Each
// node's steps are journaled through env.Steps (keys "node:<node>/<step>"), so a resumed run never
// powers a node whose power step was journaled; a new attempt (one more node, one node's BMC or
// ISO URL changed) keeps the steps of nodes whose own inputs did not change (bootcarry.go), so
// only new or changed nodes are acted on; env.Nodes limits it to some nodes (replay --node, which
// forces them).
type Boot struct {
	// Options are passed to bmc.BootAll (concurrency, retries, polls); tests shorten the waits.
	Options []bmc.Option
	// Serve, when set, makes sure the ISO HTTP server is up before any BMC is given a URL (the
	// server must outlive this stage: nodes read the ISO until install ends). It is not called
	// when iso.baseURL points elsewhere than iso.serveAddress (agentiso.ServedHere): the site's
	// web server serves the ISO. Nil means the ISO is always served elsewhere (`bootstrap serve`).
	Serve func(ctx context.Context, env *pipeline.Env) error
	// Evidence, when set, must confirm a node read its ISO after its power action (the ISO
	// server's fetch log); see bmc.WithBootEvidence. Nil trusts the BMC's read-back alone.
	Evidence func(ctx context.Context, node, url string, since time.Time) error
}

// BootOutput is the boot stage's journaled output: what was done to each BMC, for the report.
type BootOutput struct {
	Nodes []bmc.NodeResult `json:"nodes"`
	// Failed names the nodes that did not boot; replay them with `bootstrap replay boot --node`.
	Failed []string `json:"failed,omitempty"`
	// Insecure names the nodes whose BMC TLS was not verified (bmc.insecure: true).
	Insecure []string `json:"insecure,omitempty"`
}

// bootInputs is what the stage depends on: addresses, users, secret references (never values),
// the CA files' content hashes and the ISO URLs. (A rebuilt ISO makes the stage stale through the
// iso stage's output.) A node whose own inputs are unchanged keeps its boot across attempts (see
// nodeFingerprints in bootcarry.go).
type bootInputs struct {
	Nodes []bootNodeInput `json:"nodes"`
}

type bootNodeInput struct {
	Name     string `json:"name"`
	Address  string `json:"address"`
	Username string `json:"username"`
	Password string `json:"password"` // the reference ("env:NAME", "file:PATH")
	CA       string `json:"caSHA256,omitempty"`
	Insecure bool   `json:"insecure,omitempty"`
	ISOURL   string `json:"isoURL"`
}

// Name implements pipeline.Stage.
func (Boot) Name() string { return NameBoot }

// NodeScoped says replay --node may limit boot to some nodes.
func (Boot) NodeScoped() bool { return true }

// Summary implements pipeline.Stage.
func (Boot) Summary() string { return summary(NameBoot) }

// Inputs implements pipeline.Stage.
func (Boot) Inputs(env *pipeline.Env) (any, error) { return readBootInputs(env) }

// readBootInputs gathers the inputs of every node in the profile.
func readBootInputs(env *pipeline.Env) (bootInputs, error) {
	var in bootInputs
	urlFor, err := isoURLs(env)
	if err != nil {
		return in, err
	}
	for _, n := range env.Site.Nodes {
		ni := bootNodeInput{Name: n.Name, Address: n.BMC.Address, Username: n.BMC.Username,
			Password: n.BMC.Password.String(), Insecure: n.BMC.Insecure, ISOURL: urlFor(n.Name)}
		if n.BMC.CAFile != "" {
			b, err := fsroot.ReadFile(n.BMC.CAFile, fsroot.PEM)
			if err != nil {
				return in, fmt.Errorf("node %s: bmc.caFile: %w", n.Name, err)
			}
			sum := sha256.Sum256(b)
			ni.CA = hex.EncodeToString(sum[:])
		}
		in.Nodes = append(in.Nodes, ni)
	}
	return in, nil
}

// Run implements pipeline.Stage.
func (b Boot) Run(ctx context.Context, env *pipeline.Env) (any, error) {
	urlFor, err := isoURLs(env)
	if err != nil {
		return nil, err
	}
	here := agentiso.ServedHere(env.Site.ISO.ServeAddress, env.Site.ISO.BaseURL)
	switch {
	case b.Serve == nil:
	case here:
		if err := b.Serve(ctx, env); err != nil {
			return nil, fmt.Errorf("boot: start the ISO server: %w", err)
		}
	default:
		bootEmit(env, pipeline.Event{Kind: pipeline.Info, Message: "the ISO is served elsewhere (iso.baseURL " + env.Site.ISO.BaseURL +
			" is not this host's iso.serveAddress " + env.Site.ISO.ServeAddress + "): no local ISO server is started and no local build is needed"})
	}
	targets, out := bootTargets(env)
	for _, t := range targets {
		if u, err := url.Parse(urlFor(t.Node)); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("boot: node %s: ISO URL %q is not an http(s) URL a BMC can fetch: set iso.baseURL (e.g. http://10.0.0.5:8080)", t.Node, urlFor(t.Node))
		}
	}
	checkISOReachable(ctx, env, targets, urlFor)
	for _, n := range out.Insecure {
		bootEmit(env, pipeline.Event{Kind: pipeline.Warning, Node: n,
			Message: "BMC TLS verification is off for node " + n + " (bmc.insecure: true)"})
	}
	journal, err := b.journal(env, targets, b.recheck(ctx, env, targets, urlFor))
	if err != nil {
		return nil, err
	}
	var done atomic.Int64
	total := int64(len(targets))
	progress := func(p bmc.Progress) {
		if !p.Done {
			bootEmit(env, pipeline.Event{Kind: pipeline.Info, Node: p.Node, Step: p.Step, Message: p.Step + "…"})
			return
		}
		msg := p.Step + " done"
		switch {
		case p.Skipped && p.ByRead:
			msg = p.Step + " already done (verified by read-back)"
		case p.Skipped:
			msg = p.Step + " already done (journaled)"
		}
		if p.Message != "" {
			msg += ": " + p.Message
		}
		bootEmit(env, pipeline.Event{Kind: pipeline.StepDone, Node: p.Node, Step: p.Step, Message: msg})
		if p.Step == bmc.StepConfirm && strings.HasPrefix(p.Message, bmc.UnverifiedPrefix) {
			// No evidence the node booted its ISO: said where a person looks, not only journaled.
			bootEmit(env, pipeline.Event{Kind: pipeline.Warning, Node: p.Node, Message: "node " + p.Node + " " + p.Message})
		}
		if p.Step == bmc.StepConfirm {
			bootEmit(env, pipeline.Event{Kind: pipeline.Progress, Node: p.Node, Done: done.Add(1), DoneTotal: total, Unit: "nodes"})
		}
	}
	opts := append(append(profileBootOptions(env), bmc.WithProgress(progress)), b.Options...)
	if b.Evidence != nil && (here || b.Serve == nil) {
		// The fetch log sees the reads only of the server this process runs.
		opts = append(opts, bmc.WithBootEvidence(b.Evidence))
	}
	res, err := bmc.BootAll(ctx, targets, urlFor, journal, opts...)
	out.Nodes, out.Failed = res.Nodes, res.Failed
	if err != nil {
		return out, fmt.Errorf("boot: %d of %d node(s) failed (%s); fix and run `bootstrap replay boot --node NAME`: %w",
			len(res.Failed), len(targets), strings.Join(res.Failed, ", "), err)
	}
	return out, nil
}

// Verify implements pipeline.Verifier: every node still shows the ISO inserted and power on.
func (b Boot) Verify(ctx context.Context, env *pipeline.Env) error {
	urlFor, err := isoURLs(env)
	if err != nil {
		return err
	}
	targets, _ := bootTargets(env)
	// Nodes booted with a persistent override are handed over to their disk by the install
	// stage (override off, ISO ejected): that state verifies too.
	own, _, err := BootOutputKey.Read(env)
	if err != nil {
		return err
	}
	persistent := map[string]bool{}
	for _, n := range own.Nodes {
		persistent[n.Node] = n.Persistent
	}
	opts := append(profileBootOptions(env), bmc.WithHandedOver(func(n string) bool { return persistent[n] }))
	return bmc.VerifyAll(ctx, targets, urlFor, append(opts, b.Options...)...)
}

// Plan implements pipeline.Planner.
func (Boot) Plan(_ context.Context, env *pipeline.Env) ([]string, error) {
	urlFor, err := isoURLs(env)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, n := range env.Site.Nodes {
		if env.WantNode(n.Name) {
			lines = append(lines, fmt.Sprintf("node %s: BMC %s: eject stale media, insert %s, one-time UEFI boot from the virtual CD, power on or restart",
				n.Name, n.BMC.Address, urlFor(n.Name)))
		}
	}
	return lines, nil
}

// isoCheckTimeout bounds the jump host's check of each ISO URL: a server on the local network
// answers a HEAD in milliseconds; a URL that takes longer would fail the BMCs anyway.
const isoCheckTimeout = 3 * time.Second

// checkISOReachable asks every distinct ISO URL for its headers from the jump host, all at once,
// and warns about each that does not answer: every BMC would then fail to fetch it after a slow
// timeout of its own.
func checkISOReachable(ctx context.Context, env *pipeline.Env, targets []bmc.Target, urlFor func(string) string) {
	hc := &http.Client{Timeout: isoCheckTimeout, Transport: &http.Transport{Proxy: nil}}
	defer hc.CloseIdleConnections()
	var urls []string
	seen := map[string]bool{}
	for _, t := range targets {
		if u := urlFor(t.Node); !seen[u] {
			seen[u] = true
			urls = append(urls, u)
		}
	}
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
			if err != nil {
				bootEmit(env, pipeline.Event{Kind: pipeline.Warning, Message: fmt.Sprintf("ISO URL %s: %v", u, err)})
				return
			}
			resp, err := hc.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return
				}
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			}
			bootEmit(env, pipeline.Event{Kind: pipeline.Warning, Message: fmt.Sprintf(
				"the ISO at %s does not answer from the jump host (%v): is it being served (by this run, by `bootstrap serve`, or by the web server behind iso.baseURL)? The BMCs will fail to fetch it", u, err)})
		}()
	}
	wg.Wait()
}

// isoURLs returns each node's ISO URL: the iso stage's per-node or shared URL when it published
// one, else iso.baseURL (default http://<serveAddress>) + "/agent.x86_64.iso". A shared ISO
// served here carries the node's token in its path, so each read names its node.
func isoURLs(env *pipeline.Env) (func(string) string, error) {
	iso, err := readISOOutput(env)
	if err != nil {
		return nil, err
	}
	urlFor := iso.urlFor(env.Site)
	if env.WorkDir == "" || !agentiso.ServedHere(env.Site.ISO.ServeAddress, env.Site.ISO.BaseURL) {
		return urlFor, nil // served elsewhere, or no work dir to keep the token key in
	}
	// A work dir whose boot succeeded before tokens existed keeps its URLs: a new URL would make
	// boot power-cycle nodes that may be installing.
	if _, booted := env.Outputs[NameBoot]; booted && !isoserver.HasTokenKey(env.WorkDir) {
		return urlFor, nil
	}
	key, err := isoserver.TokenKey(env.WorkDir)
	if err != nil {
		return nil, err
	}
	return func(node string) string {
		u := urlFor(node)
		if n, ok := iso.Nodes[node]; ok && n.URL != "" {
			return u // the node's own view names it already
		}
		return isoserver.TokenURL(u, key, node) // the shared ISO: the token names the node (internal/isoserver/token.go)
	}, nil
}

// urlFor returns the URL each node's BMC is given: the node's own view, else the shared ISO,
// else iso.baseURL/DefaultISOName.
func (iso ISOOutput) urlFor(s *site.Site) func(string) string {
	base := strings.TrimRight(s.ISO.BaseURL, "/")
	if base == "" && s.ISO.ServeAddress != "" {
		base = "http://" + s.ISO.ServeAddress
	}
	fallback := base + "/" + DefaultISOName
	return func(node string) string {
		if n, ok := iso.Nodes[node]; ok && n.URL != "" {
			return n.URL
		}
		if iso.URL != "" {
			return iso.URL
		}
		return fallback
	}
}

// readISOOutput reads the iso stage's output (empty when it has none).
func readISOOutput(env *pipeline.Env) (ISOOutput, error) {
	iso, _, err := ISOOutputKey.Read(env)
	if err != nil {
		return iso, fmt.Errorf("read the iso stage's output: %w", err)
	}
	return iso, nil
}

// bootTargets turns the wanted nodes into bmc targets; passwords are read when the BMC
// connection opens, never before.
func bootTargets(env *pipeline.Env) ([]bmc.Target, BootOutput) {
	var out BootOutput
	var targets []bmc.Target
	for _, n := range env.Site.Nodes {
		if !env.WantNode(n.Name) {
			continue
		}
		ref := n.BMC.Password
		targets = append(targets, bmc.Target{
			Node: n.Name, Address: n.BMC.Address, Username: n.BMC.Username, BootMAC: n.BootMAC, Vendor: n.BMC.Vendor,
			CAFile: n.BMC.CAFile, Insecure: n.BMC.Insecure,
			Password: func() (string, error) {
				b, err := site.ReadSecret(ref)
				return string(b), err
			},
		})
		if n.BMC.Insecure {
			out.Insecure = append(out.Insecure, n.Name)
		}
	}
	return targets, out
}

func bootEmit(env *pipeline.Env, e pipeline.Event) {
	if env.Events == nil {
		return
	}
	e.Time = time.Now()
	e.Stage = NameBoot
	env.Events(e)
}

// profileBootOptions turns the profile's boot section into bmc options; the stage's own Options
// come after them and win (tests shorten waits that way). Values were validated at load; a
// field left empty (a profile built in code without SetDefaults) keeps bmc's default.
func profileBootOptions(env *pipeline.Env) []bmc.Option {
	if env.Site == nil {
		return nil
	}
	b := env.Site.Boot
	var opts []bmc.Option
	if b.Parallel > 0 {
		opts = append(opts, bmc.WithConcurrency(b.Parallel))
	}
	if d, err := time.ParseDuration(b.ConfirmTimeout); err == nil && d > 0 {
		opts = append(opts, bmc.WithConfirmTimeout(d))
	}
	if d, err := time.ParseDuration(b.ResumeGrace); err == nil && d > 0 {
		opts = append(opts, bmc.WithResumeGrace(d))
	}
	return opts
}
