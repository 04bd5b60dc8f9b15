package upgradetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// Releases of the standard fixture, oldest first.
var Releases = []string{"4.16.20", "4.16.30", "4.17.10", "4.17.15", "4.17.20",
	"4.18.20", "4.18.22", "4.18.24", "4.18.30", "4.19.5"}

// BareMetalQuery is a PromQL rule no captured state can decide (it needs the cluster's metrics).
const BareMetalQuery = `cluster_infrastructure_provider{_id="",type="BareMetal"}`

// Standard writes the standard carried graph:
//
//	stable-4.16: 4.16.20 -> 4.16.30
//	stable-4.17: 4.16.30 -> 4.17.20, 4.17.10 -> 4.17.15, 4.17.10 -> 4.17.20
//	stable-4.18: 4.17.15 -> 4.18.20 (conditional by blocked-edges: BareMetalRisk, undecidable)
//	             4.17.20 -> 4.18.22 (NVIDIA says do not use 4.18.22)
//	             4.17.20 -> 4.18.24 (conditional: GPUOperatorRisk, decided by the CSVs)
//	             4.17.20 -> 4.18.30 (removed by blocked-edges: Regression, no rules)
//	             4.18.20|22|24 -> 4.18.30
//	eus-4.18:    4.16.30 -> 4.17.20 -> 4.18.24 (conditional) -> 4.18.30
//	stable-4.19: 4.18.30 -> 4.19.5
//
// with the graph-data (version, channels, blocked-edges) and, when withContent, a content.json
// carrying every release. skip leaves out channels (a missing intermediate).
func Standard(t testing.TB, withContent bool, skip ...string) *Dir {
	d := NewDir(t)
	gs := map[string]*Graph{
		"stable-4.16": new(Graph).Nodes("4.16.20", "4.16.30").Edge("4.16.20", "4.16.30"),
		"stable-4.17": new(Graph).Nodes("4.16.30", "4.17.10", "4.17.15", "4.17.20").
			Edge("4.16.30", "4.17.20").Edge("4.17.10", "4.17.15").Edge("4.17.10", "4.17.20"),
		"stable-4.18": new(Graph).Nodes("4.17.10", "4.17.15", "4.17.20", "4.18.20", "4.18.22", "4.18.24", "4.18.30").
			Edge("4.17.15", "4.18.20").Edge("4.17.20", "4.18.22").Edge("4.17.20", "4.18.30").
			Edge("4.18.20", "4.18.30").Edge("4.18.22", "4.18.30").Edge("4.18.24", "4.18.30").
			Cond("4.17.20", "4.18.24", GPURisk("GPUOperatorRisk")),
		"eus-4.18": new(Graph).Nodes("4.16.30", "4.17.20", "4.18.24", "4.18.30").
			Edge("4.16.30", "4.17.20").Edge("4.18.24", "4.18.30").
			Cond("4.17.20", "4.18.24", GPURisk("GPUOperatorRisk")),
		"stable-4.19": new(Graph).Nodes("4.18.30", "4.19.5").Edge("4.18.30", "4.19.5"),
	}
	for ch, g := range gs {
		if !contains(skip, ch) {
			d.Graph(ch, g)
		}
	}
	d.Write("graph-data/version", []byte("1.2.0\n"))
	if !contains(skip, "eus-4.18") {
		d.Write("graph-data/channels/eus-4.18.yaml", []byte("name: eus-4.18\nversions:\n- 4.16.30\n- 4.17.20\n- 4.18.24\n- 4.18.30\n"))
	}
	d.Write("graph-data/channels/stable-4.18.yaml", []byte("feeder:\n  delay: PT48H\n  filter: 4\\.1[78]\\.[0-9]+\n  name: fast-4.18\nname: stable-4.18\nversions:\n- 4.17.10\n- 4.17.15\n- 4.17.20\n- 4.18.20\n- 4.18.22\n- 4.18.24\n- 4.18.30\n"))
	d.Write("graph-data/blocked-edges/4.18.30-Regression.yaml", []byte("to: 4.18.30\nfrom: 4[.]17[.].*\nurl: https://issues.example.com/Regression\nname: Regression\nmessage: |-\n  Updates from 4.17 straight to 4.18.30 regress the ingress.\n"))
	d.Write("graph-data/blocked-edges/4.18.20-BareMetalRisk.yaml", []byte("to: 4.18.20\nfrom: 4[.]17[.].*\nurl: https://issues.example.com/BareMetalRisk\nname: BareMetalRisk\nmessage: Bare metal clusters may lose a node during the update.\nmatchingRules:\n- type: PromQL\n  promql:\n    promql: |\n      "+BareMetalQuery+"\n"))
	if withContent {
		d.Content(Releases...)
	}
	return d
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Bundle is a catalog bundle: name, version, what it replaces/skips, its max OpenShift.
type Bundle struct {
	Name, Version, Replaces, SkipRange, MaxOCP string
}

// Catalog writes catalogs/<minor>/<source>/catalog.json: one package with one channel.
func (d *Dir) Catalog(minor, source, pkg, channel string, bundles ...Bundle) {
	var docs []string
	add := func(v any) { b, _ := json.Marshal(v); docs = append(docs, string(b)) }
	add(map[string]any{"schema": "olm.package", "name": pkg, "defaultChannel": channel})
	var entries []map[string]any
	for _, b := range bundles {
		e := map[string]any{"name": b.Name}
		if b.Replaces != "" {
			e["replaces"] = b.Replaces
		}
		if b.SkipRange != "" {
			e["skipRange"] = b.SkipRange
		}
		entries = append(entries, e)
	}
	add(map[string]any{"schema": "olm.channel", "package": pkg, "name": channel, "entries": entries})
	for _, b := range bundles {
		props := []map[string]any{{"type": "olm.package", "value": map[string]string{"packageName": pkg, "version": b.Version}}}
		if b.MaxOCP != "" {
			props = append(props, map[string]any{"type": "olm.maxOpenShiftVersion", "value": b.MaxOCP})
		}
		add(map[string]any{"schema": "olm.bundle", "name": b.Name, "package": pkg,
			"image": "registry.example.com/" + pkg + "/bundle@" + digestOf(b.Name), "properties": props})
	}
	d.Write("catalogs/"+minor+"/"+source+"/"+pkg+".json", []byte(strings.Join(docs, "\n")+"\n"))
}

func digestOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}
