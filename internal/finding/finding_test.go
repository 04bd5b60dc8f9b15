package finding

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, tt := range []struct {
		f    Finding
		want string
	}{
		{Finding{Status: Fail, Position: Position{File: "site.yaml", Line: 12, Column: 5}, Path: "nodes[2].bmc.address", Message: "bad", Remedy: "fix it"},
			"site.yaml:12:5: error: nodes[2].bmc.address: bad (fix: fix it)"},
		{Finding{Status: Warn, Position: Position{File: "isc.yaml", Line: 3}, Message: "odd", AlsoNamedBy: "a (line 4)"},
			"isc.yaml:3: warning: odd (also named by a (line 4))"},
		{Finding{Status: Fail, Node: "cp-0", Path: "nodes[0].rootDevice", Message: "no such disk"},
			"error: nodes[0].rootDevice (node cp-0): no such disk"},
		{Finding{Status: Warn, Check: "bmc-tls", Node: "w-1", Message: "self-signed"},
			"warning: bmc-tls (node w-1): self-signed"},
	} {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestStatusJSON(t *testing.T) {
	b, err := json.Marshal(Finding{Status: Warn, Check: "dns", Message: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"status":"warn","check":"dns","message":"slow"}` {
		t.Errorf("JSON %s", b)
	}
	for in, want := range map[string]Status{`"pass"`: Pass, `"warn"`: Warn, `"warning"`: Warn, `"fail"`: Fail, `"error"`: Fail} {
		var s Status
		if err := json.Unmarshal([]byte(in), &s); err != nil || s != want {
			t.Errorf("%s read as %v, %v; want %v", in, s, err, want)
		}
	}
	var s Status
	if err := json.Unmarshal([]byte(`"bad"`), &s); err == nil {
		t.Error(`"bad" read without error`)
	}
	if _, err := json.Marshal(Status(7)); err == nil {
		t.Error("Status(7) written without error")
	}
	if Fail.Label() != "FAIL" || Warn.Word() != "warning" || Pass.String() != "pass" {
		t.Error("status words")
	}
}

func TestListFormatSortCount(t *testing.T) {
	l := List{
		{Status: Warn, Position: Position{File: "s.yaml", Line: 9}, Path: "b", Message: "w"},
		{Status: Fail, Position: Position{File: "s.yaml", Line: 2, Column: 1}, Path: "a", Message: "e", Remedy: "r", AlsoNamedBy: "c (line 3)"},
		{Status: Fail, Position: Position{File: "s.yaml", Line: 4}, Path: "d", Message: "k", CausedBy: "a"},
	}
	l.Sort()
	var b strings.Builder
	if err := l.Format(&b); err != nil {
		t.Fatal(err)
	}
	want := "s.yaml:2:1: error: a: e\n    also named by: c (line 3)\n    fix: r\n" +
		"    ↳ which also makes s.yaml:4: error: d: k\n" +
		"s.yaml:9: warning: b: w\n" +
		"2 errors (1 of them knock-on, cleared by fixing their cause), 1 warning\n"
	if b.String() != want {
		t.Errorf("Format:\n%s\nwant:\n%s", b.String(), want)
	}
	if f, w := l.Count(); f != 2 || w != 1 || !l.HasErrors() || len(l.Only(Warn)) != 1 {
		t.Errorf("Count %d %d", f, w)
	}
	if !l[0].Equal(l[0]) || l[0].Equal(l[1]) {
		t.Error("Equal")
	}
	g := l[0]
	g.NeededBy = []string{"mirror"}
	if g.Equal(l[0]) {
		t.Error("Equal ignores NeededBy")
	}
}
