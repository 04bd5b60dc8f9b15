package upgrade

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed nvidia-matrix.yaml
var nvidiaMatrixYAML []byte

// MatrixFile is the matrix's name as verdicts quote it.
const MatrixFile = "internal/upgrade/nvidia-matrix.yaml"

// Matrix is the NVIDIA operators' facts, versioned in the repository (see the file's header for
// where each value comes from and what `confirmed` means).
type Matrix struct {
	Revision      int              `yaml:"revision"`
	Recorded      string           `yaml:"recorded"`
	DriverImageOS []DriverOS       `yaml:"driverImageOS"`
	AvoidReleases []AvoidRelease   `yaml:"avoidReleases"`
	Operators     []MatrixOperator `yaml:"operators"`
}

// DriverOS is the driver image tag suffix for an OpenShift minor.
type DriverOS struct {
	OpenShift string `yaml:"openshift"`
	Suffix    string `yaml:"suffix"`
	Confirmed bool   `yaml:"confirmed"`
}

// AvoidRelease is a release not to use while Package is installed.
type AvoidRelease struct {
	Version   string `yaml:"version"`
	Package   string `yaml:"package"`
	FixedIn   string `yaml:"fixedIn"`
	Confirmed bool   `yaml:"confirmed"`
}

// MatrixOperator is one operator's versions.
type MatrixOperator struct {
	Package  string          `yaml:"package"`
	Versions []MatrixVersion `yaml:"versions"`
}

// MatrixVersion is one operator major.minor: its OpenShift range and default driver.
type MatrixVersion struct {
	Version      string `yaml:"version"`
	OpenShiftMin string `yaml:"openshiftMin"`
	OpenShiftMax string `yaml:"openshiftMax"`
	Driver       string `yaml:"driver,omitempty"`
	Confirmed    bool   `yaml:"confirmed"`
}

// LoadMatrix parses the embedded matrix.
func LoadMatrix() (*Matrix, error) { return ParseMatrix(MatrixFile, nvidiaMatrixYAML) }

// ParseMatrix parses a matrix file strictly.
func ParseMatrix(file string, b []byte) (*Matrix, error) {
	var m Matrix
	if err := decodeYAML(file, b, &m); err != nil {
		return nil, err
	}
	if m.Revision < 1 {
		return nil, fmt.Errorf("%s: no revision", file)
	}
	return &m, nil
}

// driverOS is the driver image suffix for an OpenShift minor, with its provenance note.
func (m *Matrix) driverOS(minor string) (DriverOS, bool) {
	for _, d := range m.DriverImageOS {
		if d.OpenShift == minor {
			return d, true
		}
	}
	return DriverOS{}, false
}

// version finds the entry of an operator for a CSV version ("24.9.2" -> "24.9").
func (m *Matrix) version(pkg, csvVersion string) (MatrixVersion, bool) {
	mm := majorMinor(csvVersion)
	for _, o := range m.Operators {
		if o.Package != pkg {
			continue
		}
		for _, v := range o.Versions {
			if v.Version == mm {
				return v, true
			}
		}
	}
	return MatrixVersion{}, false
}

// operatorHas reports whether pkg is in the matrix.
func (m *Matrix) operatorHas(pkg string) bool {
	for _, o := range m.Operators {
		if o.Package == pkg {
			return true
		}
	}
	return false
}

// cite is how a verdict names a matrix entry.
func (m *Matrix) cite(what string, confirmed bool) string {
	s := fmt.Sprintf("%s revision %d: %s", MatrixFile, m.Revision, what)
	if !confirmed {
		s += " (entry not confirmed against its source page)"
	}
	return s
}

// majorMinor is "X.Y" of "X.Y.Z[-pre]".
func majorMinor(v string) string {
	p := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(p) < 2 {
		return v
	}
	return p[0] + "." + p[1]
}

// bridging lists the operator versions whose range holds both minors: those to update to before
// a hop from one to the other.
func (m *Matrix) bridging(pkg, from, to string) []string {
	var out []string
	for _, o := range m.Operators {
		if o.Package != pkg {
			continue
		}
		for _, v := range o.Versions {
			if !maxBelow(v.OpenShiftMax, to) && !maxBelow(from, v.OpenShiftMin) {
				out = append(out, v.Version)
			}
		}
	}
	return out
}
