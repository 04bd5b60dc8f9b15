package preflight

import (
	"context"
	"fmt"
	"time"

	"github.com/beevik/ntp"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

func ntpChecks(s *site.Site, o Options) []Check {
	if len(s.Cluster.NTPSources) == 0 {
		return []Check{Func("ntp sources", CategoryNTP, func(context.Context) finding.Finding {
			return finding.Warnf("List the site's NTP servers in cluster.ntpSources; nodes with unsynchronised clocks fail to install.",
				"cluster.ntpSources is empty: the nodes will try public pools, unreachable in a disconnected site")
		})}
	}
	var out []Check
	for _, src := range s.Cluster.NTPSources {
		out = append(out, Func("ntp "+src, CategoryNTP, func(ctx context.Context) finding.Finding {
			return checkNTP(ctx, src, o.MaxClockOffset)
		}))
	}
	return out
}

// checkNTP sends one SNTP query to src ("host" or "host:port") and compares the jump host's
// clock with the answer.
func checkNTP(ctx context.Context, src string, tolerance time.Duration) finding.Finding {
	timeout := 5 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	if timeout <= 0 {
		return finding.Failf("Raise the preflight timeout.", "%s: no time left to query", src)
	}
	resp, err := ntp.QueryWithOptions(src, ntp.QueryOptions{Timeout: timeout})
	if err != nil {
		return finding.Failf(fmt.Sprintf("Check that %s serves NTP (UDP 123 unless a port is given) and that the jump host may reach it.", src),
			"%s does not answer: %v", src, err)
	}
	if err := resp.Validate(); err != nil {
		return finding.Failf(fmt.Sprintf("Fix %s's own synchronisation, or list another source in cluster.ntpSources.", src),
			"%s answers but its time is unusable (stratum %d): %v", src, resp.Stratum, err)
	}
	off := resp.ClockOffset
	detail := fmt.Sprintf("offset %s, stratum %d, rtt %s", signed(off), resp.Stratum, resp.RTT.Round(time.Microsecond))
	if off > tolerance || off < -tolerance {
		return finding.Failf(fmt.Sprintf("Set the jump host clock from %s (chronyc makestep, or timedatectl set-time): the agent ISO's certificates are stamped with it.", src),
			"local clock is %s %s, tolerance ±%s (%s)", skew(off), src, tolerance, detail)
	}
	return finding.Passf("%s: %s", src, detail)
}

// skew says which way the local clock is off; ClockOffset is what must be added to it.
func skew(off time.Duration) string {
	way := " behind"
	if off < 0 {
		off, way = -off, " ahead of"
	}
	if off >= 10*time.Second {
		return off.Round(100*time.Millisecond).String() + way
	}
	return off.Round(time.Millisecond).String() + way
}

// signed formats a duration with an explicit sign, rounded for reading.
func signed(d time.Duration) string {
	r := d.Round(time.Millisecond)
	if d > -time.Millisecond && d < time.Millisecond {
		r = d.Round(time.Microsecond)
	}
	if d >= 0 {
		return "+" + r.String()
	}
	return r.String()
}
