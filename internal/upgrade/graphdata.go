package upgrade

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/blang/semver/v4"
	"go.yaml.in/yaml/v3"

	"github.com/bootstrap-dev/bootstrap/internal/yamlstrict"
)

// GraphData is the graph-data layout of openshift/cincinnati-graph-data as the update service
// reads it: the schema version, the channels and the blocked edges. (Its nodes and the edges come
// from the releases themselves; a carried graph's JSON holds them.)
type GraphData struct {
	Version  string              `json:"version"`            // the version file: the layout's schema version
	Channels map[string][]string `json:"channels,omitempty"` // channel name -> versions
	Blocked  []BlockedEdge       `json:"blockedEdges,omitempty"`
}

// Channel is a channels/*.yaml file.
type Channel struct {
	Name     string   `yaml:"name"`
	Versions []string `yaml:"versions"`
	// Feeder names the channel this one is fed from (stable from fast) with a delay and filter;
	// it says nothing about edges, so it is read and not used.
	Feeder any `yaml:"feeder,omitempty"`
}

// BlockedEdge is a blocked-edges/*.yaml file: the updates into To from every version matching
// From (a regular expression, anchored) are removed when it has no rules, and conditional on Risk
// when it has.
type BlockedEdge struct {
	To            string         `yaml:"to" json:"to"`
	From          string         `yaml:"from" json:"from"`
	URL           string         `yaml:"url,omitempty" json:"url,omitempty"`
	Name          string         `yaml:"name,omitempty" json:"name,omitempty"`
	Message       string         `yaml:"message,omitempty" json:"message,omitempty"`
	FixedIn       string         `yaml:"fixedIn,omitempty" json:"fixedIn,omitempty"`
	MatchingRules []MatchingRule `yaml:"matchingRules,omitempty" json:"matchingRules,omitempty"`

	File string         `yaml:"-" json:"file"`
	from *regexp.Regexp `yaml:"-"`
}

// Matches reports whether the edge from -> to is one this entry blocks.
func (b BlockedEdge) Matches(from, to string) bool { return to == b.To && b.from.MatchString(from) }

// Risk is the entry as a conditional update risk (when it has rules).
func (b BlockedEdge) Risk() Risk {
	return Risk{URL: b.URL, Name: b.Name, Message: strings.TrimSpace(b.Message), MatchingRules: b.MatchingRules}
}

// maxDataFile bounds one graph-data YAML file; the real ones are a few KiB.
const maxDataFile = 1 << 20

// parseChannel decodes a channels/*.yaml file strictly.
func parseChannel(file string, b []byte) (Channel, error) {
	var c Channel
	if err := decodeYAML(file, b, &c); err != nil {
		return c, err
	}
	if c.Name == "" {
		return c, refuse(ReasonGraph, file, graphDataFix, "no name")
	}
	for i, v := range c.Versions {
		if _, err := semver.Parse(v); err != nil {
			return c, refuse(ReasonGraph, file, graphDataFix, "versions[%d] %q: %v", i, v, err)
		}
	}
	return c, nil
}

// parseBlocked decodes a blocked-edges/*.yaml file strictly.
func parseBlocked(file string, b []byte) (BlockedEdge, error) {
	var e BlockedEdge
	if err := decodeYAML(file, b, &e); err != nil {
		return e, err
	}
	e.File = file
	if _, err := semver.Parse(e.To); err != nil {
		return e, refuse(ReasonGraph, file, graphDataFix, "to %q: %v", e.To, err)
	}
	if e.From == "" {
		return e, refuse(ReasonGraph, file, graphDataFix, "no from (a regular expression of the versions blocked)")
	}
	re, err := regexp.Compile("^(?:" + e.From + ")$")
	if err != nil {
		return e, refuse(ReasonGraph, file, graphDataFix, "from %q: %v", e.From, err)
	}
	e.from = re
	if len(e.MatchingRules) > 0 {
		if err := e.Risk().validate(); err != nil {
			return e, refuse(ReasonGraph, file, graphDataFix, "%v", err)
		}
	}
	return e, nil
}

const graphDataFix = "carry the graph-data again (the graph-data image or tarball the mirror fetches); these ImageSetConfiguration lines bring it, and content.json travels with it:\n  mirror:\n    platform:\n      graph: true"

// decodeYAML decodes one YAML document strictly into out.
func decodeYAML(file string, b []byte, out any) error {
	if len(b) > maxDataFile {
		return refuse(ReasonGraph, file, graphDataFix, "%d bytes, more than a graph-data file can be", len(b))
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return refuse(ReasonGraph, file, graphDataFix, "empty")
		}
		return refuse(ReasonGraph, file, graphDataFix, "not YAML: %v", err)
	}
	r := yamlstrict.Decode(&root, file, out, yamlstrict.Options{})
	if len(r.Problems) > 0 {
		var msgs []string
		for _, p := range r.Problems {
			msgs = append(msgs, fmt.Sprintf("%s: %s %s", p.Position, p.Path, p.Message))
		}
		return refuse(ReasonGraph, file, graphDataFix, "%s", strings.Join(msgs, "; "))
	}
	return nil
}
