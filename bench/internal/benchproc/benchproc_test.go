package benchproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestCheckLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:80": true, "localhost:1": true, "[::1]:8080": true, "127.1.2.3:9": true,
		"10.0.0.1:80": false, "example.com:80": false, "0.0.0.0:80": false,
	} {
		if err := CheckLoopback(addr); (err == nil) != ok {
			t.Errorf("CheckLoopback(%q) = %v, want ok %v", addr, err, ok)
		}
	}
}

func TestSplitListLastLines(t *testing.T) {
	if got := SplitList(" a, ,b,"); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("SplitList = %q, want [a b]", got)
	}
	if got := LastLines([]byte("1\n2\n3\n"), 2); got != "2 | 3" {
		t.Errorf("LastLines = %q, want %q", got, "2 | 3")
	}
}

func TestServerStop(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command")
	}
	s, err := StartServer(exec.Command("sleep", "60"), "127.0.0.1:0", t.TempDir()+"/log")
	if err != nil {
		t.Fatal(err)
	}
	if done, _ := s.Exited(); done {
		t.Fatal("exited at once")
	}
	s.Stop(5 * time.Second)
	if done, _ := s.Exited(); !done {
		t.Error("still running after Stop")
	}
	if _, err := ProcStatus(s.Pid(), "VmRSS"); err == nil {
		t.Error("ProcStatus of an ended process: no error")
	}
}

func TestCheckPlacements(t *testing.T) {
	if _, _, err := CheckPlacements([]string{"pinned", "sideways"}); err == nil {
		t.Error("unknown placement: no error")
	}
	kept, unpinned, err := CheckPlacements([]string{"pinned", "unpinned"})
	if err != nil {
		t.Fatal(err)
	}
	if _, lookErr := exec.LookPath("taskset"); (lookErr != nil) != unpinned || len(kept) != 2-btoi(unpinned) {
		t.Errorf("CheckPlacements = %q, %v (taskset: %v)", kept, unpinned, lookErr)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestRepoRoot: from inside the bench module, RepoRoot finds the root
// module's folder, not bench's.
func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "pmauthority")); err != nil {
		t.Errorf("RepoRoot() = %s, which has no cmd/pmauthority: %v", root, err)
	}
	for _, c := range []struct{ gomod, want string }{
		{"module github.com/pmauthority/pmauthority\n\ngo 1.26\n", rootModule},
		{"// comment\nmodule github.com/pmauthority/pmauthority/bench\n", rootModule + "/bench"},
		{"module \"example.com/x\"\n", "example.com/x"},
		{"go 1.26\n", ""},
	} {
		if got := modulePath([]byte(c.gomod)); got != c.want {
			t.Errorf("modulePath(%q) = %q, want %q", c.gomod, got, c.want)
		}
	}
}
