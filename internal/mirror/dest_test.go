package mirror

import "testing"

// TestParseDest: the two destinations oc-mirror v2 takes, and nothing else.
func TestParseDest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Dest
		ok   bool
	}{
		{"docker://registry.example.com:8443/mirror", Dest{Host: "registry.example.com:8443", Namespace: "mirror"}, true},
		{"docker://registry.example.com:8443/a/b", Dest{Host: "registry.example.com:8443", Namespace: "a/b"}, true},
		{"docker://registry.example.com", Dest{Host: "registry.example.com"}, true},
		{"file:///media/usb/mirror", Dest{Dir: "/media/usb/mirror"}, true},
		{"file://relative", Dest{Dir: "relative"}, true},
		{"docker://", Dest{}, false},
		{"file://", Dest{}, false},
		{"registry.example.com/mirror", Dest{}, false},
		{"oci:///dir", Dest{}, false},
	} {
		got, err := ParseDest(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseDest(%q) = %+v, %v; want %+v (ok %t)", tc.in, got, err, tc.want, tc.ok)
			continue
		}
		if tc.ok && got.String() != tc.in {
			t.Errorf("%+v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
	d := Dest{Host: "h:5000", Namespace: "ns", Insecure: true, CAFile: "ca.pem", AuthFile: "auth.json"}
	if e := d.Endpoint(); e != (Endpoint{Host: "h:5000", Insecure: true, CAFile: "ca.pem", AuthFile: "auth.json"}) {
		t.Errorf("Endpoint() = %+v", e)
	}
}
