package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestTypistCommit checks a commit's body: the submission's steps, and a
// ref of 1 to 64 bytes that no other commit of the typist has.
func TestTypistCommit(t *testing.T) {
	tp := newTypist(1, 10)
	refs := map[string]bool{}
	for i := range 100 {
		var c struct {
			Version  int64             `json:"version"`
			Ref      string            `json:"ref"`
			Steps    []json.RawMessage `json:"steps"`
			ClientID uint32            `json:"clientID"`
		}
		if err := json.Unmarshal(tp.commit(int64(i), 2), &c); err != nil {
			t.Fatal(err)
		}
		if c.Version != int64(i) || len(c.Steps) != 2 || c.ClientID != tp.clientID || len(c.Ref) == 0 || len(c.Ref) > 64 || refs[c.Ref] {
			t.Fatalf("commit %d: %+v", i, c)
		}
		refs[c.Ref] = true
	}
}

// TestCommitAnswerCheck checks the check of a commit's answer.
func TestCommitAnswerCheck(t *testing.T) {
	for _, tc := range []struct {
		answer  string
		version int64
		n       int
		inserts int64
		ok      bool
	}{
		{`{"from":5,"version":7,"steps":[{"stepType":"replace","from":1,"to":1},{"stepType":"replace","from":2,"to":3}],"dropped":[],"commentVersion":0}`, 3, 2, 1, true},
		{`{"from":5,"version":6,"steps":[{"stepType":"replace","from":1,"to":1}],"dropped":[1],"commentVersion":0}`, 5, 2, 1, true},
		{`{"from":9,"version":9,"steps":[],"dropped":[0],"commentVersion":0}`, 5, 1, 0, true},
		{`{"from":4,"version":5,"steps":[{"stepType":"replace","from":1,"to":1}],"dropped":[],"commentVersion":0}`, 5, 1, 0, false}, // from before the version
		{`{"from":5,"version":7,"steps":[{"stepType":"replace","from":1,"to":1}],"dropped":[],"commentVersion":0}`, 5, 1, 0, false}, // versions and steps differ
		{`{"from":5,"version":6,"steps":[{"stepType":"replace","from":1,"to":1}],"dropped":[],"commentVersion":0}`, 5, 2, 0, false}, // a step missing
		{`{"from":5,"version":6,"steps":[{"stepType":"replace","from":1,"to":3}],"dropped":[],"commentVersion":0}`, 5, 1, 0, false}, // not a step sent
		{`{"version":6,"steps":[{"stepType":"replace","from":1,"to":1}],"dropped":[],"commentVersion":0}`, 5, 1, 0, false},          // no from
	} {
		var a commitAnswer
		if err := json.Unmarshal([]byte(tc.answer), &a); err != nil {
			t.Fatal(err)
		}
		ins, err := a.check(tc.version, tc.n)
		if (err == nil) != tc.ok || (tc.ok && ins != tc.inserts) {
			t.Errorf("%s at %d, %d steps: %d inserts, %v", tc.answer, tc.version, tc.n, ins, err)
		}
	}
}

// TestCommitLoad runs a short commit-mode editors load against
// pmauthority in-process (memory store): it must end without an error,
// which includes the final check of each document's version and text.
func TestCommitLoad(t *testing.T) {
	auth, err := collab.New(collab.Config{
		Store:         memstore.New(),
		Schemas:       func(name string) (*model.Schema, bool) { sc, err := schemas.Get(name); return sc, err == nil },
		DefaultSchema: "basic",
		AutoCreate:    true,
		Logger:        slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	const unlimited = 1_000_000_000
	srv, err := server.New(server.Config{DefaultSchema: "basic", Logger: slog.New(slog.DiscardHandler), Collab: auth,
		Limits: server.Limits{MaxConns: unlimited, MaxClientConns: unlimited, MaxSubmissions: unlimited}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { stop(); <-done }()
	for _, mode := range []string{modeCommit, modeClassic} {
		// MaxText 20: the paragraph reaches it, so that the steps
		// replace letters too (rebased over each other).
		ed, err := runEditors(editorsOptions{Addr: ln.Addr().String(), Docs: 2, Editors: 4, Prefix: "t-" + mode + "-", MaxText: 20, Seed: 1,
			Warmup: 200 * time.Millisecond, Duration: time.Second, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.0f steps/s, %d dropped, accept p99 %s, fewest/most %d/%d", mode, ed.StepsPerSec, ed.Dropped,
			fmtDur(ed.Accept.P99), ed.PerEditor.FewestSteps, ed.PerEditor.MostSteps)
		if ed.Errors > 0 || ed.Steps == 0 || ed.PerEditor.FewestSteps == 0 || ed.Store != nil {
			t.Errorf("%s: %d steps, fewest %d, store %v, %d errors (first: %s)", mode, ed.Steps, ed.PerEditor.FewestSteps, ed.Store, ed.Errors, ed.FirstError)
		}
		if mode == modeCommit && (ed.Conflicts != 0 || ed.Accepted != ed.Submits) {
			t.Errorf("commit mode: %d submits, %d accepted, %d conflicts", ed.Submits, ed.Accepted, ed.Conflicts)
		}
	}
}
