package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// waitFor plays `agent wait-for target`: it polls clusterDir for the marker file named target
// (written by whoever plays the cluster), reporting progress like the real installer, then
// installs clusterDir/kubeconfig as D/auth/kubeconfig. A file "failed" there ends the wait with
// its content as the error.
func waitFor(target, dir, clusterDir string, log io.Writer) error {
	if target != "bootstrap-complete" && target != "install-complete" {
		return fmt.Errorf("unknown wait-for target %q", target)
	}
	info := func(m string) { fmt.Fprintf(log, "level=info msg=%q\n", m) }
	if clusterDir == "" {
		return errors.New("cluster has not been installed: no cluster to watch (OPENSHIFT_INSTALL_DOUBLE_CLUSTER unset, no .openshift-install-double-cluster file)")
	}
	if _, err := os.Stat(filepath.Join(dir, ".openshift_install_state.json")); err != nil {
		return fmt.Errorf("failed to load installer state from %s: run agent create image first", dir)
	}
	info("Waiting for " + target + " (test double: watching " + clusterDir + ")")
	last := time.Now()
	for {
		b, err := os.ReadFile(filepath.Join(clusterDir, target))
		if err == nil {
			if len(b) > 0 {
				info(string(b))
			}
			break
		}
		if why, err := os.ReadFile(filepath.Join(clusterDir, "failed")); err == nil {
			return fmt.Errorf("cluster install failed: %s", why)
		}
		if time.Since(last) > 10*time.Second {
			info("Still waiting for the cluster to reach " + target)
			last = time.Now()
		}
		time.Sleep(250 * time.Millisecond)
	}
	kc, err := os.ReadFile(filepath.Join(clusterDir, "kubeconfig"))
	if err != nil {
		return fmt.Errorf("cluster kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "auth"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "auth", "kubeconfig"), kc, 0o600); err != nil {
		return err
	}
	switch target {
	case "bootstrap-complete":
		info("Bootstrap is complete")
	default:
		info("Install complete!")
	}
	return nil
}
