package mirror

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/regclient/regclient/types/ref"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

func TestChannelVersions(t *testing.T) {
	tags := []string{"4.16.0-x86_64", "4.16.2-x86_64", "4.16.10-x86_64", "4.16.11-rc.1-x86_64", "4.16.12-aarch64",
		"4.17.1-x86_64", "4.16.3-multi", "latest", "4.16.9-x86_64.sig", "sha256-abc.sig"}
	for _, tt := range []struct {
		ch   ISCChannel
		arch string
		want []string
	}{
		{ISCChannel{Name: "stable-4.16"}, "x86_64", []string{"4.16.10"}},
		{ISCChannel{Name: "candidate-4.16"}, "x86_64", []string{"4.16.11-rc.1"}},
		{ISCChannel{Name: "stable-4.16", MinVersion: "4.16.2"}, "x86_64", []string{"4.16.2", "4.16.10"}},
		{ISCChannel{Name: "stable-4.16", MaxVersion: "4.16.2"}, "x86_64", []string{"4.16.0", "4.16.2"}},
		{ISCChannel{Name: "stable-4.16", MinVersion: "4.16.1", MaxVersion: "4.16.9"}, "x86_64", []string{"4.16.2"}},
		{ISCChannel{Name: "stable-4.16", Full: true}, "x86_64", []string{"4.16.0", "4.16.2", "4.16.10"}},
		{ISCChannel{Name: "fast-4.16"}, "aarch64", []string{"4.16.12"}},
		{ISCChannel{Name: "eus-4.16"}, "multi", []string{"4.16.3"}},
		{ISCChannel{Name: "stable-4.17"}, "x86_64", []string{"4.17.1"}},
	} {
		got, err := ChannelVersions(tt.ch, tt.arch, tags)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%+v %s: %v %v, want %v", tt.ch, tt.arch, got, err, tt.want)
		}
	}
	for _, ch := range []ISCChannel{{Name: "stable-4.18"}, {Name: "stable-4.16", MinVersion: "4.16.20"}} {
		if _, err := ChannelVersions(ch, "x86_64", tags); err == nil || !strings.Contains(err.Error(), ch.Name) {
			t.Errorf("%+v: %v, want an error naming the channel", ch, err)
		}
	}
}

// Channels resolved from the tags of a real release repository, read through the source
// registry override as a site does.
func TestResolveChannelsFromReleaseTags(t *testing.T) {
	e := newEnv(t, nil)
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: e.src.Host, TLS: config.TLSDisabled}))
	repo := e.src.Host + "/openshift-release-dev/ocp-release"
	for _, v := range []string{"4.16.0", "4.16.2", "4.16.10", "4.17.1"} {
		if _, err := e.b.Release(ctx(t), mirrortest.ReleaseSpec{PushHost: e.src.Host, NameHost: "quay.io", Version: v, Components: 2, LayerKiB: 1}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tag := range []string{"4.16.11-rc.1-x86_64", "4.16.12-aarch64"} {
		from, _ := ref.New(repo + ":4.16.10-x86_64")
		to, _ := ref.New(repo + ":" + tag)
		if err := rc.ImageCopy(ctx(t), from, to); err != nil {
			t.Fatal(err)
		}
	}
	o := e.opts()
	o.SourceRegistry = e.src.Host
	resolve := func(channels string) []string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "isc.yaml")
		doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  platform:\n    channels:\n" + channels
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		isc, err := LoadISC(p)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Resolve(ctx(t), isc, Dest{Host: e.dst.Host, Namespace: "m"}, o)
		if err != nil {
			t.Fatal(err)
		}
		var rels []string
		comps := 0
		for _, im := range res.Images {
			switch im.Kind {
			case KindRelease:
				rels = append(rels, strings.TrimPrefix(im.Source, DefaultReleaseRepo+":"))
			case KindReleaseComponent:
				comps++
			}
		}
		if comps != 2*len(rels) {
			t.Errorf("%d components for releases %v, want 2 each", comps, rels)
		}
		return rels
	}
	for _, tt := range []struct {
		channels string
		want     []string
	}{
		{"    - name: stable-4.16\n", []string{"4.16.10-x86_64"}},
		{"    - name: stable-4.16\n      minVersion: 4.16.2\n", []string{"4.16.2-x86_64", "4.16.10-x86_64"}},
		{"    - name: stable-4.16\n      maxVersion: 4.16.2\n", []string{"4.16.0-x86_64", "4.16.2-x86_64"}},
		{"    - name: stable-4.16\n      full: true\n", []string{"4.16.0-x86_64", "4.16.2-x86_64", "4.16.10-x86_64"}},
		{"    - name: candidate-4.16\n", []string{"4.16.11-rc.1-x86_64"}},
		{"    - name: stable-4.16\n      minVersion: 4.16.10\n    - name: stable-4.17\n", []string{"4.16.10-x86_64", "4.17.1-x86_64"}},
	} {
		if got := resolve(tt.channels); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("channels\n%s: releases %v, want %v", tt.channels, got, tt.want)
		}
	}
}
