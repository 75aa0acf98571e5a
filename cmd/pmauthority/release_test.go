package main

import (
	"bufio"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRelease builds two targets with scripts/release, the native one and
// another, checks SHA256SUMS and that the native binary is static and
// prints the version, commit and date stamped in.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two release binaries (-short)")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("scripts/release needs git: %v", err)
	}
	native := runtime.GOOS + "/" + runtime.GOARCH
	other := "linux/arm64"
	if native == other {
		other = "linux/amd64"
	}
	out := t.TempDir()
	cmd := exec.Command("../../scripts/release", "--version", "v0.0.0-test", "--out", out, "--targets", native+" "+other)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, b)
	}

	sums, err := os.Open(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer sums.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(sums)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", sc.Text())
		}
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: sha256 %x, SHA256SUMS says %s", name, got, sum)
		}
		listed[name] = true
	}
	name := func(target string) string {
		n := "pmauthority-v0.0.0-test-" + strings.ReplaceAll(target, "/", "-")
		if strings.HasPrefix(target, "windows/") {
			n += ".exe"
		}
		return n
	}
	for _, target := range []string{native, other} {
		if !listed[name(target)] {
			t.Errorf("SHA256SUMS does not list %s: %v", name(target), listed)
		}
	}

	bin := filepath.Join(out, name(native))
	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s has a program interpreter: not a static binary", bin)
			}
		}
		f.Close()
	}
	got, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, got)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pmauthority v0.0.0-test\n", "commit " + strings.TrimSpace(string(head)), "built 20"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("version printed %q, want it to contain %q", got, want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	var out, errb strings.Builder
	if code := run([]string{"version"}, nil, &out, &errb); code != 0 {
		t.Fatalf("version: exit %d, %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "pmauthority ") || !strings.Contains(out.String(), runtime.Version()) {
		t.Errorf("version printed %q", out.String())
	}
	if code := run([]string{"version", "x"}, nil, &out, &errb); code != 2 {
		t.Errorf("version x: exit %d, want 2", code)
	}
}
