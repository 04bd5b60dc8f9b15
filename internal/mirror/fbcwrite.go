package mirror

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// FilteredFBC writes the selection as file-based catalog documents, one JSON stream per package
// (file name → content). Documents are the catalog's own, byte for byte, except that channels
// keep only selected entries, the package's defaultChannel moves to a selected channel when its
// own was not selected, and olm.deprecations keep only entries about what remains.
func FilteredFBC(c *Catalog, sel Selection, defaultChannels map[string]string) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, pkgName := range sortedKeys(sel) {
		p := c.Packages[pkgName]
		chans := sel[pkgName]
		var buf bytes.Buffer
		write := func(v any) error {
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			buf.Write(b)
			buf.WriteByte('\n')
			return nil
		}
		var pkgDoc map[string]any
		if err := json.Unmarshal(p.raw, &pkgDoc); err != nil {
			return nil, fmt.Errorf("package %s: %w", pkgName, err)
		}
		def := p.DefaultChannel
		if want := defaultChannels[pkgName]; want != "" {
			def = want
		}
		if chans[def] == nil {
			def = sortedKeys(chans)[0]
		}
		pkgDoc["defaultChannel"] = def
		if err := write(pkgDoc); err != nil {
			return nil, err
		}
		keptBundles := map[string]bool{}
		for _, chName := range sortedKeys(chans) {
			var doc map[string]any
			if err := json.Unmarshal(p.Channels[chName].raw, &doc); err != nil {
				return nil, fmt.Errorf("package %s channel %s: %w", pkgName, chName, err)
			}
			entries, _ := doc["entries"].([]any)
			kept := []any{}
			for _, e := range entries {
				em, _ := e.(map[string]any)
				if n, _ := em["name"].(string); chans[chName][n] {
					kept = append(kept, e)
					keptBundles[n] = true
				}
			}
			doc["entries"] = kept
			if err := write(doc); err != nil {
				return nil, err
			}
		}
		for _, bn := range p.sortedBundles(keptBundles) {
			buf.Write(p.Bundles[bn].raw)
			buf.WriteByte('\n')
		}
		for _, raw := range p.deprecations {
			var doc map[string]any
			if err := json.Unmarshal(raw, &doc); err != nil {
				return nil, fmt.Errorf("package %s deprecations: %w", pkgName, err)
			}
			entries, _ := doc["entries"].([]any)
			kept := []any{}
			for _, e := range entries {
				em, _ := e.(map[string]any)
				r, _ := em["reference"].(map[string]any)
				schema, _ := r["schema"].(string)
				name, _ := r["name"].(string)
				if schema == schemaPackage || schema == schemaBundle && keptBundles[name] || schema == schemaChannel && chans[name] != nil {
					kept = append(kept, e)
				}
			}
			if len(kept) > 0 {
				doc["entries"] = kept
				if err := write(doc); err != nil {
					return nil, err
				}
			}
		}
		for _, raw := range p.others {
			buf.Write(raw)
			buf.WriteByte('\n')
		}
		files[pkgName+"/catalog.json"] = buf.Bytes()
	}
	return files, nil
}
