package collab_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

// threadClock is a clock that stands still until told to tick.
type threadClock struct{ t time.Time }

func (c *threadClock) Now() time.Time { return c.t }

// tick moves c on a second.
func (c *threadClock) tick() { c.t = c.t.Add(time.Second) }

// threadEvent is a thread operation.
func threadEvent(typ string, id, thread int64, text string) collab.CommentEvent {
	return collab.CommentEvent{Type: typ, ID: id, Thread: thread, Text: text}
}

// TestThreads runs a thread through its operations by three principals,
// alice and bob who may change only their own (Submission.OwnComments)
// and an admin, and checks the thread, the comment version, and the
// events after each: only creations and deletions among the comment
// events, the changed threads in Events.Threads.
func TestThreads(t *testing.T) {
	ctx := context.Background()
	clk := &threadClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	a := newAuthority(t, nil, collab.Config{Now: clk.Now})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello world"))})
	submit := func(who string, own bool, events ...collab.CommentEvent) (collab.Result, error) {
		// The event's author and time are the server's: these lie.
		for i := range events {
			events[i].Author, events[i].Time = "mallory", time.Unix(1, 0)
		}
		clk.tick()
		return a.Submit(ctx, "d", who, collab.Submission{Version: 1, Comments: events, Author: who, OwnComments: own})
	}
	must := func(who string, own bool, events ...collab.CommentEvent) {
		t.Helper()
		if _, err := submit(who, own, events...); err != nil {
			t.Fatalf("%s: %v", who, err)
		}
	}
	must("alice", true, collab.CommentEvent{Type: collab.CommentCreate, ID: 10, From: 1, To: 6, Text: "hello?"})
	must("bob", true, threadEvent(collab.CommentReply, 11, 10, "hi"))
	must("alice", true, threadEvent(collab.CommentReply, 12, 10, "mine"))
	must("bob", true, threadEvent(collab.CommentEdit, 11, 0, "hi there"))
	must("alice", true, threadEvent(collab.CommentEdit, 10, 0, "hello!"))
	must("bob", true, threadEvent(collab.CommentResolve, 10, 0, ""))

	s := mustGet(t, a, "d")
	at := func(sec int) time.Time { return time.Date(2026, 3, 1, 9, 0, sec, 0, time.UTC) }
	if len(s.Comments) != 1 {
		t.Fatalf("comments %+v, want one thread", s.Comments)
	}
	c := s.Comments[0]
	want := collab.Comment{From: 1, To: 6, Text: "hello!", ID: 10, Author: "alice", Resolved: true, Replies: []collab.Reply{
		{ID: 11, Text: "hi there", Author: "bob"}, {ID: 12, Text: "mine", Author: "alice"}}}
	// Only the creation counts in the comment version, the collab demo's.
	if !equalComments(s.Comments, []collab.Comment{want}) || s.CommentVersion != 1 || s.ThreadVersion != 5 {
		t.Fatalf("thread %+v at %d, %d, want %+v at 1, 5", c, s.CommentVersion, s.ThreadVersion, want)
	}
	// The clock ticked before each submission, after the steps'.
	if !c.Time.Equal(at(1)) || !c.Edited.Equal(at(5)) || !c.Replies[0].Time.Equal(at(2)) || !c.Replies[0].Edited.Equal(at(4)) ||
		!c.Replies[1].Time.Equal(at(3)) || !c.Replies[1].Edited.IsZero() {
		t.Errorf("times %+v, want the Authority's clock", c)
	}
	js := string(c.AppendJSON(nil))
	if wantJS := `{"from":1,"to":6,"text":"hello!","id":10,"author":"alice","time":"2026-03-01T09:00:01Z","resolved":true,"edited":"2026-03-01T09:00:05Z",` +
		`"replies":[{"id":11,"text":"hi there","author":"bob","time":"2026-03-01T09:00:02Z","edited":"2026-03-01T09:00:04Z"},{"id":12,"text":"mine","author":"alice","time":"2026-03-01T09:00:03Z"}]}`; js != wantJS {
		t.Errorf("JSON\n got %s\nwant %s", js, wantJS)
	}

	// Events: the create alone among the comment events; the thread
	// once, for events that follow threads.
	ev, err := a.Events(ctx, "d", "", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Comment) != 1 || ev.Comment[0].Type != collab.CommentCreate || ev.Comment[0].Text != "hello!" || ev.FollowsThreads || len(ev.Threads) != 0 {
		t.Errorf("events after 0: %+v", ev)
	}
	if js := string(ev.AppendJSON(nil)); strings.Contains(js, "thread") {
		t.Errorf("events JSON %s: want no threads", js)
	}
	if ev, _ = a.EventsWithThreads(ctx, "d", "", 1, 1, 2); len(ev.Comment) != 0 || len(ev.Threads) != 1 || len(ev.Threads[0].Replies) != 2 || ev.ThreadVersion != 5 {
		t.Errorf("events after 1, 2: %+v", ev)
	}
	evJS := string(ev.AppendJSON(nil))
	if !strings.Contains(evJS, `"comment":[],"threads":[{"from":1,"to":6,"text":"hello!","id":10,`) || !strings.Contains(evJS, `],"threadVersion":5,"users":`) {
		t.Errorf("events JSON %s: want the thread in threads", evJS)
	}
	if ev, _ = a.EventsWithThreads(ctx, "d", "", 1, 1, 5); ev.Threads != nil || !ev.FollowsThreads {
		t.Errorf("events after 1, 5: %+v", ev)
	}

	// Refusals, each of the whole submission.
	refusals := []struct {
		who    string
		own    bool
		events []collab.CommentEvent
		err    string
	}{
		{"bob", true, []collab.CommentEvent{threadEvent(collab.CommentReopen, 10, 0, ""), threadEvent(collab.CommentEdit, 10, 0, "bob's now")}, "comment event 1: comment 10 is not yours: only its author or an admin may edit it"},
		{"bob", true, []collab.CommentEvent{threadEvent(collab.CommentEdit, 12, 0, "x")}, "may edit it"},
		{"bob", true, []collab.CommentEvent{threadEvent(collab.CommentDeleteReply, 12, 0, "")}, "may delete it"},
		{"bob", true, []collab.CommentEvent{{Type: collab.CommentDelete, ID: 10}}, "may delete it"},
		{"", true, []collab.CommentEvent{threadEvent(collab.CommentDeleteReply, 11, 0, "")}, "may delete it"},
	}
	for _, r := range refusals {
		if _, err := submit(r.who, r.own, r.events...); !errors.Is(err, collab.ErrForbidden) || !strings.Contains(err.Error(), r.err) {
			t.Errorf("%s %+v: %v, want ErrForbidden %q", r.who, r.events, err, r.err)
		}
	}
	bad := []struct {
		events []collab.CommentEvent
		err    string
	}{
		{[]collab.CommentEvent{threadEvent(collab.CommentReply, 10, 10, "a root's id")}, "comment event 0: a comment 10 exists"},
		{[]collab.CommentEvent{threadEvent(collab.CommentReply, 12, 10, "another text")}, "comment event 0: reply 12 exists"},
		{[]collab.CommentEvent{{Type: collab.CommentCreate, ID: 11, From: 1, To: 2, Text: "a reply's id"}}, "comment event 0: a reply 11 exists"},
	}
	for _, b := range bad {
		if _, err := submit("alice", true, b.events...); !errors.Is(err, collab.ErrInvalidRequest) || !strings.Contains(err.Error(), b.err) {
			t.Errorf("%+v: %v, want ErrInvalidRequest %q", b.events, err, b.err)
		}
	}
	// What changes nothing: a resent reply, an edit to the same text,
	// resolving a resolved thread, events on unknown ids.
	r, err := submit("alice", true, threadEvent(collab.CommentReply, 12, 10, "mine"), threadEvent(collab.CommentEdit, 10, 0, "hello!"),
		threadEvent(collab.CommentResolve, 10, 0, ""), threadEvent(collab.CommentReply, 13, 99, "gone"), threadEvent(collab.CommentEdit, 99, 0, "gone"),
		threadEvent(collab.CommentReopen, 99, 0, ""), threadEvent(collab.CommentDeleteReply, 99, 0, ""))
	if err != nil || r.CommentVersion != 1 {
		t.Errorf("no-ops: %+v, %v; want comment version 1", r, err)
	}
	if s := mustGet(t, a, "d"); s.CommentVersion != 1 || s.ThreadVersion != 5 || !equalComments(s.Comments, []collab.Comment{want}) {
		t.Errorf("after the refusals: %+v at %d, %d", s.Comments, s.CommentVersion, s.ThreadVersion)
	}

	// The admin may change anyone's; a reopen, then deleting the thread
	// takes its replies along.
	must("admin", false, threadEvent(collab.CommentReopen, 10, 0, ""), threadEvent(collab.CommentEdit, 11, 0, "moderated"), threadEvent(collab.CommentDeleteReply, 12, 0, ""))
	want.Resolved, want.Replies = false, []collab.Reply{{ID: 11, Text: "moderated", Author: "bob"}}
	if s := mustGet(t, a, "d"); s.ThreadVersion != 8 || !equalComments(s.Comments, []collab.Comment{want}) {
		t.Errorf("after the admin: %+v at %d", s.Comments, s.ThreadVersion)
	}
	must("alice", true, collab.CommentEvent{Type: collab.CommentDelete, ID: 10})
	ev, _ = a.EventsWithThreads(ctx, "d", "", 1, 1, 8)
	if s := mustGet(t, a, "d"); len(s.Comments) != 0 || len(ev.Threads) != 0 || len(ev.Comment) != 1 || ev.Comment[0].Type != collab.CommentDelete {
		t.Errorf("after the delete: %+v, events %+v", s.Comments, ev)
	}
}

