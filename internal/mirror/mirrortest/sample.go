package mirrortest

import (
	"context"
	"fmt"
)

// Sample pushes a small OpenShift-shaped image set to host and returns the references by tag:
// two repositories in two namespaces sharing a base stack, two tags of one repository sharing a
// layer, and a multi-arch (amd64+arm64) index. layerKiB scales the unique layers.
func (b *Builder) Sample(ctx context.Context, host string, layerKiB int) ([]string, error) {
	k := layerKiB * 1024
	base := []Blob{b.Layer(4 * k), b.Layer(2 * k), b.Layer(k)}
	armBase := []Blob{b.Layer(3 * k), b.Layer(k)}
	shared := b.Layer(2 * k)
	type img struct {
		repo, tag string
		specs     []ImageSpec
	}
	imgs := []img{
		{"ocp/app-a", "v1", []ImageSpec{{Layers: append(base[:3:3], shared)}}},
		{"ocp/app-a", "v2", []ImageSpec{{Layers: append(base[:3:3], shared, b.Layer(k))}}},
		{"ocp/app-b", "v1", []ImageSpec{{Layers: append(base[:3:3], b.Layer(3*k), b.Layer(k/2))}}},
		{"ocp/multi", "v1", []ImageSpec{
			{Layers: append(base[:3:3], b.Layer(k))},
			{Layers: append(armBase[:2:2], b.Layer(k)), Platform: "linux/arm64"},
		}},
		{"tools/cli", "1.0", []ImageSpec{{Layers: []Blob{base[0], b.Layer(2 * k)}, Labels: map[string]string{"name": "cli"}}}},
	}
	var refs []string
	for _, im := range imgs {
		repo := host + "/" + im.repo
		var err error
		if len(im.specs) == 1 {
			_, err = b.Image(ctx, repo, im.tag, im.specs[0])
		} else {
			_, err = b.Index(ctx, repo, im.tag, im.specs)
		}
		if err != nil {
			return nil, fmt.Errorf("sample %s:%s: %w", repo, im.tag, err)
		}
		refs = append(refs, repo+":"+im.tag)
	}
	return refs, nil
}
