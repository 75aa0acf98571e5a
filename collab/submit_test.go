package collab_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/transform"
)

func TestSubmit(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{})
	st := mustGet(t, a, "d")
	if st.Version != 0 || st.CommentVersion != 0 || string(st.DocJSON) != paragraph("") || st.Schema != "basic" {
		t.Fatalf("new document: version %d, comment version %d, schema %q, doc %s", st.Version, st.CommentVersion, st.Schema, st.DocJSON)
	}
	// The steps are stored and given out as AppendJSON writes them, not
	// as they were sent.
	sent := []byte(` {"slice":{"content":[{"text":"hello","type":"text"}]}, "to":1, "from":1.0, "stepType":"replace"}`)
	r, err := a.Submit(ctx, "d", "alice", collab.Submission{Version: 0, Steps: steps(sent, insert(6, " world")), ClientID: collab.ClientID(` 7 `)})
	if err != nil {
		t.Fatal(err)
	}
	if r != (collab.Result{Version: 2, CommentVersion: 0}) {
		t.Fatalf("result %+v, want version 2", r)
	}
	st = mustGet(t, a, "d")
	if st.Version != 2 || string(st.DocJSON) != paragraph("hello world") {
		t.Fatalf("after submit: version %d, doc %s", st.Version, st.DocJSON)
	}
	if got := string(st.Doc.AppendJSON(nil)); got != string(st.DocJSON) {
		t.Fatalf("Doc %s and DocJSON %s differ", got, st.DocJSON)
	}
	ev, err := a.Events(ctx, "d", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{string(insert(1, "hello")), string(insert(6, " world"))}
	if len(ev.Steps) != 2 || ev.Version != 2 {
		t.Fatalf("events: version %d, %d steps", ev.Version, len(ev.Steps))
	}
	for i, s := range ev.Steps {
		if string(s.JSON) != want[i] || string(s.ClientID) != "7" {
			t.Errorf("step %d: %s from client %s, want %s from 7", i, s.JSON, s.ClientID, want[i])
		}
		// The steps' JSON is kept without spare room (the steps of a
		// submission share one array): appending to one copies it.
		if cap(s.JSON) != len(s.JSON) {
			t.Errorf("step %d: JSON of length %d has capacity %d", i, len(s.JSON), cap(s.JSON))
		}
	}
	_ = append(ev.Steps[0].JSON, "garbage"...)
	if string(ev.Steps[1].JSON) != want[1] {
		t.Errorf("step 1 changed to %s after appending to step 0", ev.Steps[1].JSON)
	}
	// A comment-only submission needs no client id.
	r, err = a.Submit(ctx, "d", "", collab.Submission{Version: 2, ClientID: collab.ClientID("null"), Comments: []collab.CommentEvent{{Type: "create", ID: 1, From: 1, To: 2}}})
	if err != nil || r != (collab.Result{Version: 2, CommentVersion: 1}) {
		t.Fatalf("comment-only submission: %+v, %v", r, err)
	}
	// And so does the store.
	stored, err := a.Events(ctx, "d", "", 1, 0)
	if err != nil || len(stored.Steps) != 1 || string(stored.Steps[0].JSON) != want[1] {
		t.Fatalf("events after 1: %+v, %v", stored, err)
	}
}

func TestSubmitVersions(t *testing.T) {
	tests := []struct {
		name    string
		version int64
		steps   [][]byte
		want    error
		msg     string
	}{
		{"negative", -1, steps(insert(1, "x")), collab.ErrInvalidVersion, "Invalid version -1"},
		{"ahead", 3, steps(insert(1, "x")), collab.ErrInvalidVersion, "Invalid version 3"},
		{"far ahead", 1 << 40, nil, collab.ErrInvalidVersion, "Invalid version 1099511627776"},
		{"stale", 1, steps(insert(1, "x")), collab.ErrConflict, "Version not current"},
		{"stale comment-only", 0, nil, collab.ErrConflict, "Version not current"},
		{"current", 2, steps(insert(1, "x")), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAuthority(t, nil, collab.Config{})
			mustSubmit(t, a, "d", collab.Submission{Version: 0, Steps: steps(insert(1, "ab"), insert(3, "c"))})
			_, err := a.Submit(context.Background(), "d", "", collab.Submission{Version: tt.version, Steps: tt.steps, ClientID: collab.ClientID("1")})
			if !errors.Is(err, tt.want) || (err != nil && err.Error() != tt.msg) {
				t.Fatalf("Submit at %d: %v, want %v (%q)", tt.version, err, tt.want, tt.msg)
			}
			if want := int64(2); tt.want == nil {
				want = 3
				if v := mustGet(t, a, "d").Version; v != want {
					t.Fatalf("version %d, want %d", v, want)
				}
			} else if v := mustGet(t, a, "d").Version; v != want {
				t.Fatalf("version %d after a rejected submission, want %d", v, want)
			}
		})
	}
}

