package site

import "strings"

// byPathSubdir reports a by-path root device whose name is empty or holds a '/' (a trailing
// slash, a doubled one): the installer refuses it, and no such link exists.
func byPathSubdir(dev string) bool {
	name, ok := strings.CutPrefix(dev, "/dev/disk/by-path/")
	return ok && (name == "" || strings.Contains(name, "/"))
}

// byPathFix suggests the name without the stray slashes, when one is left.
func byPathFix(dev string) string {
	name := strings.Trim(strings.TrimPrefix(dev, "/dev/disk/by-path/"), "/")
	if name == "" || strings.Contains(name, "/") {
		return byPathRemedy
	}
	return "write it as /dev/disk/by-path/" + name + " (the link's name alone, no slash before or after it)"
}
