package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/internal/testutil"
)

// TestServeAuthFlags: the auth flags' errors, and the safe default.
func TestServeAuthFlags(t *testing.T) {
	dir := t.TempDir()
	secret, short, pub := filepath.Join(dir, "secret"), filepath.Join(dir, "short"), filepath.Join(dir, "key.pem")
	os.WriteFile(secret, []byte("0123456789abcdef0123456789abcdef\n"), 0o600)
	os.WriteFile(short, []byte("short\n"), 0o600)
	os.WriteFile(pub, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:8080"}, "refusing to serve 0.0.0.0:8080 without authentication"},
		{[]string{"--addr", ":8080"}, "--insecure-no-auth"},
		{[]string{"--addr", "192.0.2.1:8080"}, "without authentication"},
		{[]string{"--addr", "example.com:8080"}, "without authentication"},
		{[]string{"--jwt-secret-file", secret, "--insecure-no-auth"}, "contradicts"},
		{[]string{"--jwt-issuer", "x"}, "need a key"},
		{[]string{"--auth-apply"}, "need a key"},
		{[]string{"--jwt-secret-file", secret, "--jwt-clock-skew", "-1s"}, "--jwt-clock-skew must not be negative"},
		{[]string{"--jwt-secret-file", secret, "--auth-webhook", "http://127.0.0.1:1/"}, "decides alone"},
		{[]string{"--jwt-secret-file", short}, "HS256 secret of 5 bytes: want at least 32"},
		{[]string{"--jwt-secret-file", filepath.Join(dir, "missing")}, "--jwt-secret-file: open"},
		{[]string{"--jwt-public-key", pub}, "want the public key"},
		{[]string{"--jwks-url", "ftp://x"}, "want an http:// or https:// URL"},
		{[]string{"--auth-webhook", "x"}, "want an http:// or https:// URL"},
		{[]string{"--jwt-secret-file", secret, "--max-token", "0"}, "--max-token must be positive"},
		{[]string{"--jwt-secret-file", secret, "--auth-cache", "0"}, "--auth-cache must be positive"},
		{[]string{"--auth-webhook", "http://127.0.0.1:1/", "--auth-webhook-max-calls", "0"}, "--auth-webhook-max-calls must be positive"},
		{[]string{"--auth-webhook", "http://127.0.0.1:1/", "--auth-webhook-wait", "0s"}, "--auth-webhook-wait must be positive"},
		{[]string{"--auth-webhook", "http://127.0.0.1:1/", "--auth-webhook-refusal-ttl", "-1s"}, "must not be negative"},
	} {
		stderr := &testutil.LogBuffer{}
		if code := serve(context.Background(), append([]string{"--store", "memory"}, tc.args...), stderr, nil); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("serve %q: exit %d, want 2; stderr lacks %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
	for addr, loop := range map[string]bool{"127.0.0.1:0": true, "127.1.2.3:80": true, "[::1]:80": true, "localhost:80": true,
		"0.0.0.0:80": false, ":80": false, "[::]:80": false, "10.0.0.1:80": false, "example.com:80": false, "bad": false} {
		if loopbackAddr(addr) != loop {
			t.Errorf("loopbackAddr(%q) = %v", addr, !loop)
		}
	}
	// --insecure-no-auth on a non-loopback address: allowed, with a
	// warning at start.
	f := &authFlags{insecureNoAuth: true, webhookTimeout: 1, webhookCalls: 1, webhookWait: 1, maxToken: 1, cacheSize: 1}
	if err := f.check("0.0.0.0:80"); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if p, err := f.policy(slog.New(slog.NewTextHandler(&log, nil))); p != nil || err != nil {
		t.Fatalf("policy %v, %v", p, err)
	}
	if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "--insecure-no-auth") {
		t.Errorf("no warning: %s", log.String())
	}
}

// TestServeToken: serve --jwt-secret-file refuses requests without a
// token (401) and takes those that `pmauthority token` mints.
func TestServeToken(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("0123456789abcdef0123456789abcdef0123\n"), 0o600)
	mint := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"token", "--secret-file", secret}, args...), nil, &stdout, &stderr); code != 0 {
			t.Fatalf("token %q: exit %d: %s", args, code, stderr.String())
		}
		return strings.TrimSpace(stdout.String())
	}
	edit := mint("--sub", "alice", "--name", "Alice", "--doc", "team-a.*=edit", "--ttl", "1h")
	read := mint("--sub", "bob", "--doc", "team-a.notes=read")
	addr, stderr, _ := startServe(t, "--store", "memory", "--jwt-secret-file", secret, "--max-token", strconv.Itoa(len(edit)))
	long := mint("--sub", "alice-with-a-longer-name", "--doc", "team-a.*=edit")
	do := func(method, path, body, token string) int {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	steps := `{"version":0,"clientID":1,"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"hi"}]}}]}`
	for _, tc := range []struct {
		method, path, body, token string
		want                      int
	}{
		{"GET", "/docs/team-a.notes", "", "", 401},
		{"GET", "/docs/team-a.notes", "", "not.a.token", 401},
		{"GET", "/docs/team-a.notes", "", edit, 200},
		{"GET", "/docs/team-a.notes", "", long, 401},
		{"GET", "/docs/team-a.notes", "", read, 200},
		{"POST", "/docs/team-a.notes/events", steps, read, 403},
		{"POST", "/docs/team-a.notes/events", steps, edit, 200},
		{"GET", "/docs/team-b.x", "", edit, 403},
		{"GET", "/healthz", "", "", 200},
	} {
		if got := do(tc.method, tc.path, tc.body, tc.token); got != tc.want {
			t.Errorf("%s %s: %d, want %d\n%s", tc.method, tc.path, got, tc.want, stderr)
		}
	}
	for _, args := range [][]string{{"--sub", "a", "--doc", "x=owner"}, {"--doc", "x=read"}, {"--sub", "a", "--ttl", "0s"}} {
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"token", "--secret-file", secret}, args...), nil, &stdout, &stderr); code != 2 || stdout.Len() > 0 {
			t.Errorf("token %q: exit %d, printed %q", args, code, stdout.String())
		}
	}
}
