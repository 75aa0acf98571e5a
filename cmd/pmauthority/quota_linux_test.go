package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
)

// TestServeDeleteOnFullDisk fills the file system of --data (a tmpfs of
// 40 MiB) through the API until submissions answer 503: DELETE of a
// document still answers 204 (it answered 503), gives room back to the
// file system, and the store takes writes again.
func TestServeDeleteOnFullDisk(t *testing.T) {
	data := t.TempDir()
	if err := syscall.Mount("tmpfs", data, "tmpfs", 0, "size=40m"); err != nil {
		t.Skipf("cannot mount a tmpfs for a full disk (needs root, as in CI): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(data, 0); err != nil {
			t.Errorf("unmount %s: %v", data, err)
		}
	})
	addr, _, _ := startServe(t, "--data", data, "--sync", "normal")
	step := `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"` + strings.Repeat("f", 1<<20) + `"}]}}`
	full := -1
	for i := 0; i < 100 && full < 0; i++ {
		status, body := httpDo(t, addr, "POST", fmt.Sprintf("/docs/d%d/events", i), `{"version":0,"clientID":1,"steps":[`+step+`]}`)
		switch status {
		case 200:
		case 503:
			full = i
		default:
			t.Fatalf("POST to d%d: %d %s", i, status, body)
		}
	}
	if full < 1 {
		t.Fatalf("the disk of 40 MiB never filled (%d)", full)
	}
	if status, body := httpDo(t, addr, "DELETE", "/docs/d0", ""); status != 204 {
		t.Fatalf("DELETE on the full disk (after %d documents of 1 MiB): %d %s", full, status, body)
	}
	if status, _ := httpDo(t, addr, "GET", "/docs/d0/steps", ""); status != 404 {
		t.Errorf("GET of the deleted document: %d", status)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(data, &fs); err != nil {
		t.Fatal(err)
	}
	t.Logf("the DELETE after %d documents of 1 MiB freed %d bytes", full, int64(fs.Bavail)*fs.Bsize)
	if fs.Bavail == 0 {
		t.Error("the DELETE freed nothing on the file system")
	}
	// What it held takes new steps.
	status, body := httpDo(t, addr, "POST", fmt.Sprintf("/docs/d%d/events", full), `{"version":0,"clientID":1,"steps":[`+step+`]}`)
	if status != 200 {
		t.Errorf("POST after the DELETE: %d %s", status, body)
	}
}
