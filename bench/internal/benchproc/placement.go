package benchproc

import (
	"fmt"
	"os/exec"
	"slices"
)

// A Placement is where a server and its load generator run.
type Placement struct {
	Name, About string
	// Server and Load prefix the server's and the load generator's
	// command lines.
	Server, Load []string
}

// Placements are the placements a run can measure in.
var Placements = []Placement{
	{"pinned", "server on CPU 0, load generator on CPU 1 (taskset)", []string{"taskset", "-c", "0"}, []string{"taskset", "-c", "1"}},
	{"unpinned", "server and load generator free to use both CPUs", nil, nil},
}

// FindPlacement returns the placement called name, nil if there is none.
func FindPlacement(name string) *Placement {
	for i := range Placements {
		if Placements[i].Name == name {
			return &Placements[i]
		}
	}
	return nil
}

// CheckPlacements checks that every name is a placement's and, when
// taskset (which pins) is missing, leaves "pinned" out: unpinned says so.
func CheckPlacements(names []string) (kept []string, unpinned bool, err error) {
	for _, name := range names {
		if FindPlacement(name) == nil {
			return nil, false, fmt.Errorf("unknown placement %q", name)
		}
	}
	if slices.Contains(names, "pinned") {
		if _, err := exec.LookPath("taskset"); err != nil {
			return slices.DeleteFunc(slices.Clone(names), func(p string) bool { return p == "pinned" }), true, nil
		}
	}
	return names, false, nil
}
