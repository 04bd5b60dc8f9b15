package stages

import (
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// newHandover finds the nodes the boot stage left with a persistent override (its journaled
// output) and hands them to bmc.Handovers, journaling into the install stage's steps and telling
// the event sink; the install stage feeds it the host stages it follows.
func newHandover(env *pipeline.Env, opts []bmc.Option) (*bmc.Handovers, error) {
	h := bmc.NewHandovers(env.Steps, func(node, msg string, warning bool) {
		if env.Events == nil {
			return
		}
		kind := pipeline.Info
		if warning {
			kind = pipeline.Warning
		}
		env.Events(pipeline.Event{Time: time.Now(), Kind: kind, Stage: NameInstall, Node: node, Step: bmc.StepHandover, Message: msg})
	}, opts...)
	boot, ok, err := BootOutputKey.Read(env)
	if err != nil || !ok {
		return h, err
	}
	persistent := map[string]string{}
	for _, n := range boot.Nodes {
		if n.Persistent {
			persistent[n.Node] = n.Image
		}
	}
	if len(persistent) == 0 {
		return h, nil
	}
	targets, _ := bootTargets(&pipeline.Env{Site: env.Site})
	for _, t := range targets {
		if url, ok := persistent[t.Node]; ok {
			h.Add(t, url)
		}
	}
	return h, nil
}
