package bmctest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

func client(t *testing.T, caPEM []byte) *http.Client {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("bad CA")
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

func call(t *testing.T, c *http.Client, method, url string, body any) *http.Response {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.SetBasicAuth("root", "calvin")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestStandardOverrideQuirk: iDRAC9 before 4.40 accepts Cd/Once but boots the disk; 6.x boots
// the virtual CD. This is the quirk the bmc package's ImportSystemConfiguration path exists for.
func TestStandardOverrideQuirk(t *testing.T) {
	iso := NewISOServer()
	defer iso.Close()
	img := iso.URL() + "/a.iso"
	for fw, want := range map[string]string{"3.30.30.30": "disk", "6.10.30.00": img} {
		f, err := NewFleet(1, Options{Firmware: fw, BootDelay: time.Millisecond}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := f.BMCs[0]
		c := client(t, f.CAPEM)
		slot := b.URL() + b.mediaCol() + "/CD"
		if b.systemLayout() {
			slot = b.URL() + b.mediaCol() + "/1"
		}
		if r := call(t, c, "POST", slot+"/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": img, "Inserted": true}); r.StatusCode != 204 {
			t.Fatalf("%s insert: %d", fw, r.StatusCode)
		}
		if r := call(t, c, "POST", slot+"/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": img}); r.StatusCode != 500 {
			t.Errorf("%s: second insert answered %d, want 500 VRM0021", fw, r.StatusCode)
		}
		call(t, c, "PATCH", b.URL()+b.sys, map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once", "BootSourceOverrideMode": "UEFI"}})
		if r := call(t, c, "POST", b.URL()+b.sys+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}); r.StatusCode != 204 {
			t.Fatalf("%s reset: %d", fw, r.StatusCode)
		}
		if err := b.Idle(t.Context()); err != nil {
			t.Fatal(err)
		}
		if st := b.Stats(); st.BootedFrom != want || st.Power != "On" || st.PowerActions != 1 {
			t.Errorf("%s: booted from %q power %s actions %d; want %q On 1", fw, st.BootedFrom, st.Power, st.PowerActions, want)
		}
	}
}

// TestIdle: Idle waits for the boot a power action started, and gives up with its context.
func TestIdle(t *testing.T) {
	f, err := NewFleet(1, Options{BootDelay: 200 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := f.BMCs[0]
	if err := b.Idle(t.Context()); err != nil {
		t.Fatalf("idle before any power action: %v", err)
	}
	c := client(t, f.CAPEM)
	if r := call(t, c, "POST", b.URL()+b.sys+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}); r.StatusCode != 204 {
		t.Fatalf("reset: %d", r.StatusCode)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if err := b.Idle(done); err == nil {
		t.Fatal("Idle returned while a boot was pending")
	}
	if err := b.Idle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.Boots != 1 || st.Power != "On" {
		t.Fatalf("after Idle: %d boots, power %s; want 1, On", st.Boots, st.Power)
	}
}

func TestSessionLimit(t *testing.T) {
	f, err := NewFleet(1, Options{SessionLimit: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := client(t, f.CAPEM)
	url := f.BMCs[0].URL() + sessCol
	for i, want := range []int{201, 201, 400} {
		if r := call(t, c, "POST", url, map[string]string{"UserName": "root", "Password": "calvin"}); r.StatusCode != want {
			t.Errorf("session %d: %d, want %d", i, r.StatusCode, want)
		}
	}
	if r := call(t, c, "POST", url, map[string]string{"UserName": "root", "Password": "bad"}); r.StatusCode != 401 {
		t.Errorf("bad password: %d, want 401", r.StatusCode)
	}
}

// TestLiveReads: a server booted from its ISO keeps reading it; reads fail while the ISO server
// is down and stop once the media is ejected.
func TestLiveReads(t *testing.T) {
	iso := NewISOServer()
	defer iso.Close()
	img := iso.URL() + "/a.iso"
	f, err := NewFleet(1, Options{BootDelay: time.Millisecond, LiveReads: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := f.BMCs[0]
	c := client(t, f.CAPEM)
	slot := b.URL() + b.mediaCol() + "/1"
	call(t, c, "POST", slot+"/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": img})
	call(t, c, "PATCH", b.URL()+b.sys, map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}})
	call(t, c, "POST", b.URL()+b.sys+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"})
	wait := func(cond func(Stats) bool) Stats {
		deadline := time.Now().Add(3 * time.Second)
		for !cond(b.Stats()) && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		return b.Stats()
	}
	if st := wait(func(s Stats) bool { return s.LiveReads >= 3 }); st.LiveReads < 3 || st.BootedFrom != img {
		t.Fatalf("live reads %d, booted from %q", st.LiveReads, st.BootedFrom)
	}
	iso.SetDown(true)
	if st := wait(func(s Stats) bool { return s.LiveReadErrors >= 2 }); st.LiveReadErrors < 2 {
		t.Errorf("reads while the ISO server is down: %d errors", st.LiveReadErrors)
	}
	if st := b.Stats(); !st.LastLiveReadError.After(st.LastLiveRead) || !st.LiveEnded.IsZero() {
		t.Errorf("while the ISO server is down: last read %s, last failed read %s, live ended %s",
			st.LastLiveRead, st.LastLiveReadError, st.LiveEnded)
	}
	iso.SetDown(false)
	ejected := time.Now()
	call(t, c, "POST", slot+"/Actions/VirtualMedia.EjectMedia", map[string]any{})
	st := wait(func(s Stats) bool { return !s.LiveEnded.IsZero() })
	if st.LiveEnded.IsZero() || st.LiveEnded.Before(ejected) {
		t.Fatalf("the live system did not stop reading after the eject at %s: ended %s", ejected, st.LiveEnded)
	}
	if st.LastLiveRead.After(st.LiveEnded) || st.LastLiveReadError.After(st.LiveEnded) {
		t.Errorf("reads after the live system ended at %s: last %s, last failed %s", st.LiveEnded, st.LastLiveRead, st.LastLiveReadError)
	}
}
