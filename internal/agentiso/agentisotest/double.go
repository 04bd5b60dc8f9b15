package agentisotest

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// DoublePackage is the import path of the openshift-install test double.
const DoublePackage = "github.com/bootstrap-dev/bootstrap/internal/agentiso/agentisotest/openshift-install-double"

// BuildInstallerDouble compiles the openshift-install test double into dir/openshift-install.
// Run from inside the module (go test does).
func BuildInstallerDouble(dir string) (string, error) {
	out := filepath.Join(dir, "openshift-install")
	if b, err := exec.Command("go", "build", "-o", out, DoublePackage).CombinedOutput(); err != nil {
		return "", fmt.Errorf("build openshift-install test double: %v: %s", err, b)
	}
	return out, nil
}
