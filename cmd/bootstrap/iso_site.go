package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// isoLoadSite reads the profile for `bootstrap iso` and `bootstrap serve`.
// COORDINATOR: replace with site.LoadValidated (internal/site/load.go on the site branch) when it is
// on main, and delete this file; it exists only so this branch builds on its own.
func isoLoadSite(path string) (*site.Site, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read site profile: %w", err)
	}
	var s site.Site
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.File, err = filepath.Abs(path); err != nil {
		return nil, err
	}
	return &s, nil
}
