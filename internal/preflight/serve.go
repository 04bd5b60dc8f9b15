package preflight

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// serveChecks checks that the jump host can listen where the boot stage will serve the agent
// ISO to the BMCs. Listening and closing at once changes nothing.
func serveChecks(s *site.Site, _ Options) []Check {
	addr := s.ISO.ServeAddress
	if addr == "" {
		return nil
	}
	return []Check{Func("iso serve address "+addr, CategoryJumpHost, func(ctx context.Context) Result {
		return checkListen(ctx, addr)
	})}
}

func checkListen(ctx context.Context, addr string) Result {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", addr)
	switch {
	case err == nil:
		l.Close()
		return Passf("the jump host can listen on %s", addr)
	case errors.Is(err, syscall.EADDRINUSE):
		return Failf(fmt.Sprintf("Stop what listens on %s (ss -ltnp 'sport = :PORT' names it; a `bootstrap serve` left running?) or change iso.serveAddress.", addr),
			"%s is taken by another process", addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return Failf("Set iso.serveAddress to an address of the jump host on the machine network (or 0.0.0.0:PORT).",
			"the jump host has no address %s", addr)
	case errors.Is(err, syscall.EACCES):
		return Failf("Run bootstrap as root, or serve on a port of 1024 or more.", "not allowed to listen on %s", addr)
	}
	return Failf("Fix iso.serveAddress (host:port).", "cannot listen on %s: %v", addr, err)
}