// TestSubmitAtomic checks that a rejected submission changes neither the
// document nor the store.
func TestSubmitAtomic(t *testing.T) {
	long := strings.Repeat("x", 30)
	tests := []struct {
		name  string
		sub   collab.Submission
		check func(t *testing.T, err error)
	}{
		{"step 2 fails to apply", collab.Submission{Steps: steps(insert(1, "a"), insert(2, "b"), insert(100, "c"))}, stepError(2)},
		{"step 0 is not JSON", collab.Submission{Steps: steps([]byte(`{"stepType":`), insert(1, "a"))}, stepError(0)},
		{"step 1 of unknown type", collab.Submission{Steps: steps(insert(1, "a"), []byte(`{"stepType":"frobnicate"}`))}, stepError(1)},
		{"step 1 of an unknown node type", collab.Submission{Steps: steps(insert(1, "a"), []byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"nope"}]}}`))}, stepError(1)},
		{"fractional position", collab.Submission{Steps: steps([]byte(`{"stepType":"replace","from":1.5,"to":1.5}`))}, stepError(0)},
		{"document size", collab.Submission{Steps: steps(insert(1, "a"), insert(1, long))}, limitError("document size")},
		{"too many steps", collab.Submission{Steps: steps(insert(1, "a"), insert(1, "a"), insert(1, "a"), insert(1, "a"), insert(1, "a"), insert(1, "a"))}, limitError("steps")},
		{"too many comment events", collab.Submission{Comments: make([]collab.CommentEvent, 6)}, limitError("comment events")},
		{"comment text", collab.Submission{Comments: []collab.CommentEvent{{Type: "create", ID: 9, From: 1, To: 2, Text: strings.Repeat("y", 64<<10+1)}}}, limitError("bytes in the text of comment event 0")},
		{"clientID missing", collab.Submission{Steps: steps(insert(1, "a")), ClientID: collab.ClientID("")}, invalidRequest("clientID is missing")},
		{"clientID fraction", collab.Submission{Steps: steps(insert(1, "a")), ClientID: collab.ClientID("1.5")}, invalidRequest("clientID 1.5 is not an integer from 0 to 2^53")},
		{"comment beyond the document after the steps", collab.Submission{
			Steps:    steps(del(1, 6)),
			Comments: []collab.CommentEvent{{Type: "create", ID: 9, From: 1, To: 10, Text: "c"}},
		}, invalidRequest("comment event 0: range 1-10 is not a non-empty range of the document (size 8)")},
		{"empty comment range", collab.Submission{
			Steps:    steps(insert(1, "a")),
			Comments: []collab.CommentEvent{{Type: "create", ID: 9, From: 2, To: 2}},
		}, invalidRequest("comment event 0: range 2-2 is not a non-empty range of the document (size 14)")},
		{"negative comment position", collab.Submission{
			Comments: []collab.CommentEvent{{Type: "create", ID: 9, From: -1, To: 2}},
		}, invalidRequest("comment event 0: range -1-2 is not a non-empty range of the document (size 13)")},
		{"second event bad", collab.Submission{
			Steps:    steps(insert(1, "a")),
			Comments: []collab.CommentEvent{{Type: "delete", ID: 1}, {Type: "create", ID: 9, From: 1, To: 2}, {Type: "update", ID: 9}},
		}, invalidRequest(`comment event 2: unknown type "update" (want "create", "delete", "reply", "edit", "resolve", "reopen" or "deleteReply")`)},
		{"duplicate comment id", collab.Submission{
			Comments: []collab.CommentEvent{{Type: "create", ID: 1, From: 1, To: 2}},
		}, invalidRequest("comment event 0: comment 1 exists")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := memstore.New()
			a := newAuthority(t, st, collab.Config{Limits: collab.Limits{Limits: apply.Limits{MaxSteps: 5, MaxDocSize: 40}}})
			mustSubmit(t, a, "d", collab.Submission{
				Steps:    steps(insert(1, "hello world")),
				Comments: []collab.CommentEvent{{Type: "create", ID: 1, From: 1, To: 6, Text: "hello"}},
			})
			before := mustGet(t, a, "d")
			headBefore, err := st.Load(ctx, "d")
			if err != nil {
				t.Fatal(err)
			}
			sub := tt.sub
			sub.Version = 1
			if sub.ClientID == nil {
				sub.ClientID = collab.ClientID("3")
			}
			_, err = a.Submit(ctx, "d", "", sub)
			tt.check(t, err)
			after := mustGet(t, a, "d")
			if string(after.DocJSON) != string(before.DocJSON) || after.Version != before.Version ||
				after.CommentVersion != before.CommentVersion || !equalComments(after.Comments, before.Comments) {
				t.Errorf("state changed: %+v -> %+v", before, after)
			}
			head, err := st.Load(ctx, "d")
			if err != nil {
				t.Fatal(err)
			}
			if head.Version != headBefore.Version || !bytes.Equal(head.Meta, headBefore.Meta) {
				t.Errorf("store changed: version %d -> %d, meta %s -> %s", headBefore.Version, head.Version, headBefore.Meta, head.Meta)
			}
			ev, err := a.Events(ctx, "d", "", 1, 1)
			if err != nil || len(ev.Steps) != 0 || len(ev.Comment) != 0 {
				t.Errorf("events after the rejection: %+v, %v", ev, err)
			}
		})
	}
}

func stepError(index int) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var se *transform.StepError
		if !errors.As(err, &se) || se.Index != index || se.Err == nil {
			t.Fatalf("error %v, want a *transform.StepError for step %d", err, index)
		}
	}
}

func limitError(what string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var le *collab.LimitError
		if !errors.As(err, &le) || le.What != what || le.Value <= le.Limit {
			t.Fatalf("error %v, want a *collab.LimitError for %q", err, what)
		}
	}
}

func invalidRequest(msg string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, collab.ErrInvalidRequest) || err.Error() != msg {
			t.Fatalf("error %v, want ErrInvalidRequest %q", err, msg)
		}
	}
}

// equalComments reports whether x and y are the same comments, times
// aside (their clock is the test's).
func equalComments(x, y []collab.Comment) bool {
	return slices.EqualFunc(x, y, func(a, b collab.Comment) bool {
		return a.From == b.From && a.To == b.To && a.Text == b.Text && a.ID == b.ID && a.Author == b.Author && a.Resolved == b.Resolved &&
			slices.EqualFunc(a.Replies, b.Replies, func(r, q collab.Reply) bool { return r.ID == q.ID && r.Text == q.Text && r.Author == q.Author })
	})
}

func TestClientID(t *testing.T) {
	tests := []struct {
		id   string
		want string // kept form; "" when invalid
	}{
		{"0", "0"},
		{"4294967295", "4294967295"},
		{"9007199254740992", "9007199254740992"},
		{"1e3", "1e3"},
		{" 12\n", "12"},
		{`"abc"`, `"abc"`},
		{`""`, `""`},
		{`"\u00e9\n"`, `"\u00e9\n"`},
		{`"` + strings.Repeat("a", 256) + `"`, `"` + strings.Repeat("a", 256) + `"`},
		{`"` + strings.Repeat("a", 257) + `"`, ""},
		{"9007199254740993", ""},
		{"1e400", ""},
		{"-1", ""},
		{"1.5", ""},
		{"true", ""},
		{"null", ""},
		{"{}", ""},
		{"[1]", ""},
		{"1 2", ""},
		{"abc", ""},
		{`"abc`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			a := newAuthority(t, nil, collab.Config{})
			_, err := a.Submit(context.Background(), "d", "", collab.Submission{Steps: steps(insert(1, "x")), ClientID: collab.ClientID(tt.id)})
			if tt.want == "" {
				if !errors.Is(err, collab.ErrInvalidRequest) {
					t.Fatalf("Submit with clientID %s: %v, want ErrInvalidRequest", tt.id, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ev, err := a.Events(context.Background(), "d", "", 0, 0)
			if err != nil || len(ev.Steps) != 1 || string(ev.Steps[0].ClientID) != tt.want {
				t.Fatalf("events: %+v, %v; want client id %s", ev, err, tt.want)
			}
		})
	}
}

