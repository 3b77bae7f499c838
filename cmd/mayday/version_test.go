package main

import (
	"runtime/debug"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	info := func(main string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/mayday-sim/mayday", Version: main}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	const rev = "74038bc1a2b3c4d5e6f708192a3b4c5d6e7f8091"
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	cases := []struct {
		name    string
		ldflags string
		read    func() (*debug.BuildInfo, bool)
		want    string
	}{
		{"ldflags win", "v0.9.0-3-gabc", info("v1.0.0", "vcs.revision", rev), "v0.9.0-3-gabc"},
		{"go install of a release", "dev", info("v1.2.0"), "v1.2.0"},
		{"go install of a commit", "dev", info("v0.0.0-20261201091500-74038bc1a2b3"), "v0.0.0-20261201091500-74038bc1a2b3"},
		{"go build of a checkout, pseudo-version names the commit", "dev",
			info("v0.0.0-20261201091500-74038bc1a2b3+dirty", "vcs.revision", rev, "vcs.modified", "true"),
			"v0.0.0-20261201091500-74038bc1a2b3+dirty"},
		{"go build at a tag", "dev", info("v1.2.0", "vcs.revision", rev), "v1.2.0+74038bc1a2b3"},
		{"go build at a tag, modified", "dev", info("v1.2.0", "vcs.revision", rev, "vcs.modified", "true"), "v1.2.0+74038bc1a2b3.dirty"},
		{"devel build with VCS", "dev", info("(devel)", "vcs.revision", rev, "vcs.modified", "false"), "devel-74038bc1a2b3"},
		{"devel build with VCS, modified", "", info("(devel)", "vcs.revision", rev, "vcs.modified", "true"), "devel-74038bc1a2b3+dirty"},
		{"devel build without VCS", "dev", info("(devel)"), "dev"},
		{"no build info", "dev", none, "dev"},
	}
	for _, c := range cases {
		if got := buildVersion(c.ldflags, c.read); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
