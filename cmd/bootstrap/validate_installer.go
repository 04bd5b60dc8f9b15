package main

import (
	"context"
	"fmt"
	"os"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// installerOff is the value of BOOTSTRAP_INSTALLERCHECK_BIN that turns the installer's check off.
const installerOff = "off"

// installerVerdict asks the installer itself about a profile validate found valid: the
// installercheck binary (FindInstallerCheck) loads what `bootstrap iso` would render through the
// agent installer's asset graph. Its refusals come back as findings at the profile fields they
// name; note says what was asked and of which binary, or why nothing was.
func installerVerdict(ctx context.Context, s *site.Site) (ps finding.List, note string) {
	bin := agentiso.FindInstallerCheck(os.Getenv)
	switch bin {
	case installerOff:
		return nil, "the installer's own checks: off (" + agentiso.InstallerCheckEnv + "=off)"
	case "":
		return nil, fmt.Sprintf("the installer's own checks: not run, no check binary (scripts/installercheck.sh builds it into %s; %s names one)",
			agentiso.InstallerCheckRoot, agentiso.InstallerCheckEnv)
	}
	v, err := agentiso.InstallerCheck(ctx, bin, s)
	if err != nil {
		return nil, "the installer's own checks: not run: " + err.Error()
	}
	if v.Verdict == "accept" {
		return nil, "the installer's own checks: accepted (install-config, agent-config and the cluster manifests it derives, by " + bin + ")"
	}
	return agentiso.InstallerProblems(s, v), "the installer's own checks: refused (by " + bin + ")"
}
