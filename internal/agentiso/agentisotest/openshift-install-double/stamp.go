package main

import (
	"os"
	"path/filepath"
	"strings"
)

// Placeholders laid out as the real installer's (openshift/installer pkg/asset/releaseimage and
// pkg/version): the extractor (bootstrap's, or oc adm release extract) overwrites each from its
// first byte with a value and a NUL. Package variables, so the compiler keeps them in the binary
// and does not fold the checks below.
var (
	releaseImagePadded   = "\x00_RELEASE_IMAGE_LOCATION_\x00XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\x00"
	releaseVersionPadded = "\x00_RELEASE_VERSION_LOCATION_\x00XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\x00"
	releaseArchPadded    = "\x00_RELEASE_ARCHITECTURE_LOCATION_\x00XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\x00"
)

// stamped returns the value an extractor wrote over a placeholder, "" when it is untouched.
func stamped(padded, name string) string {
	if strings.HasPrefix(padded, "\x00_"+name+"_LOCATION_\x00") {
		return ""
	}
	if i := strings.IndexByte(padded, 0); i > 0 {
		return padded[:i]
	}
	return ""
}

// clusterMarker is the file, in the asset directory or a directory above it, that names the
// directory to watch when OPENSHIFT_INSTALL_DOUBLE_CLUSTER is not set (the lab writes it beside
// its profile, so the double extracted from the lab's release payload needs no environment).
const clusterMarker = ".openshift-install-double-cluster"

// clusterDir is where `agent wait-for` watches for the markers the lab's cluster player writes.
func clusterDir(assetDir string) string {
	if d := os.Getenv("OPENSHIFT_INSTALL_DOUBLE_CLUSTER"); d != "" {
		return d
	}
	dir, err := filepath.Abs(assetDir)
	if err != nil {
		return ""
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, clusterMarker)); err == nil {
			return strings.TrimSpace(string(b))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
