package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/internal/applyreq/reqtest"
)

// syncBuffer is stderr shared with the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestServe runs `pmauthority serve` on a free port with a --schema, sends
// requests, and stops it as SIGTERM would (its context ends).
func TestServe(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "lines.json")
	if err := os.WriteFile(spec, []byte(`{"nodes":{"doc":{"content":"line*"},"line":{"content":"text*"},"text":{}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &syncBuffer{}
	addrc := make(chan string, 1)
	code := make(chan int, 1)
	go func() {
		code <- serve(ctx, []string{"--addr", "127.0.0.1:0", "--default-schema", "text", "--schema", "lines=" + spec,
			"--max-body", "1KiB", "--log-requests", "--log-slow", "0", "--log-format", "json"}, stderr, func(addr string) { addrc <- addr })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case c := <-code:
		t.Fatalf("serve exited with %d: %s", c, stderr)
	}
	post := func(body string) (int, string) {
		resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := post(reqtest.Seed); status != 200 || body != reqtest.SeedAnswer {
		t.Fatalf("seed: %d %s", status, body)
	}
	if status, body := post(`{"schema":"lines","doc":{"type":"doc","content":[{"type":"line"}]}}`); status != 200 || body != `{"doc":{"type":"doc","content":[{"type":"line"}]}}` {
		t.Fatalf("--schema: %d %s", status, body)
	}
	if status, _ := post(`{"doc":{"type":"doc"},"x":"` + strings.Repeat("x", 1024) + `"}`); status != 413 {
		t.Fatalf("--max-body: %d", status)
	}
	resp, err := http.Get("http://" + addr + "/v1/schemas")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `{"default":"text","schemas":["basic","lines","text"]}` {
		t.Fatalf("/v1/schemas: %s", b)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit code %d: %s", c, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	logs := stderr.String()
	for _, want := range []string{`"msg":"pmauthority serving"`, `"max_body_bytes":1024`, `"schemas":["basic","lines","text"]`,
		`"msg":"request","method":"POST","path":"/","status":200,"bytes":65`, `"status":413`, `"msg":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
}

func TestServeFlags(t *testing.T) {
	dir := t.TempDir()
	bad, good := filepath.Join(dir, "bad.json"), filepath.Join(dir, "good.json")
	os.WriteFile(bad, []byte(`{"nodes":{"doc":{"content":"nope+"}}}`), 0o644)
	os.WriteFile(good, []byte(`{"nodes":{"doc":{"content":"text*"},"text":{}}}`), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--default-schema", "nope"}, 2, `default schema "nope" is not one of [basic text]`},
		{[]string{"--schema", "x"}, 2, "want NAME=FILE"},
		{[]string{"--schema", "x=/does/not/exist"}, 2, "no such file"},
		{[]string{"--schema", "x=" + bad}, 2, "bad.json"},
		{[]string{"--schema", "basic=" + good}, 2, `"basic" is taken by a built-in`},
		{[]string{"--schema", "x=" + good, "--schema", "x=" + good}, 2, `"x" given twice`},
		{[]string{"--max-body", "8XB"}, 2, "want a size in bytes"},
		{[]string{"--max-steps", "0"}, 2, "--max-steps must be positive"},
		{[]string{"--log-format", "xml"}, 2, "--log-format must be text or json"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
		{[]string{"--addr", "256.0.0.1:bad"}, 1, "pmauthority serve:"},
		{[]string{"-h"}, 0, "--data"},
	} {
		stderr := &syncBuffer{}
		if code := serve(context.Background(), tc.args, stderr, nil); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("serve %q: exit %d, want %d; stderr lacks %q:\n%s", tc.args, code, tc.code, tc.want, stderr)
		}
	}
}

func TestSizeFlag(t *testing.T) {
	for in, want := range map[string]int64{"8388608": 8 << 20, "8MiB": 8 << 20, "64KiB": 64 << 10, "1GiB": 1 << 30, "100B": 100, "0": 0} {
		var s sizeFlag
		if err := s.Set(in); err != nil || int64(s) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, s, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "1.5MiB", "8 MB", "9999999999GiB"} {
		var s sizeFlag
		if err := s.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, s)
		}
	}
	for n, want := range map[int64]string{8 << 20: "8MiB", 1000: "1000", 2048: "2KiB", 0: "0"} {
		s := sizeFlag(n)
		if got := s.String(); got != want {
			t.Errorf("String(%d) = %q, want %q", n, got, want)
		}
	}
}
