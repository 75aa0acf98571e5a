package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dockerInstr is an instruction of a Dockerfile: its keyword (upper
// case) and the rest of its line, continuations joined.
type dockerInstr struct {
	cmd, args string
}

// parseDockerfile returns the instructions of a Dockerfile (comments and
// blank lines left out).
func parseDockerfile(t *testing.T, path string) []dockerInstr {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []dockerInstr
	var cur strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, dockerInstr{strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// execForm returns the JSON array of an exec-form CMD, ENTRYPOINT or
// HEALTHCHECK CMD argument, failing on the shell form (a FROM scratch
// image has no shell).
func execForm(t *testing.T, what, args string) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(args), &argv); err != nil || len(argv) == 0 {
		t.Fatalf("Dockerfile: %s %s: want the exec form [\"/pmauthority\", …] (the image has no shell)", what, args)
	}
	return argv
}

// TestDockerfile checks the Dockerfile without a container engine: one
// stage FROM scratch; a USER that is not root; VOLUME /data; a
// HEALTHCHECK that runs `pmauthority healthcheck`; an ENTRYPOINT that
// runs serve on /data; and every COPY source present after
// scripts/release (--targets linux/amd64 linux/arm64, as the Dockerfile
// says), for both architectures, and let through by .dockerignore; then
// builds and runs the image with podman (testImage).
func TestDockerfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two release binaries (-short)")
	}
	instrs := parseDockerfile(t, "../../Dockerfile")
	var froms, users, volumes []string
	var health, entry []string
	var copies []dockerInstr
	args := map[string]string{}
	for _, in := range instrs {
		switch in.cmd {
		case "FROM":
			froms = append(froms, in.args)
		case "USER":
			users = append(users, in.args)
		case "VOLUME":
			if strings.HasPrefix(in.args, "[") {
				volumes = append(volumes, execForm(t, "VOLUME", in.args)...)
			} else {
				volumes = append(volumes, strings.Fields(in.args)...)
			}
		case "HEALTHCHECK":
			i := strings.Index(in.args, "CMD ")
			if i < 0 {
				t.Fatalf("Dockerfile: HEALTHCHECK %s: no CMD", in.args)
			}
			health = execForm(t, "HEALTHCHECK CMD", in.args[i+len("CMD "):])
		case "ENTRYPOINT":
			entry = execForm(t, "ENTRYPOINT", in.args)
		case "COPY":
			copies = append(copies, in)
		case "ARG":
			name, def, _ := strings.Cut(in.args, "=")
			args[name] = def
		}
	}
	if len(froms) != 1 || froms[0] != "scratch" {
		t.Errorf("Dockerfile: FROM %q, want one stage FROM scratch", froms)
	}
	if len(users) == 0 {
		t.Error("Dockerfile: no USER: the server would run as root")
	}
	for _, u := range users {
		if id, _, _ := strings.Cut(u, ":"); id == "0" || id == "root" {
			t.Errorf("Dockerfile: USER %s is root", u)
		}
	}
	if !slices.Contains(volumes, "/data") {
		t.Errorf("Dockerfile: VOLUME %q, want /data", volumes)
	}
	if len(health) < 2 || health[0] != "/pmauthority" || health[1] != "healthcheck" {
		t.Errorf("Dockerfile: HEALTHCHECK CMD %q, want /pmauthority healthcheck …", health)
	}
	if len(entry) < 2 || entry[0] != "/pmauthority" || entry[1] != "serve" || !strings.Contains(strings.Join(entry, " "), "--data /data") {
		t.Errorf("Dockerfile: ENTRYPOINT %q, want /pmauthority serve … --data /data", entry)
	}
	if _, ok := args["TARGETARCH"]; !ok {
		t.Error("Dockerfile: no ARG TARGETARCH: the binary would not follow --platform")
	}

	// The release the Dockerfile's first lines make.
	ctx := t.TempDir()
	cmd := exec.Command("../../scripts/release", "--version", "v0.0.0-docker", "--out", filepath.Join(ctx, "dist"),
		"--targets", "linux/amd64 linux/arm64")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, b)
	}
	ignore, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		for _, in := range copies {
			fields := strings.Fields(in.args)
			var srcs []string
			for _, f := range fields[:len(fields)-1] {
				if !strings.HasPrefix(f, "--") {
					srcs = append(srcs, f)
				}
			}
			for _, src := range srcs {
				src = strings.NewReplacer("${VERSION}", "v0.0.0-docker", "${TARGETARCH}", arch).Replace(src)
				if _, err := os.Stat(filepath.Join(ctx, src)); err != nil {
					t.Errorf("Dockerfile: COPY %s (%s): not made by scripts/release: %v", in.args, arch, err)
				}
				if !dockerIncluded(string(ignore), strings.TrimSuffix(src, "/")) {
					t.Errorf("Dockerfile: COPY %s: .dockerignore leaves %s out", in.args, src)
				}
			}
		}
	}
	if t.Failed() {
		return
	}
	t.Run("podman", func(t *testing.T) { testImage(t, ctx) })
}

// dockerIncluded reports whether .dockerignore (its lines, patterns
// with ! exceptions, the last match deciding) lets path through.
func dockerIncluded(ignore, path string) bool {
	included := true
	for _, line := range strings.Split(ignore, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		keep := strings.HasPrefix(line, "!")
		pattern := strings.TrimPrefix(line, "!")
		if ok, _ := filepath.Match(pattern, path); ok {
			included = keep
		}
	}
	return included
}
