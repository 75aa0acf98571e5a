package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testImage builds the image of the Dockerfile from the release in ctx
// (dist/ as scripts/release made it, version v0.0.0-docker) with podman
// and runs it: the server starts as user 65532 with its store in the
// /data volume, the image's HEALTHCHECK reports it healthy, the binary
// is the release's, and it exits 0 on podman stop (SIGTERM). Skipped without podman unless
// PMA_REQUIRE_CONTAINER=1 (scripts/test sets it once it has installed
// Debian's podman), which makes that a failure.
func testImage(t *testing.T, ctx string) {
	podman, err := exec.LookPath("podman")
	if err != nil {
		if os.Getenv("PMA_REQUIRE_CONTAINER") == "1" {
			t.Fatal("podman missing and PMA_REQUIRE_CONTAINER=1 (Debian: apt-get install podman runc)")
		}
		t.Skip("podman missing (Debian: apt-get install podman runc); set PMA_REQUIRE_CONTAINER=1 to fail instead")
	}
	for _, name := range []string{"Dockerfile", ".dockerignore"} {
		data, err := os.ReadFile(filepath.Join("../..", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ctx, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(podman, args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			err = fmt.Errorf("podman %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return strings.TrimSpace(stdout.String()), err
	}
	tag := fmt.Sprintf("localhost/pmauthority-test:%d", time.Now().UnixNano())
	// The docker format keeps the HEALTHCHECK, which OCI images lack.
	if _, err := pod("build", "--format", "docker", "--layers=false", "--build-arg", "VERSION=v0.0.0-docker", "-q", "-t", tag, ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pod("rmi", "-f", tag) })

	// Where the host lets podman's default runtime set no limits (a
	// container in a container), runc with the limits the test has.
	run := []string{"run", "-d", "--network", "none"}
	if _, err := exec.LookPath("runc"); err == nil {
		run = append(run, "--runtime", "runc")
	}
	var nofile syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile) == nil {
		run = append(run, "--ulimit", fmt.Sprintf("nofile=%d:%d", nofile.Cur, nofile.Max), "--ulimit", "nproc=4096:4096")
	}
	id, err := pod(append(run, tag, "--insecure-no-auth", "--drain-delay", "0")...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := exec.Command(podman, "logs", id).CombinedOutput()
			t.Logf("container log:\n%s", logs)
		}
		pod("rm", "-f", "-t", "0", "-v", id)
	})

	// The image's HEALTHCHECK, run once the server listens.
	for i := 0; ; i++ {
		_, err := pod("healthcheck", "run", id)
		if err == nil {
			break
		}
		if i == 100 {
			t.Fatalf("the container never became healthy: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if status, err := pod("inspect", "--format", "{{.State.Health.Status}}", id); err != nil || status != "healthy" {
		t.Errorf("health %q, %v; want healthy", status, err)
	}
	if out, err := pod("exec", id, "/pmauthority", "version"); err != nil || !strings.HasPrefix(out, "pmauthority v0.0.0-docker\n") {
		t.Errorf("version in the image: %q, %v", out, err)
	}
	// The server runs as 65532 and opened its store in the volume.
	if logs, err := exec.Command(podman, "logs", id).CombinedOutput(); err != nil || !strings.Contains(string(logs), "path=/data/pmauthority.db") {
		t.Errorf("container log: %v\n%s\nwant the store opened in /data", err, logs)
	}
	if out, err := pod("top", id, "user", "args"); err != nil || !strings.Contains(out, "65532") {
		t.Errorf("podman top: %q, %v; want the server running as 65532", out, err)
	}
	// SIGTERM (podman stop) ends it cleanly.
	if _, err := pod("stop", "-t", "10", id); err != nil {
		t.Fatal(err)
	}
	if code, err := pod("inspect", "--format", "{{.State.ExitCode}}", id); err != nil || code != "0" {
		t.Errorf("exit code after podman stop: %q, %v; want 0", code, err)
	}
}
