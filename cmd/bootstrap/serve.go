package main

import (
	"fmt"
	"github.com/bootstrap-dev/bootstrap/internal/isoserver"
	"net"
	"net/url"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
)

// newServeCmd is `bootstrap serve`: the ISO HTTP server alone (the boot stage starts it itself).
func newServeCmd(g *globals) *cobra.Command {
	var listen, isoPath string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the agent ISO and the per-node ISO views over HTTP(S) until interrupted",
		Long: `Serves the agent ISO built by ` + "`bootstrap iso`" + ` (or --iso) and, with iso.perNode, each node's view
of it (its kernel arguments and ignition fragment overlaid while streaming, never copied), with
HEAD, byte ranges, ETags, and one log line per fetch. HTTPS when iso.tlsCert and iso.tlsKey are set.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := g.loadSite()
			if err != nil {
				return err
			}
			work, err := g.workDir()
			if err != nil {
				return err
			}
			release, err := lockWork(work, "serve")
			if err != nil {
				return err
			}
			defer release()
			if isoPath == "" {
				matches, _ := filepath.Glob(filepath.Join(work, agentiso.InstallerDir, "agent.*.iso"))
				if len(matches) != 1 {
					return fmt.Errorf("no agent ISO in %s: run `bootstrap iso -f %s` first, or pass --iso", filepath.Join(work, agentiso.InstallerDir), g.file)
				}
				isoPath = matches[0]
			}
			custom, err := agentiso.NodeCustomizations(s)
			if err != nil {
				return err
			}
			p, err := agentiso.Prepare(agentiso.PrepareOptions{BaseISO: isoPath, Nodes: custom})
			if err != nil {
				return err
			}
			defer p.Close()
			// Each node's URL of the shared ISO carries its token (boot gives them): serve those too.
			route, err := isoserver.TokenRoute(work, s)
			if err != nil {
				return err
			}
			j := jsonOut(cmd)
			h, err := agentiso.NewHandler(agentiso.HandlerOptions{Images: p.Images(), Route: route, OnFetch: func(f agentiso.Fetch) {
				if j != nil {
					j.line("fetch", f)
					return
				}
				fmt.Fprintf(g.stdout, "%s %s %s node=%s range=%q status=%d bytes=%d in %s\n",
					f.Remote, f.Method, f.Path, f.Node, f.Range, f.Status, f.Bytes, f.Duration.Round(1e6))
			}})
			if err != nil {
				return err
			}
			scheme := "http"
			if s.ISO.TLSCert != "" {
				scheme = "https"
			}
			base := s.ISO.BaseURL
			if listen == "" {
				listen = s.ISO.ServeAddress
			} else if base == (&url.URL{Scheme: scheme, Host: s.ISO.ServeAddress}).String() {
				// iso.baseURL only defaulted from iso.serveAddress, which --listen replaces
				base = ""
			}
			// Without iso.baseURL the URLs name the address actually bound (port 0 picks one).
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return agentiso.Serve(ctx, agentiso.ServeOptions{Addr: listen, Handler: h, TLSCert: s.ISO.TLSCert, TLSKey: s.ISO.TLSKey,
				Ready: func(a net.Addr) {
					if base == "" {
						base = scheme + "://" + a.String()
					}
					for _, img := range p.Images() {
						u, err := agentiso.URL(base, img)
						if err != nil {
							u = err.Error()
						}
						who := img.Node
						if who == "" {
							who = "(shared)"
						}
						fmt.Fprintf(g.stderr, "serving %-20s %s (%d bytes, etag %s)\n", who, u, img.Size, img.ETag)
					}
				}})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "listen address (default: iso.serveAddress)")
	cmd.Flags().StringVar(&isoPath, "iso", "", "agent ISO to serve (default: the one `bootstrap iso` built in the work dir)")
	return cmd
}
