package main

import (
	"runtime/debug"
	"strings"
)

// The version a build reports: the -ldflags value when one was given (the Makefile passes
// `git describe`), otherwise what the Go toolchain recorded in the binary: a build of a
// tagged module version reports that tag, and `go install ./cmd/mayday` in a checkout
// reports its commit.
func init() { version = buildVersion(version, debug.ReadBuildInfo) }

// unstamped is the version of a build given no -ldflags.
const unstamped = "dev"

// buildVersion resolves the version from the ldflags value and the build information:
//   - an ldflags value other than "dev" wins;
//   - else the main module's version (a release tag, or a pseudo-version such as
//     v0.0.0-20261201091500-74038bc1a2b3, which names the commit), when it is not "(devel)";
//   - else "devel-" and the first 12 digits of the VCS revision, "+dirty" when the tree had
//     uncommitted changes;
//   - else "dev".
func buildVersion(ldflags string, read func() (*debug.BuildInfo, bool)) string {
	if ldflags != "" && ldflags != unstamped {
		return ldflags
	}
	info, ok := read()
	if !ok || info == nil {
		return unstamped
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		if rev != "" && !strings.Contains(v, rev) {
			// A tagged build from a checkout: keep the tag, add the commit as build metadata.
			v += "+" + rev
			if dirty && !strings.Contains(v, "dirty") {
				v += ".dirty"
			}
		}
		return v
	}
	if rev != "" {
		v := "devel-" + rev
		if dirty {
			v += "+dirty"
		}
		return v
	}
	return unstamped
}
