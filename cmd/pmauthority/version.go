package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Set by release builds (scripts/release) with -ldflags -X; otherwise
// taken from the build information that go build records.
var (
	version = ""
	commit  = ""
	date    = ""
)

// buildVersion returns the module version, the commit and the build (or
// commit) date of this binary, "unknown" for what is not known.
func buildVersion() (ver, rev, when string) {
	ver, rev, when = version, commit, date
	if info, ok := debug.ReadBuildInfo(); ok {
		if ver == "" {
			ver = info.Main.Version
		}
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if rev == "" {
					rev = s.Value
				}
			case "vcs.time":
				if when == "" {
					when = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && commit == "" && rev != "" {
			rev += "+modified"
		}
	}
	for _, s := range []*string{&ver, &rev, &when} {
		if *s == "" {
			*s = "unknown"
		}
	}
	return ver, rev, when
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "pmauthority version: takes no arguments, got %q\n", args)
		return 2
	}
	ver, rev, when := buildVersion()
	fmt.Fprintf(stdout, "pmauthority %s\ncommit %s\nbuilt %s\n%s %s/%s\n", ver, rev, when, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}
