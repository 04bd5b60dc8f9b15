package site

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxUnavailable is a MachineConfigPool spec.maxUnavailable: a count of nodes, or a percent of
// the pool's nodes (rounded down by the machine-config operator, at least one node).
type MaxUnavailable struct {
	N       int  // the count, or the percent
	Percent bool // N is a percent of the pool
}

// String is the value as the pool's spec takes it: "2" or "25%".
func (m MaxUnavailable) String() string {
	if m.Percent {
		return strconv.Itoa(m.N) + "%"
	}
	return strconv.Itoa(m.N)
}

// MaxUnavailableRemedy says what a maxUnavailable may be; the profile's check and the
// --max-unavailable flag give it with the error of ParseMaxUnavailable.
const MaxUnavailableRemedy = "write a count of at least 1 (2) or a percent of the pool from 1% to 100% (25%), " +
	"as MachineConfigPool spec.maxUnavailable takes it; leave it out to keep each pool's own (1 unless set)"

// ParseMaxUnavailable reads a maxUnavailable as MachineConfigPool spec.maxUnavailable takes it: a
// count of at least 1 or a percent from 1% to 100%. It is the one reading of the value, for the
// profile's upgrade.maxUnavailable and `upgrade run --max-unavailable` alike; the error says what
// is wrong with v, the caller names the field or flag (and gives MaxUnavailableRemedy).
func ParseMaxUnavailable(v string) (MaxUnavailable, error) {
	s := strings.TrimSpace(v)
	num, pct := strings.CutSuffix(s, "%")
	n, err := strconv.Atoi(num)
	switch {
	case num == "" || num[0] < '0' || num[0] > '9' || err != nil:
		return MaxUnavailable{}, fmt.Errorf("%q is neither a count of nodes nor a percent of the pool", v)
	case n < 1:
		return MaxUnavailable{}, fmt.Errorf("%q is less than 1: no node of a pool could update", v)
	case pct && n > 100:
		return MaxUnavailable{}, fmt.Errorf("%q is more than 100%% of the pool", v)
	}
	return MaxUnavailable{N: n, Percent: pct}, nil
}

// upgrade checks the upgrade section: the soak a duration, maxUnavailable what a pool takes, the
// canary a worker of nodes (a GPU one where there are), the canary pool a new pool's name.
func (c *checker) upgrade() {
	u := c.s.Upgrade
	if u.Soak != "" {
		fix := "write a Go duration such as 30m or 1h30m (units h, m, s; the default is " + DefaultUpgradeSoak + ")"
		if d, err := time.ParseDuration(u.Soak); err != nil {
			c.err("upgrade.soak", fmt.Sprintf("%q is not a duration", u.Soak), fix)
		} else if d < 0 {
			c.err("upgrade.soak", fmt.Sprintf("%q is negative: the soak is how long to wait", u.Soak), fix)
		} else if d == 0 {
			c.warn("upgrade.soak", "no soak: the other pools are unpaused as soon as the canary is updated",
				"let the canary run "+DefaultUpgradeSoak+" or more on a production site, so a bad OS or driver build shows on one node, not on all")
		}
	}
	if u.MaxUnavailable != "" {
		if _, err := ParseMaxUnavailable(u.MaxUnavailable); err != nil {
			c.err("upgrade.maxUnavailable", "maxUnavailable "+err.Error(), MaxUnavailableRemedy)
		}
	}
	if u.Canary != "" {
		c.canary(u.Canary)
	}
	switch p := u.CanaryPool; {
	case p == "":
	case p == RoleMaster || p == RoleWorker:
		c.err("upgrade.canaryPool", fmt.Sprintf("%q is one of the cluster's own pools: the canary pool is made for the upgrade and removed when a hop closes", p),
			"name a pool of its own, e.g. "+DefaultCanaryPool)
	case !k8sSubdomain(p):
		c.err("upgrade.canaryPool", fmt.Sprintf("%q is not a Kubernetes object name", p),
			"use lower-case letters, digits, '-' and '.', e.g. "+DefaultCanaryPool)
	}
}

// canary checks that the canary is a worker of the profile, a GPU worker when the site has any.
func (c *checker) canary(name string) {
	var workers, gpus []string
	var node *Node
	for i, n := range c.s.Nodes {
		if n.Role == RoleWorker {
			workers = append(workers, n.Name)
			if n.GPU {
				gpus = append(gpus, n.Name)
			}
		}
		if n.Name == name {
			node = &c.s.Nodes[i]
		}
	}
	pick := "name a worker of nodes: " + listOr(workers, "the profile has none, so leave canary out: the control plane updates alone")
	if len(gpus) > 0 {
		pick = "name a GPU worker of nodes: " + strings.Join(gpus, ", ")
	}
	var names []string
	for _, n := range c.s.Nodes {
		names = append(names, n.Name)
	}
	switch {
	case node == nil:
		c.err("upgrade.canary", fmt.Sprintf("%q is not a node of this profile%s", name, didYouMean(name, names...)), pick)
	case node.Role == RoleMaster:
		c.err("upgrade.canary", fmt.Sprintf("%s is a control-plane node: the control plane updates with the cluster, the canary is the first worker to follow it", name), pick)
	case node.Role != RoleWorker:
		// its role is an error of its own
	case !node.GPU && len(gpus) > 0:
		c.warn("upgrade.canary", fmt.Sprintf("%s is not a GPU node: the GPU workers are what an update risks most (their driver is rebuilt for each OS build)", name), pick)
	}
}

// listOr joins names, or is none when there are none.
func listOr(names []string, none string) string {
	if len(names) == 0 {
		return none
	}
	return strings.Join(names, ", ")
}
