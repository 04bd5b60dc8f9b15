package install

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// Options is one install to follow.
type Options struct {
	// Installer is the openshift-install binary; AssetDir the directory the ISO was generated in
	// (holds auth/kubeconfig and the installer's state).
	Installer string
	AssetDir  string
	// WorkDir receives the kubeconfig (mode 0600).
	WorkDir string
	// BootstrapTimeout and InstallTimeout bound the two wait-for runs (0 = the installer's own).
	BootstrapTimeout, InstallTimeout time.Duration
	// Follower reads the rendezvous host's API while the installer runs; nil to skip.
	Follower *Follower
	// Nodes are the profile's node names, each of which must be Ready.
	Nodes []string
	// ClusterTimeout bounds the Kubernetes API checks after the installer (default 30 minutes).
	ClusterTimeout time.Duration
	// ClientOptions tune the Kubernetes client (poll interval).
	ClientOptions []cluster.Option
}

// Callbacks receive what happens; each may be nil and must be safe from several goroutines.
type Callbacks struct {
	// Line is one line of installer output, with the target it belongs to.
	Line func(target, line string)
	// Finding is a change on the rendezvous host's API (a validation failing or passing).
	Finding func(Finding)
	// Progress is a line about the Kubernetes checks.
	Progress cluster.Progress
	// Reached is told each milestone as it passes: BootstrapComplete and InstallComplete when
	// their wait-for returns, "" when the cluster checks pass (Tracker.Reached takes them).
	Reached func(target string)
}

// Result is what the install ended with.
type Result struct {
	Kubeconfig string       `json:"kubeconfig"`
	Cluster    ClusterState `json:"cluster"`
	// Failing are the host validations still failing when the installer stopped.
	Failing  []Finding         `json:"failing,omitempty"`
	Duration map[string]string `json:"duration"`
}

// Run follows the install: wait-for bootstrap-complete, then install-complete, with the
// rendezvous API followed in parallel; then the kubeconfig is copied and the cluster checked.
// On failure the result still lists the validations failing at that moment (the likely reason).
func Run(ctx context.Context, o Options, cb Callbacks) (Result, error) {
	res := Result{Duration: map[string]string{}}
	fctx, stopFollow := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if o.Follower != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.Follower.Follow(fctx, func(f Finding) {
				if cb.Finding != nil {
					cb.Finding(f)
				}
			})
		}()
	}
	stop := func() {
		stopFollow()
		wg.Wait()
		if o.Follower != nil {
			res.Failing = o.Follower.Failing()
		}
	}
	for _, step := range []struct {
		target  string
		timeout time.Duration
	}{{BootstrapComplete, o.BootstrapTimeout}, {InstallComplete, o.InstallTimeout}} {
		start := time.Now()
		err := WaitFor(ctx, o.Installer, o.AssetDir, step.target, step.timeout, func(l string) {
			if cb.Line != nil {
				cb.Line(step.target, l)
			}
		})
		res.Duration[step.target] = time.Since(start).Round(time.Second).String()
		if err != nil {
			stop()
			return res, err
		}
		if cb.Reached != nil {
			cb.Reached(step.target)
		}
	}
	stop()
	kc, err := copyKubeconfig(o.AssetDir, o.WorkDir)
	if err != nil {
		return res, err
	}
	res.Kubeconfig = kc
	c, err := cluster.NewFromKubeconfig(kc, o.ClientOptions...)
	if err != nil {
		return res, err
	}
	timeout := o.ClusterTimeout
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	start := time.Now()
	res.Cluster, err = CheckCluster(ctx, c, o.Nodes, timeout, cb.Progress)
	res.Duration["cluster-checks"] = time.Since(start).Round(time.Second).String()
	if err == nil && cb.Reached != nil {
		cb.Reached("")
	}
	return res, err
}

// copyKubeconfig copies <assetDir>/auth/kubeconfig to <workDir>/kubeconfig with mode 0600
// (written to a temporary file and renamed, so a reader never sees half of it).
func copyKubeconfig(assetDir, workDir string) (string, error) {
	src := filepath.Join(assetDir, "auth", "kubeconfig")
	dst := filepath.Join(workDir, "kubeconfig")
	in, err := fsroot.OpenBeneath(src, fsroot.Secret) // the installer's output: a regular file, bounded
	if err != nil {
		return "", fmt.Errorf("kubeconfig: %w", err)
	}
	defer in.Close()
	tmp, err := os.OpenFile(dst+".tmp", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("kubeconfig: %w", err)
	}
	_, err = io.Copy(tmp, in)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(dst+".tmp", dst)
	}
	if err != nil {
		os.Remove(dst + ".tmp")
		return "", fmt.Errorf("kubeconfig: %w", err)
	}
	return dst, nil
}