// TestLoadFailure checks that a document the store fails to load
// answers ErrUnavailable, and loads on the next request once the store is
// back.
func TestLoadFailure(t *testing.T) {
	ctx := context.Background()
	fs := &faultStore{Store: memstore.New()}
	a := newAuthority(t, fs, collab.Config{})
	fs.failLoad.Store(true)
	for i := 0; i < 2; i++ {
		if _, err := a.Get(ctx, "d", ""); !errors.Is(err, errInjected) || !errors.Is(err, collab.ErrUnavailable) || err.Error() != `collab: load "d": injected failure` {
			t.Fatalf("Get with a failing store: %v", err)
		}
	}
	fs.failLoad.Store(false)
	if r := mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello"))}); r.Version != 1 {
		t.Fatalf("result %+v after the store recovered", r)
	}
}

// TestAppendFailure checks that a failed store append changes nothing in
// memory, and that a lost acknowledgement is caught up with.
func TestAppendFailure(t *testing.T) {
	ctx := context.Background()
	fs := &faultStore{Store: memstore.New()}
	a := newAuthority(t, fs, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello"))})
	before := mustGet(t, a, "d")

	fs.failAppend.Store(true)
	for _, sub := range []collab.Submission{
		{Version: 1, Steps: steps(insert(1, "x")), ClientID: collab.ClientID("2")},
		{Version: 1, Comments: []collab.CommentEvent{{Type: "create", ID: 5, From: 1, To: 3}}},
	} {
		if _, err := a.Submit(ctx, "d", "", sub); !errors.Is(err, errInjected) || !errors.Is(err, collab.ErrUnavailable) {
			t.Fatalf("Submit with a failing store: %v", err)
		}
		after := mustGet(t, a, "d")
		if string(after.DocJSON) != string(before.DocJSON) || after.Version != 1 || after.CommentVersion != 0 || len(after.Comments) != 0 {
			t.Fatalf("state changed after a failed append: %s v%d c%d %v", after.DocJSON, after.Version, after.CommentVersion, after.Comments)
		}
		if ev, err := a.Events(ctx, "d", "", 1, 0); err != nil || len(ev.Steps)+len(ev.Comment) != 0 {
			t.Fatalf("events after a failed append: %+v, %v", ev, err)
		}
	}
	fs.failAppend.Store(false)
	if r := mustSubmit(t, a, "d", collab.Submission{Version: 1, Steps: steps(insert(1, "x"))}); r.Version != 2 {
		t.Fatalf("result %+v after the store recovered", r)
	}

	// The store appended but answered an error: the steps are durable, so
	// they are published (the client sees them as its own in Events) and a
	// retry is a conflict.
	fs.lostAck.Store(true)
	if _, err := a.Submit(ctx, "d", "", collab.Submission{Version: 2, Steps: steps(insert(1, "y")), ClientID: collab.ClientID("4")}); !errors.Is(err, errInjected) || !errors.Is(err, collab.ErrUnavailable) {
		t.Fatalf("Submit with a lost acknowledgement: %v", err)
	}
	fs.lostAck.Store(false)
	st := mustGet(t, a, "d")
	if st.Version != 3 || string(st.DocJSON) != paragraph("yxhello") {
		t.Fatalf("after a lost acknowledgement: version %d, doc %s", st.Version, st.DocJSON)
	}
	ev, err := a.Events(ctx, "d", "", 2, 0)
	if err != nil || len(ev.Steps) != 1 || string(ev.Steps[0].ClientID) != "4" {
		t.Fatalf("events after a lost acknowledgement: %+v, %v", ev, err)
	}
	if _, err := a.Submit(ctx, "d", "", collab.Submission{Version: 2, Steps: steps(insert(1, "y")), ClientID: collab.ClientID("4")}); !errors.Is(err, collab.ErrConflict) {
		t.Fatalf("retry: %v, want ErrConflict", err)
	}
}

// TestSubmitInFlight checks that a submission that can only conflict
// with the store append in flight waits for that append alone, not for
// the submissions queued behind it, and is answered ErrConflict only once
// the append's steps are there to be seen; and that when the append fails
// it goes on as if there had been none.
func TestSubmitInFlight(t *testing.T) {
	ctx := context.Background()
	fs := &faultStore{Store: memstore.New()}
	a := newAuthority(t, fs, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "a"))})
	fs.gate, fs.ungated = make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(fs.ungated) }) // before a.Close, should the test fail
	// submit submits, and after ErrConflict checks at once that there are
	// steps to catch up with.
	submit := func(version int64, clientID string) <-chan error {
		out := make(chan error, 1)
		go func() {
			_, err := a.Submit(ctx, "d", "", collab.Submission{Version: version, Steps: steps(insert(1, clientID)), ClientID: collab.ClientID(clientID)})
			if errors.Is(err, collab.ErrConflict) {
				if ev, everr := a.Events(ctx, "d", "", version, 0); everr != nil || len(ev.Steps) == 0 {
					err = fmt.Errorf("%w, and then events %+v, %v", err, ev, everr)
				}
			}
			out <- err
		}()
		return out
	}
	// started waits for an append to start.
	started := func(what string) {
		t.Helper()
		select {
		case <-fs.gate:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s did not start", what)
		}
	}
	// answer returns what a submission answered, failing the test when it
	// does not answer within a few seconds.
	answer := func(ch <-chan error, what string) error {
		t.Helper()
		select {
		case err := <-ch:
			return err
		case <-time.After(5 * time.Second):
			t.Fatalf("%s did not answer", what)
			return nil
		}
	}

	// 1 is appending; 9 at version 2 waits for the semaphore that 1
	// holds; 0 at version 0 conflicts at once.
	first := submit(1, "1")
	started("1's append")
	ahead := submit(2, "9")
	if err := answer(submit(0, "0"), "0, stale while 1 is appending,"); err == nil || err.Error() != collab.ErrConflict.Error() {
		t.Fatalf("stale submission: %v, want ErrConflict with steps to see", err)
	}
	// 2 at version 1 waits for 1's append; when it is over, 9 appends and
	// 2 is answered without waiting for 9, with 1's step to be seen.
	time.Sleep(10 * time.Millisecond) // let 9 queue for the semaphore first
	second := submit(1, "2")
	time.Sleep(10 * time.Millisecond) // let 2 wait for 1's append
	fs.gate <- struct{}{}
	if err := answer(first, "1"); err != nil {
		t.Fatal(err)
	}
	started("9's append")
	if err := answer(second, "2, while 9 is appending,"); err == nil || err.Error() != collab.ErrConflict.Error() {
		t.Fatalf("submission at the version of the append in flight: %v, want ErrConflict with steps to see", err)
	}
	fs.gate <- struct{}{}
	if err := answer(ahead, "9"); err != nil {
		t.Fatal(err)
	}

	// 4 waits for 3's append, which fails: 4 goes on and is accepted.
	polled := poll(t, a, ctx, "poller", 3, 0)
	fs.failAppend.Store(true)
	third := submit(3, "3")
	started("3's append")
	fourth := submit(3, "4")
	time.Sleep(10 * time.Millisecond) // let 4 wait for 3's append
	fs.gate <- struct{}{}
	if err := answer(third, "3"); !errors.Is(err, errInjected) {
		t.Fatalf("Submit with a failing store: %v", err)
	}
	fs.failAppend.Store(false)
	started("4's append")
	fs.gate <- struct{}{}
	if err := answer(fourth, "4"); err != nil {
		t.Fatalf("Submit after the failed append: %v", err)
	}
	if r := recv(t, polled); r.err != nil || len(r.ev.Steps) != 1 || string(r.ev.Steps[0].ClientID) != "4" {
		t.Fatalf("poll after the failed append: %+v, %v", r.ev, r.err)
	}
	if st := mustGet(t, a, "d"); st.Version != 4 || string(st.DocJSON) != paragraph("491a") {
		t.Fatalf("version %d, document %s, want 4, %s", st.Version, st.DocJSON, paragraph("491a"))
	}
}

