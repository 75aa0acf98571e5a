package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/internal/testutil"
	"github.com/pmauthority/pmauthority/webhook"
)

// TestServeWebhook runs serve with --webhook to a receiver: steps posted
// to two documents reach it as signed notices with the document, the
// last at each document's final version, and a notice still pending at
// the signal (a long debounce) is delivered on the way out.
func TestServeWebhook(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("webhook secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	type notice struct {
		Doc      string
		Version  int64
		Updated  time.Time
		Document json.RawMessage
	}
	var mu sync.Mutex
	var got []notice
	bad := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var n notice
		mu.Lock()
		defer mu.Unlock()
		if !webhook.Verify([]byte("webhook secret"), body, r.Header.Get(webhook.SignatureHeader)) || json.Unmarshal(body, &n) != nil ||
			webhook.VerifyStandard([]byte("webhook secret"), r.Header, body, time.Now()) != nil ||
			r.Header.Get(webhook.DeliveryHeader) != webhook.DeliveryID(n.Doc, n.Version) {
			bad++
			w.WriteHeader(400)
			return
		}
		got = append(got, n)
	}))
	defer ts.Close()
	addr, stderr, stop := startServe(t, "--store", "memory", "--webhook", ts.URL, "--webhook-secret-file", secretFile,
		"--webhook-include-doc", "--webhook-debounce", "1h", "--webhook-max-delay", "1h")
	step := `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"a"}]}}`
	for _, doc := range []string{"a", "b"} {
		for v := range 3 {
			resp, err := http.Post("http://"+addr+"/docs/"+doc+"/events", "application/json",
				strings.NewReader(`{"version":`+strconv.Itoa(v)+`,"steps":[`+step+`],"clientID":1}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("POST %s at %d: %d", doc, v, resp.StatusCode)
			}
		}
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if bad > 0 {
		t.Errorf("%d notices with a bad signature, body or delivery id", bad)
	}
	final := map[string]notice{}
	for _, n := range got {
		final[n.Doc] = n
	}
	for _, doc := range []string{"a", "b"} {
		n := final[doc]
		if n.Version != 3 || string(n.Document) != `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"aaa"}]}]}` || n.Updated.IsZero() {
			t.Errorf("%s: last notice %+v, want version 3 with the document", doc, n)
		}
	}
	if logs := stderr.String(); !strings.Contains(logs, "webhook on") {
		t.Errorf("log lacks the webhook line:\n%s", logs)
	}
}

// TestServeWebhookFlags: the webhook flags' errors.
func TestServeWebhookFlags(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("s"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--webhook", "http://127.0.0.1:1/"}, "--webhook needs --webhook-secret-file"},
		{[]string{"--webhook-secret-file", secret}, "need --webhook"},
		{[]string{"--webhook", "http://127.0.0.1:1/", "--webhook-secret-file", empty}, "is empty"},
		{[]string{"--webhook", "http://127.0.0.1:1/", "--webhook-secret-file", filepath.Join(dir, "none")}, "no such file"},
		{[]string{"--webhook", "ftp://x/", "--webhook-secret-file", secret}, "want an http or https URL"},
		{[]string{"--webhook", "http://127.0.0.1:1/", "--webhook-secret-file", secret, "--webhook-debounce", "0s"}, "--webhook-debounce must be positive"},
		{[]string{"--webhook", "http://127.0.0.1:1/", "--webhook-secret-file", secret, "--webhook-max-pending", "0"}, "--webhook-max-pending must be positive"},
	} {
		stderr := &testutil.LogBuffer{}
		if code := serve(t.Context(), append([]string{"--store", "memory"}, tc.args...), stderr, nil); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("serve %q: exit %d, want 2; stderr lacks %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
}
