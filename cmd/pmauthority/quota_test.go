package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// httpDo sends a request to the server at addr and returns its status
// and body.
func httpDo(t *testing.T, addr, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// dbSize returns the size of the SQLite store in data, once the server
// is stopped (its write-ahead log checkpointed into it).
func dbSize(t *testing.T, data string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(data, "pmauthority.db"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestServeCheckpointsShare is the reproduction: 100 POST
// /docs/{id}/checkpoints of an unchanged document of 2 MiB grew the
// SQLite store by 212 MB (a copy each); they share one now.
func TestServeCheckpointsShare(t *testing.T) {
	data := t.TempDir()
	args := []string{"--data", data, "--sync", "normal"}
	addr, stderr, stop := startServe(t, args...)
	doc := `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"` + strings.Repeat("x", 2<<20) + `"}]}]}`
	if status, body := httpDo(t, addr, "POST", "/docs", `{"id":"big","doc":`+doc+`}`); status != 201 {
		t.Fatalf("POST /docs: %d %s", status, body)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	before := dbSize(t, data)

	addr, stderr, stop = startServe(t, args...)
	for i := range 100 {
		if status, body := httpDo(t, addr, "POST", "/docs/big/checkpoints", fmt.Sprintf(`{"name":"cp-%d"}`, i)); status != 201 {
			t.Fatalf("checkpoint %d: %d %s", i, status, body)
		}
	}
	if status, body := httpDo(t, addr, "GET", "/docs/big/checkpoints", ""); status != 200 || strings.Count(body, `"name"`) != 100 {
		t.Fatalf("GET checkpoints: %d, %d names", status, strings.Count(body, `"name"`))
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	grown := dbSize(t, data) - before
	t.Logf("100 checkpoints of a document of 2 MiB grew the store by %d bytes", grown)
	if grown > 3<<20 {
		t.Errorf("100 checkpoints of an unchanged document of 2 MiB grew the store by %d bytes, want about one copy (2 MiB)", grown)
	}
}