// TestSharedStore checks that an authority whose store was written by
// another one answers ErrConflict and catches up.
func TestSharedStore(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	a1 := newAuthority(t, st, collab.Config{})
	a2 := newAuthority(t, st, collab.Config{})
	mustGet(t, a1, "d")
	mustGet(t, a2, "d")
	mustSubmit(t, a1, "d", collab.Submission{Steps: steps(insert(1, "one"))})
	if _, err := a2.Submit(ctx, "d", "", collab.Submission{Steps: steps(insert(1, "two")), ClientID: collab.ClientID("2")}); !errors.Is(err, collab.ErrConflict) {
		t.Fatalf("Submit on a stale authority: %v, want ErrConflict", err)
	}
	got := mustGet(t, a2, "d")
	if got.Version != 1 || string(got.DocJSON) != paragraph("one") {
		t.Fatalf("stale authority after the conflict: version %d, doc %s", got.Version, got.DocJSON)
	}
	mustSubmit(t, a2, "d", collab.Submission{Version: 1, Steps: steps(insert(1, "two"))})
	if _, err := st.Load(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if head, _ := st.Load(ctx, "d"); head.Version != 2 {
		t.Fatalf("store at version %d, want 2", head.Version)
	}
	var _ store.Store = st
}

// TestSubmitAuthor: each step is stored with its submission's author
// (none when the submission names none).
func TestSubmitAuthor(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	a := newAuthority(t, st, collab.Config{})
	mustGet(t, a, "d")
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "ab"), insert(3, "c")), Author: "ann"})
	mustSubmit(t, a, "d", collab.Submission{Version: 2, Steps: steps(insert(1, "x")), ClientID: collab.ClientID("2")})
	stored, err := st.Steps(ctx, "d", 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"ann", "ann", ""} {
		if stored[i].Author != want {
			t.Errorf("step %d stored with author %q, want %q", i+1, stored[i].Author, want)
		}
	}
}
