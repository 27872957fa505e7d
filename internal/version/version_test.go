package version

import (
	"runtime/debug"
	"testing"
)

// TestResolve: the build information's module version and commit are
// reported (what `go install module@version` records), ldflags override each
// only where given, and a tree built from a checkout without a tag says dev.
func TestResolve(t *testing.T) {
	installed := &debug.BuildInfo{Main: debug.Module{Path: "github.com/gpuform/gpuform", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "false"}}}
	checkout := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "feed"}, {Key: "vcs.modified", Value: "true"}}}
	tests := []struct {
		name             string
		info             *debug.BuildInfo
		ok               bool
		ldVer, ldCommit  string
		wantVer, wantRev string
	}{
		{"go install of a tag", installed, true, "", "", "v1.4.0", "0123abcd"},
		{"ldflags version only", installed, true, "v9.9.9", "", "v9.9.9", "0123abcd"},
		{"ldflags both", installed, true, "v9.9.9", "beef", "v9.9.9", "beef"},
		{"checkout with changes", checkout, true, "", "", "dev", "feed-dirty"},
		{"no build information", nil, false, "", "", "dev", ""},
		{"no build information, ldflags", nil, false, "v2.0.0", "c0ffee", "v2.0.0", "c0ffee"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ver, rev := Resolve(tt.info, tt.ok, tt.ldVer, tt.ldCommit)
			if ver != tt.wantVer || rev != tt.wantRev {
				t.Errorf("Resolve = %q, %q; want %q, %q", ver, rev, tt.wantVer, tt.wantRev)
			}
		})
	}
}
