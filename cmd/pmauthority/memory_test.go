package main

import (
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestPlanMemory: --max-memory defaults to half of the lowest memory
// limit of the process's cgroup and its ancestors (v2 or v1), else of the
// machine's memory; --max-body-memory to a quarter of it, at most
// 256 MiB; the Go soft limit is above both, within 90 % of what is
// available. Given flags win.
func TestPlanMemory(t *testing.T) {
	write := func(root, name, content string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const meminfo = "MemTotal:       16384000 kB\nMemFree:         1000 kB\n"
	v2 := t.TempDir()
	write(v2, "proc/self/cgroup", "0::/app/worker\n")
	write(v2, "proc/meminfo", meminfo)
	write(v2, "sys/fs/cgroup/app/worker/memory.max", "max\n")
	write(v2, "sys/fs/cgroup/app/memory.max", "1073741824\n")
	v1 := t.TempDir()
	write(v1, "proc/self/cgroup", "4:memory:/docker/abc\n3:cpu:/\n")
	write(v1, "proc/meminfo", meminfo)
	write(v1, "sys/fs/cgroup/memory/memory.limit_in_bytes", "536870912\n")
	unlimited := t.TempDir()
	write(unlimited, "proc/self/cgroup", "0::/\n")
	write(unlimited, "proc/meminfo", meminfo)
	write(unlimited, "sys/fs/cgroup/memory.max", "max\n")
	for _, tc := range []struct {
		name            string
		root            string
		maxMemory, body int64
		want            memoryPlan
	}{
		{"v2 parent", v2, 0, 0, memoryPlan{available: 1 << 30, source: "/sys/fs/cgroup/app/memory.max",
			maxMemory: (1 << 30) * 70 / 100, docMemory: (1 << 30) * 70 / 100 * 50 / 100, bodyMemory: (1 << 30) * 70 / 100 / 8, goLimit: (1 << 30) * 70 / 100}},
		{"v1", v1, 0, 0, memoryPlan{available: 512 << 20, source: "/sys/fs/cgroup/memory/memory.limit_in_bytes",
			maxMemory: (512 << 20) * 70 / 100, docMemory: (512 << 20) * 70 / 100 * 50 / 100, bodyMemory: (512 << 20) * 70 / 100 / 8, goLimit: (512 << 20) * 70 / 100}},
		{"meminfo", unlimited, 0, 0, memoryPlan{available: 16384000 << 10, source: "/proc/meminfo MemTotal",
			maxMemory: (16384000 << 10) * 70 / 100, docMemory: (16384000 << 10) * 70 / 100 * 50 / 100, bodyMemory: 256 << 20, goLimit: (16384000 << 10) * 70 / 100}},
		{"flags", v2, 300 << 20, 0, memoryPlan{available: 1 << 30, source: "/sys/fs/cgroup/app/memory.max",
			maxMemory: 300 << 20, docMemory: 150 << 20, bodyMemory: (300 << 20) / 8, goLimit: 300 << 20}},
		{"flags over the cgroup", v2, 2 << 30, 10 << 20, memoryPlan{available: 1 << 30, source: "/sys/fs/cgroup/app/memory.max",
			maxMemory: 2 << 30, docMemory: 1 << 30, bodyMemory: 10 << 20, goLimit: (1 << 30) / 10 * 9}},
		{"nothing known", t.TempDir(), 0, 0, memoryPlan{source: "unknown", maxMemory: 1 << 30, docMemory: 1 << 29, bodyMemory: 128 << 20, goLimit: 1 << 30}},
	} {
		if got := planMemory(tc.root, tc.maxMemory, tc.body); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestServeMemoryFlags: --max-memory and --max-body-memory reach the
// authority and the server, and the budgets and the Go soft limit set
// from them are logged at start.
func TestServeMemoryFlags(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	t.Setenv("GOMEMLIMIT", "")
	addr, stderr, stop := startServe(t, "--store", "memory", "--max-memory", "300MiB", "--max-body-memory", "1048576")
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Errorf("Go memory limit %d, want %d", got, 300<<20)
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	logs := stderr.String()
	for _, want := range []string{
		`max_memory="300 MiB" documents="150 MiB" max_body_memory="1 MiB"`, // the memory budgets line
		`go_memory_limit="300 MiB"`,
		`max_body_memory="1 MiB" documents_memory="150 MiB"`, // the serving line
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log has no %q:\n%s", want, logs)
		}
	}
}
