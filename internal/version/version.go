// Package version names the Switchyard build a binary was made from.
package version

import "runtime/debug"

// stamped is set when the binary is linked: make build passes
// -ldflags "-X github.com/switchyardhq/switchyard/internal/version.stamped=$(git describe --tags --always --dirty)".
// A plain go build leaves it empty.
var stamped string

// String is the version of this build: the stamped one; else the version
// the Go toolchain recorded for the main module (a tag, or a
// pseudo-version for a build from a git checkout); else "devel".
func String() string {
	if stamped != "" {
		return stamped
	}
	return recorded(debug.ReadBuildInfo())
}

func recorded(info *debug.BuildInfo, ok bool) string {
	if ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}
