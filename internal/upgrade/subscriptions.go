package upgrade

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

// SubscriptionMove is a Subscription a hop moves from the CatalogSource of the minor it leaves to
// the one of the minor it enters: a mirror names a catalog's CatalogSource after the catalog's tag
// (cs-<catalog>-v4-18, oc-mirror v2's generateCatalogSource), so the next minor's catalog is
// another CatalogSource, and a Subscription left on the old one keeps resolving from the old
// minor's catalog after the hop.
type SubscriptionMove struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Package   string `json:"package,omitempty"`
	From      string `json:"from"` // the CatalogSource spec.source names now
	To        string `json:"to"`   // the next minor's CatalogSource of the same catalog
	// SourceNamespace is where the To CatalogSource is looked for (the Subscription's own
	// spec.sourceNamespace, else openshift-marketplace, where the mirror's CatalogSources go);
	// the run prefers the namespace of the CatalogSource its mirror-config step applied.
	SourceNamespace string `json:"sourceNamespace"`
	Source          string `json:"source"` // why: the catalog and the two minors

	// bundle is the bundle installed when the Subscription moves, in the target minor's catalog
	// (nil when unknown): a hop with no operator step for it must still carry that catalog with
	// the bundle, or the target CatalogSource does not exist (Delta).
	bundle *stepBundle
}

// Subject is the Subscription as namespace/name.
func (m SubscriptionMove) Subject() string { return m.Namespace + "/" + m.Name }

// MarketplaceNamespace is where the mirror writes its CatalogSources (and OLM's global
// catalog namespace).
const MarketplaceNamespace = "openshift-marketplace"

// minorCatalog matches a CatalogSource name a mirror gave a catalog tagged v<major>.<minor>:
// cs-<catalog>-v<major>-<minor> (the tag's dots made dashes).
var minorCatalog = regexp.MustCompile(`^cs-(.+)-v(\d+)-(\d+)$`)

// stepVersion is the version the last of steps for subject installs, else v.
func stepVersion(steps []Step, subject string, v semver.Version) semver.Version {
	for _, s := range steps {
		if s.Subject == subject && s.bundle != nil {
			v = s.bundle.version
		}
	}
	return v
}

// minorCatalogName is the CatalogSource name of catalog for a minor ("4.19").
func minorCatalogName(catalog, minor string) string {
	return "cs-" + catalog + "-v" + strings.ReplaceAll(minor, ".", "-")
}

// planMoves names, per hop that changes minor, each Subscription whose CatalogSource is the
// mirror's one for the minor the hop leaves: it moves to the same catalog's CatalogSource for the
// minor the hop enters. A two-minor plan moves it twice (v4-17 -> v4-18, then v4-18 -> v4-19).
// Subscriptions on any other source (redhat-operators, whose image the cluster retags itself, or
// a site's own names) stay where they are.
func planMoves(p *Plan, c *Carried, st *State) {
	cs := &catalogs{c: c, cache: map[string]*declcfg.DeclarativeConfig{}, errs: map[string]error{}}
	cur := make([]string, len(st.Subscriptions))
	vers := make([]semver.Version, len(st.Subscriptions))
	for i, s := range st.Subscriptions {
		cur[i] = s.Source
		if csv := st.csv(s.Namespace, s.InstalledCSV); csv != nil {
			vers[i], _ = semver.ParseTolerant(csv.Version)
		}
	}
	for hi := range p.Hops {
		h := &p.Hops[hi]
		fm, tm := minorOfString(h.From), minorOfString(h.To)
		if fm == tm {
			continue
		}
		for i, s := range st.Subscriptions {
			subj := s.Package + " (" + s.Namespace + "/" + s.Name + ")"
			vers[i] = stepVersion(h.Before, subj, vers[i])
			after := stepVersion(h.After, subj, semver.Version{})
			m := minorCatalog.FindStringSubmatch(cur[i])
			if m == nil || m[2]+"."+m[3] != fm {
				if !after.EQ(semver.Version{}) {
					vers[i] = after
				}
				continue
			}
			to := minorCatalogName(m[1], tm)
			ns := s.SourceNamespace
			if ns == "" {
				ns = MarketplaceNamespace
			}
			h.Subscriptions = append(h.Subscriptions, SubscriptionMove{Namespace: s.Namespace, Name: s.Name, Package: s.Package,
				From: cur[i], To: to, SourceNamespace: ns,
				Source: fmt.Sprintf("CatalogSource %s is the mirror's catalog %s for %s (cs-<catalog>-v<major>-<minor>); %s is the same catalog for %s, applied by the hop's mirror-config step",
					cur[i], m[1], fm, to, tm)})
			if after.EQ(semver.Version{}) && !vers[i].EQ(semver.Version{}) { // no step of the hop carries the target catalog
				mv := &h.Subscriptions[len(h.Subscriptions)-1]
				mv.bundle = &stepBundle{source: to, pkg: s.Package, channel: s.Channel, version: vers[i]}
				dc, err := cs.get(tm, to)
				if dc == nil && err == nil { // carried under the name the state gives it (rel)
					dc, err = cs.get(tm, s.Source)
				}
				if dc != nil && err == nil {
					mv.bundle.defaultChannel = defaultChannel(dc, s.Package)
					if _, bs, miss := channelOf(dc, s.Package, s.Channel); miss == "" {
						for _, b := range bs {
							if b.Version.EQ(vers[i]) {
								mv.bundle.name, mv.bundle.image = b.Name, b.Image
							}
						}
					}
				}
			}
			if !after.EQ(semver.Version{}) {
				vers[i] = after
			}
			cur[i] = to
		}
	}
}