// TestThreadsMapped checks that replies go with their comment: mapped
// through steps and dropped with it when its range collapses.
func TestThreadsMapped(t *testing.T) {
	a := newAuthority(t, nil, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello world")), Comments: []collab.CommentEvent{
		{Type: collab.CommentCreate, ID: 1, From: 1, To: 6, Text: "hello"}, {Type: collab.CommentCreate, ID: 2, From: 7, To: 12, Text: "world"},
		threadEvent(collab.CommentReply, 3, 1, "on hello"), threadEvent(collab.CommentReply, 4, 2, "on world")}})
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Steps: steps(insert(1, ">"), del(8, 13))})
	want := []collab.Comment{{From: 2, To: 7, Text: "hello", ID: 1, Replies: []collab.Reply{{ID: 3, Text: "on hello"}}}}
	if s := mustGet(t, a, "d"); !equalComments(s.Comments, want) {
		t.Fatalf("comments %+v, want %+v", s.Comments, want)
	}
	// The dropped reply's id is free again, and its bytes are counted no
	// more (the limit would refuse a second reply otherwise).
	mustSubmit(t, a, "d", collab.Submission{Version: 3, Comments: []collab.CommentEvent{threadEvent(collab.CommentReply, 4, 1, "again")}})
}

// TestThreadLimits checks that replies count towards Limits.MaxComments
// and Limits.MaxCommentBytes, as do edits that lengthen a text.
func TestThreadLimits(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		lim    collab.Limits
		events []collab.CommentEvent
		err    string
	}{
		{"MaxComments", collab.Limits{MaxComments: 2}, []collab.CommentEvent{threadEvent(collab.CommentReply, 3, 1, "r")}, "comments over the limit: 3 > 2"},
		// The comment counts 3 + 192, a reply of "r" 3 + 120.
		{"MaxCommentBytes", collab.Limits{MaxCommentBytes: 400}, []collab.CommentEvent{threadEvent(collab.CommentReply, 3, 1, "r")}, "over the limit: 441 > 400"},
		{"edit", collab.Limits{MaxCommentBytes: 330}, []collab.CommentEvent{threadEvent(collab.CommentEdit, 2, 0, strings.Repeat("x", 20))}, "over the limit: 337 > 330"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAuthority(t, nil, collab.Config{Limits: tt.lim})
			mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello")), Comments: []collab.CommentEvent{
				{Type: collab.CommentCreate, ID: 1, From: 1, To: 3, Text: "c"}, threadEvent(collab.CommentReply, 2, 1, "r")}})
			before := mustGet(t, a, "d")
			_, err := a.Submit(ctx, "d", "", collab.Submission{Version: 1, Comments: tt.events})
			var le *collab.LimitError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("%v, want a *LimitError %q", err, tt.err)
			}
			if after := mustGet(t, a, "d"); after.CommentVersion != before.CommentVersion || !equalComments(after.Comments, before.Comments) {
				t.Errorf("the refused submission changed the comments: %+v", after.Comments)
			}
		})
	}
	// A text over Limits.MaxCommentText, of a reply or an edit.
	a := newAuthority(t, nil, collab.Config{Limits: collab.Limits{MaxCommentText: 4}})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello")), Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 1, From: 1, To: 3, Text: "c"}}})
	for _, e := range []collab.CommentEvent{threadEvent(collab.CommentReply, 2, 1, "12345"), threadEvent(collab.CommentEdit, 1, 0, "12345")} {
		var le *collab.LimitError
		if _, err := a.Submit(ctx, "d", "", collab.Submission{Version: 1, Comments: []collab.CommentEvent{e}}); !errors.As(err, &le) {
			t.Errorf("%s over MaxCommentText: %v", e.Type, err)
		}
	}
}

