package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

// TestTypist applies the submissions of two typists taking turns to a new
// basic document: every step must apply, and the first paragraph's text
// must be as long as wantText says.
func TestTypist(t *testing.T) {
	schema, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := schema.TopNodeType.CreateAndFill(nil, model.Fragment{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const maxText = 10
	typists := []*typist{newTypist(1, maxText), newTypist(2, maxText)}
	var version int64
	for round := range 20 {
		tp := typists[round%2]
		n := 1 + round%3
		var sub struct {
			Version  int64             `json:"version"`
			Steps    []json.RawMessage `json:"steps"`
			ClientID uint32            `json:"clientID"`
		}
		if err := json.Unmarshal(tp.submission(version, n), &sub); err != nil {
			t.Fatal(err)
		}
		if sub.Version != version || len(sub.Steps) != n || sub.ClientID != tp.clientID {
			t.Fatalf("round %d: submission %+v", round, sub)
		}
		for i, raw := range sub.Steps {
			step, err := transform.StepFromJSON(schema, raw)
			if err != nil {
				t.Fatalf("round %d step %d %s: %v", round, i, raw, err)
			}
			if doc, err = step.Apply(doc); err != nil {
				t.Fatalf("round %d step %d %s: %v", round, i, raw, err)
			}
		}
		version += int64(n)
		text := doc.Child(0).TextContent()
		if int64(len(text)) != wantText(version, maxText) {
			t.Fatalf("version %d: first paragraph %q, want %d letters", version, text, wantText(version, maxText))
		}
	}
}

// TestConn checks that the client reads answers with a Content-Length,
// chunked answers and several answers on one connection.
func TestConn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/chunked":
			w.WriteHeader(201)
			for i := range 3 {
				fmt.Fprintf(w, "part%d;", i)
				w.(http.Flusher).Flush()
			}
		default:
			var b strings.Builder
			b.WriteString(r.Method + " " + r.URL.RequestURI() + " ")
			buf := make([]byte, 64)
			for {
				n, err := r.Body.Read(buf)
				b.Write(buf[:n])
				if err != nil {
					break
				}
			}
			w.Write([]byte(b.String()))
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	c, err := dialConn(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/docs/a/events?version=1&commentVersion=0", "", 200, "GET /docs/a/events?version=1&commentVersion=0 "},
		{"POST", "/docs/a/events", `{"version":1}`, 200, `POST /docs/a/events {"version":1}`},
		{"GET", "/chunked", "", 201, "part0;part1;part2;"},
		{"POST", "/x", "", 200, "POST /x "},
	} {
		status, body, err := c.do(tc.method, tc.path, []byte(tc.body))
		if err != nil || status != tc.status || string(body) != tc.want {
			t.Errorf("%s %s: %d %q %v, want %d %q", tc.method, tc.path, status, body, err, tc.status, tc.want)
		}
	}
}
