package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestCeiling walks the routes: submissions at the current version, a
// stale one, one ahead, catch-up, a long poll woken by a submission, one
// that times out, and a catch-up from before the kept history.
func TestCeiling(t *testing.T) {
	srv := httptest.NewServer(newCeiling(100*time.Millisecond, 2))
	defer srv.Close()
	do := func(method, path, body string, wantStatus int, want string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != wantStatus || string(got) != want {
			t.Fatalf("%s %s %s: %d %s, want %d %s", method, path, body, resp.StatusCode, got, wantStatus, want)
		}
	}
	do("GET", "/docs/a", "", 200, `{"doc":{"type":"doc","content":[{"type":"paragraph"}]},"users":0,"version":0,"comments":[],"commentVersion":0}`)
	do("GET", "/docs", "", 200, `[{"id":"a","users":0}]`)
	do("POST", "/docs/a/events", `{"version":0,"steps":[{"s":"[1]"}, {"s":2}],"clientID":7}`, 200, `{"version":2,"commentVersion":0}`)
	do("POST", "/docs/a/events", `{"version":0,"steps":[{}],"clientID":8}`, 409, `{"error":{"message":"Version not current"}}`)
	do("POST", "/docs/a/events", `{"version":3,"steps":[{}],"clientID":8}`, 400, `{"error":{"message":"Invalid version 3"}}`)
	do("POST", "/docs/a/events", `{"version":2,"steps":[{}]}`, 400, `{"error":{"message":"invalid request: want {\"version\": V, \"steps\": […], \"clientID\": ID}"}}`)
	do("GET", "/docs/a/events?version=1&commentVersion=0", "", 200, `{"version":2,"commentVersion":0,"steps":[{"s":2}],"clientIDs":[7],"comment":[],"users":0}`)
	do("GET", "/docs/a/events?version=2&commentVersion=0", "", 200, `{}`)

	done := make(chan struct{})
	go func() {
		defer close(done)
		do("GET", "/docs/a/events?version=2&commentVersion=0", "", 200, `{"version":3,"commentVersion":0,"steps":[{"x":"y"}],"clientIDs":["c"],"comment":[],"users":0}`)
	}()
	time.Sleep(20 * time.Millisecond)
	do("POST", "/docs/a/events", `{"clientID":"c","steps":[{"x":"y"}],"version":2}`, 200, `{"version":3,"commentVersion":0}`)
	<-done

	// History 2: the sixth step trims the first four.
	for v := 3; v < 6; v++ {
		do("POST", "/docs/a/events", `{"version":`+string(rune('0'+v))+`,"steps":[1],"clientID":1}`, 200, `{"version":`+string(rune('1'+v))+`,"commentVersion":0}`)
	}
	do("GET", "/docs/a/events?version=1&commentVersion=0", "", 410, `{"error":{"message":"History no longer available"}}`)
	do("GET", "/docs/a/events?version=4&commentVersion=0", "", 200, `{"version":6,"commentVersion":0,"steps":[1,1],"clientIDs":[1,1],"comment":[],"users":0}`)
}

// FuzzScanSubmission checks that scanSubmission never fails on a JSON
// object that has a small non-negative integer version, and then finds
// what encoding/json finds; on anything else it must not panic.
func FuzzScanSubmission(f *testing.F) {
	for _, s := range []string{
		`{"version":12,"steps":[{"stepType":"replace","from":1,"to":2,"slice":{"content":[{"type":"text","text":"q"}]}}],"clientID":3925}`,
		` { "clientID" : "a\"]" , "steps" : [ [1, {"a": "}"}] , "x\\\\" ] , "version" : 0 } `,
		`{"version":1,"steps":null,"comment":[{"type":"create","id":1}]}`,
		`{"version":1,"steps":[],"version":2}`, `{"version":"x","steps":{},"version":2,"steps":[3]}`,
		`{"version":1,"steps":[1,]}`, `{"version":1.5}`, `[1]`, `{"version":1`, `{"steps":["`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var sub submission
		ok := scanSubmission(b, &sub)
		var fields map[string]json.RawMessage
		if json.Unmarshal(b, &fields) != nil {
			return
		}
		var version int64
		var steps []json.RawMessage
		if json.Unmarshal(fields["version"], &version) != nil || version < 0 || version > 1e14 ||
			!bytes.ContainsAny(fields["version"][:1], "0123456789") || bytes.ContainsAny(fields["version"], ".eE") ||
			fields["steps"] != nil && json.Unmarshal(fields["steps"], &steps) != nil {
			return
		}
		if !ok {
			t.Fatalf("%s: not scanned", b)
		}
		if sub.version != version || len(sub.steps) != len(steps) || !bytes.Equal(sub.clientID, fields["clientID"]) {
			t.Fatalf("%s: version %d, %d steps, client %s; want %d, %d, %s", b, sub.version, len(sub.steps), sub.clientID, version, len(steps), fields["clientID"])
		}
		for i, s := range sub.steps {
			if !bytes.Equal(b[s[0]:s[1]], steps[i]) {
				t.Fatalf("%s: step %d is %s, want %s", b, i, b[s[0]:s[1]], steps[i])
			}
		}
	})
}