// TestThreadsStored reloads threads from each store, from the comment
// entries and from a snapshot's comment base, and checks that another
// Authority over the same store gets them.
func TestThreadsStored(t *testing.T) {
	stores := map[string]func(t *testing.T) store.Store{
		"memstore": func(*testing.T) store.Store { return memstore.New() },
		"sqlite": func(t *testing.T) store.Store {
			st, err := sqlite.Open(filepath.Join(t.TempDir(), "threads.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for name, open := range stores {
		for _, snapshot := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "", true: "/snapshot"}[snapshot], func(t *testing.T) {
				st := open(t)
				clk := &threadClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
				cfg := collab.Config{Now: clk.Now}
				if snapshot {
					cfg.SnapshotEvery = 1
				}
				a := newAuthority(t, st, cfg)
				mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello world")), Author: "alice", ClientID: collab.ClientID("1"), Comments: []collab.CommentEvent{
					{Type: collab.CommentCreate, ID: 1, From: 1, To: 6, Text: "hello"}, threadEvent(collab.CommentReply, 2, 1, "a reply")}})
				mustSubmit(t, a, "d", collab.Submission{Version: 1, Steps: steps(insert(1, ">")), Author: "bob", ClientID: collab.ClientID("2"), Comments: []collab.CommentEvent{
					threadEvent(collab.CommentReply, 3, 1, "bob's"), threadEvent(collab.CommentEdit, 2, 0, "edited"), threadEvent(collab.CommentResolve, 1, 0, "")}})
				if snapshot {
					mustSubmit(t, a, "d", collab.Submission{Version: 2, Steps: steps(insert(1, "<")), ClientID: collab.ClientID("3")})
					waitSnapshot(t, st, "d")
				}
				want := mustGet(t, a, "d")
				b := newAuthority(t, st, collab.Config{})
				got := mustGet(t, b, "d")
				if string(appendAll(got.Comments)) != string(appendAll(want.Comments)) || got.CommentVersion != want.CommentVersion || got.ThreadVersion != want.ThreadVersion || want.ThreadVersion != 4 {
					t.Fatalf("reloaded %s at %d, %d, want %s at %d, %d (4)", appendAll(got.Comments), got.CommentVersion, got.ThreadVersion, appendAll(want.Comments), want.CommentVersion, want.ThreadVersion)
				}
				if ev, err := b.EventsWithThreads(context.Background(), "d", "", want.Version, want.CommentVersion, 2); err != nil || len(ev.Threads) != 1 || ev.ThreadVersion != 4 {
					t.Errorf("the reloaded threads after 2: %+v, %v", ev, err)
				}
				if c := got.Comments[0]; !c.Resolved || len(c.Replies) != 2 || c.Replies[0].Text != "edited" || c.Replies[0].Edited.IsZero() || c.Replies[1].Author != "bob" {
					t.Errorf("reloaded thread %+v", c)
				}
				// b, still loaded, gets a's next thread operation.
				mustSubmit(t, a, "d", collab.Submission{Version: want.Version, Comments: []collab.CommentEvent{threadEvent(collab.CommentReopen, 1, 0, "")}})
				if name == "memstore" {
					waitSame(t, a, b, "d")
				}
			})
		}
	}
}

