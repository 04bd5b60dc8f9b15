package preflight

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// On loopback every address is local, so TestVIPInUse cannot show the probe on a real link.
// This test builds one in two network namespaces it creates (nothing changes in the host's
// namespace): the jump host in "a" (10.250.0.1/24) and a site host in "b" joined by a veth pair.
// Host b holds 10.250.0.2 (no service), 10.250.0.4 (a TCP service) and, off-link behind a route,
// 10.251.0.5. Host "c", on a second link, holds 10.252.0.5 off-link and ignores ICMP echo. The
// probe runs in "a", as a child process, exactly as on a jump host.
//
// Needs root and iproute2 (ip netns); elsewhere it is skipped, saying why.
func TestVIPOnRealLink(t *testing.T) {
	if os.Getenv("PREFLIGHT_NETNS_ROLE") != "" {
		return // a helper process; see TestNetnsHelper
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip")
	}
	id := fmt.Sprintf("%d", os.Getpid()%100000)
	a, b, c := "pfa"+id, "pfb"+id, "pfc"+id
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	for _, ns := range []string{a, b, c} {
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			t.Skipf("cannot create a network namespace here: %v: %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	}
	ip("-n", a, "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", b)
	ip("-n", a, "addr", "add", "10.250.0.1/24", "dev", "va")
	ip("-n", b, "addr", "add", "10.250.0.2/24", "dev", "vb")
	ip("-n", b, "addr", "add", "10.250.0.4/24", "dev", "vb")
	ip("-n", b, "addr", "add", "10.251.0.5/32", "dev", "lo")
	ip("-n", a, "link", "add", "va2", "type", "veth", "peer", "name", "vc", "netns", c)
	ip("-n", a, "addr", "add", "10.250.1.1/24", "dev", "va2")
	ip("-n", c, "addr", "add", "10.250.1.2/24", "dev", "vc")
	ip("-n", c, "addr", "add", "10.252.0.5/32", "dev", "lo")
	for _, l := range [][2]string{{a, "va"}, {a, "va2"}, {a, "lo"}, {b, "vb"}, {b, "lo"}, {c, "vc"}, {c, "lo"}} {
		ip("-n", l[0], "link", "set", l[1], "up")
	}
	ip("-n", a, "route", "add", "10.251.0.0/24", "via", "10.250.0.2")
	ip("-n", a, "route", "add", "10.252.0.0/24", "via", "10.250.1.2")
	if out, err := exec.Command("ip", "netns", "exec", c, "sysctl", "-qw", "net.ipv4.icmp_echo_ignore_all=1").CombinedOutput(); err != nil {
		t.Fatalf("sysctl in %s: %v: %s", c, err, out)
	}

	const port = "7777"
	srv := exec.Command("ip", "netns", "exec", b, os.Args[0], "-test.run=^TestNetnsHelper$")
	srv.Env = append(os.Environ(), "PREFLIGHT_NETNS_ROLE=listen", "PREFLIGHT_NETNS_ADDR=10.250.0.4:"+port)
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); !strings.HasPrefix(line, "listening") {
		t.Fatalf("listener in %s did not start: %q", b, line)
	}

	probe := exec.Command("ip", "netns", "exec", a, os.Args[0], "-test.run=^TestNetnsHelper$")
	probe.Env = append(os.Environ(), "PREFLIGHT_NETNS_ROLE=probe", "PREFLIGHT_NETNS_PORT="+port)
	out, err := probe.Output()
	if err != nil {
		t.Fatalf("probe in %s: %v\n%s", a, err, out)
	}
	var got map[string]finding.Finding
	if err := json.Unmarshal(out[strings.IndexByte(string(out), '{'):strings.LastIndexByte(string(out), '}')+1], &got); err != nil {
		t.Fatalf("probe output: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		vip  string
		want finding.Status
		in   string
	}{
		{"10.250.0.4", finding.Fail, "accepted TCP on port " + port}, // a service answers
		{"10.250.0.2", finding.Fail, "answered ARP"},                 // a host that serves nothing still answers ARP
		{"10.251.0.5", finding.Fail, "answered ICMP echo"},           // off-link: no ARP, but it answers ping
		{"10.252.0.5", finding.Warn, "reset TCP"},                    // off-link, ignores ping: only its TCP reset shows it
		{"10.250.0.3", finding.Pass, "no ICMP echo reply"},           // nobody there
		{"10.251.0.6", finding.Pass, "no ICMP echo reply"},           // off-link and silent: invisible (the documented limit)
	} {
		r, ok := got[tc.vip]
		if !ok {
			t.Errorf("%s: no result in %s", tc.vip, out)
			continue
		}
		if r.Status != tc.want || !strings.Contains(r.Message, tc.in) {
			t.Errorf("%s: %s %q, want %s containing %q", tc.vip, r.Status, r.Message, tc.want, tc.in)
		}
	}
}

// TestNetnsHelper is the child process of TestVIPOnRealLink; without its environment it does
// nothing.
func TestNetnsHelper(t *testing.T) {
	switch os.Getenv("PREFLIGHT_NETNS_ROLE") {
	case "listen":
		l, err := net.Listen("tcp", os.Getenv("PREFLIGHT_NETNS_ADDR"))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("listening")
		for {
			c, err := l.Accept()
			if err != nil {
				os.Exit(0)
			}
			c.Close()
		}
	case "probe":
		var port int
		fmt.Sscan(os.Getenv("PREFLIGHT_NETNS_PORT"), &port)
		vips := []string{"10.250.0.4", "10.250.0.2", "10.251.0.5", "10.252.0.5", "10.250.0.3", "10.251.0.6"}
		s := &site.Site{Cluster: site.Cluster{APIVIPs: vips}}
		o := Options{VIPPorts: []int{port}, ProbeTimeout: 500 * time.Millisecond}.withDefaults()
		out := map[string]finding.Finding{}
		for _, c := range vipChecks(s, o) {
			r := c.Run(context.Background())
			out[strings.Fields(c.Name())[1]] = r
		}
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
	}
}
