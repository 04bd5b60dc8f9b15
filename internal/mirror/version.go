package mirror

import (
	"strconv"
	"strings"
)

// compareVersions compares semantic versions (a leading v is ignored); pre-releases sort before
// their release. Unparseable parts compare as strings.
func compareVersions(a, b string) int {
	split := func(v string) ([]string, string) {
		v = strings.TrimPrefix(v, "v")
		v, _, _ = strings.Cut(v, "+")
		core, pre, _ := strings.Cut(v, "-")
		return strings.Split(core, "."), pre
	}
	ac, ap := split(a)
	bc, bp := split(b)
	for i := 0; i < len(ac) || i < len(bc); i++ {
		var x, y string
		if i < len(ac) {
			x = ac[i]
		}
		if i < len(bc) {
			y = bc[i]
		}
		if c := comparePart(x, y); c != 0 {
			return c
		}
	}
	switch {
	case ap == bp:
		return 0
	case ap == "":
		return 1
	case bp == "":
		return -1
	}
	as, bs := strings.Split(ap, "."), strings.Split(bp, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := comparePart(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}

func comparePart(x, y string) int {
	xi, ex := strconv.Atoi(x)
	yi, ey := strconv.Atoi(y)
	if ex == nil && ey == nil {
		return xi - yi
	}
	return strings.Compare(x, y)
}