// waitSnapshot waits for a snapshot of id beyond version 0 in st.
func waitSnapshot(t *testing.T, st store.Store, id string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if h, err := st.Load(context.Background(), id); err == nil && h.MetaBase > 0 {
			return
		}
	}
	t.Fatal("no snapshot")
}

// appendAll returns the JSON of comments.
func appendAll(comments []collab.Comment) []byte {
	var buf []byte
	for _, c := range comments {
		buf = c.AppendJSON(buf)
	}
	return buf
}

// TestFollowThreads checks that a thread operation alone is news for a
// subscription that follows threads, and for no other, which it leaves
// at its comment version.
func TestFollowThreads(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello")), Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 1, From: 1, To: 3, Text: "c"}}})
	plain, err := a.Subscribe(ctx, "d", "", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	follower, err := a.Subscribe(ctx, "d", "", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer follower.Close()
	follower.FollowThreads(0)
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Comments: []collab.CommentEvent{threadEvent(collab.CommentReply, 2, 1, "r")}})
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ev, err := follower.Next(wctx)
	if err != nil || len(ev.Threads) != 1 || ev.CommentVersion != 1 || ev.ThreadVersion != 1 {
		t.Fatalf("the follower's next: %+v, %v", ev, err)
	}
	if ev, news, err := plain.Take(); err != nil || news || ev.FollowsThreads || ev.CommentVersion != 1 {
		t.Errorf("the other's update: %+v, news %v, %v; want nothing new", ev, news, err)
	}
}
