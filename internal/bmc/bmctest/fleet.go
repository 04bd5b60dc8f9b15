package bmctest

import "fmt"

// Fleet is n simulated iDRAC9s sharing one certificate, for the lab and whole-run tests.
type Fleet struct {
	BMCs  []*BMC
	CAPEM []byte
}

// NewFleet starts n simulators from o; mutate, when non-nil, adjusts each one's options
// (firmware mix, MACs, faults) by index.
func NewFleet(n int, o Options, mutate func(i int, o *Options)) (*Fleet, error) {
	cert, err := NewCert()
	if err != nil {
		return nil, fmt.Errorf("bmctest: certificate: %w", err)
	}
	f := &Fleet{CAPEM: cert.CAPEM}
	for i := 0; i < n; i++ {
		oi := o
		oi.Cert = cert
		if mutate != nil {
			mutate(i, &oi)
		}
		f.BMCs = append(f.BMCs, New(oi))
	}
	return f, nil
}

// Close stops every simulator.
func (f *Fleet) Close() {
	for _, b := range f.BMCs {
		b.Close()
	}
}
