package main

import (
	"fmt"
	"os"
	"path/filepath"
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
	// Steps that replace the text of d0 with 1 MiB of new text, until the
	// disk is full; a small document e beside it.
	const mib = 1 << 20
	replace := func(v int, to int) string {
		text := strings.Repeat(string(rune('a'+v%26)), mib)
		return fmt.Sprintf(`{"version":%d,"clientID":1,"steps":[{"stepType":"replace","from":1,"to":%d,"slice":{"content":[{"type":"text","text":"%s"}]}}]}`, v, to, text)
	}
	if status, body := httpDo(t, addr, "POST", "/docs/e/events", `{"version":0,"clientID":1,"steps":[]}`); status != 200 {
		t.Fatalf("POST to e: %d %s", status, body)
	}
	full := -1
	for v := 0; v < 100 && full < 0; v++ {
		to := 1 + mib
		if v == 0 {
			to = 1
		}
		status, body := httpDo(t, addr, "POST", "/docs/d0/events", replace(v, to))
		switch status {
		case 200:
		case 503:
			full = v
		default:
			t.Fatalf("step %d: %d %s", v, status, body)
		}
	}
	if full < 1 {
		t.Fatalf("the disk of 40 MiB never filled (%d)", full)
	}
	// Whatever room is left goes to another file, as on a full disk.
	filler, err := os.Create(filepath.Join(data, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer filler.Close()
	for buf := make([]byte, 4096); ; {
		if _, err := filler.Write(buf); err != nil {
			break
		}
	}
	if status, body := httpDo(t, addr, "DELETE", "/docs/d0", ""); status != 204 {
		t.Fatalf("DELETE on the full disk (after %d steps of 1 MiB): %d %s", full, status, body)
	}
	if status, _ := httpDo(t, addr, "GET", "/docs/d0/steps", ""); status != 404 {
		t.Errorf("GET of the deleted document: %d", status)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(data, &fs); err != nil {
		t.Fatal(err)
	}
	t.Logf("the DELETE after %d steps of 1 MiB freed %d bytes", full, int64(fs.Bavail)*fs.Bsize)
	if fs.Bavail == 0 {
		t.Error("the DELETE freed nothing on the file system")
	}
	// The store takes steps again.
	if status, body := httpDo(t, addr, "POST", "/docs/e/events", replace(0, 1)); status != 200 {
		t.Errorf("POST after the DELETE: %d %s", status, body)
	}
}
