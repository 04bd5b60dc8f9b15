package install

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// StateFile is where openshift-install keeps its generated assets in the asset dir.
const StateFile = ".openshift_install_state.json"

// WatcherToken reads the agent installer's watcher token (the JWT `agent wait-for` sends as
// Watcher-Authorization, OpenShift 4.16 and later) from the installer's state file in assetDir.
// It returns "" without error when the state holds no auth asset (older releases need none).
// The token is a secret: callers keep it in memory only.
func WatcherToken(assetDir string) (string, error) {
	b, err := fsroot.ReadBeneath(filepath.Join(assetDir, StateFile), fsroot.Index) // the whole asset state: ignitions included
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("installer state: %w", err)
	}
	var state map[string]json.RawMessage
	if err := json.Unmarshal(b, &state); err != nil {
		return "", fmt.Errorf("installer state %s: %w", filepath.Join(assetDir, StateFile), err)
	}
	for k, v := range state {
		if !strings.HasSuffix(k, "AuthConfig") {
			continue
		}
		var ac struct{ WatcherAuthToken string }
		if err := json.Unmarshal(v, &ac); err != nil {
			return "", fmt.Errorf("installer state: %s: %w", k, err)
		}
		return ac.WatcherAuthToken, nil
	}
	return "", nil
}
