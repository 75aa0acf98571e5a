package collab_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestRestart checks that a new Authority over the same store rebuilds
// the same documents, comments and events, with or without a clean Close.
func TestRestart(t *testing.T) {
	for _, clean := range []bool{true, false} {
		t.Run(fmt.Sprintf("close=%v", clean), func(t *testing.T) {
			ctx := context.Background()
			st := memstore.New()
			a1, err := collab.New(collab.Config{Store: st, Schemas: lookupSchema, AutoCreate: true, SnapshotEvery: 4})
			if err != nil {
				t.Fatal(err)
			}
			version := int64(0)
			for i := range 10 {
				sub := collab.Submission{Version: version, Steps: steps(insert(1, fmt.Sprint(i))), ClientID: collab.ClientID(fmt.Sprint(i % 3))}
				if i%3 == 0 {
					sub.Comments = []collab.CommentEvent{{Type: "create", ID: int64(i), From: 1, To: 2, Text: fmt.Sprint("c", i)}}
				}
				if i == 7 {
					sub.Comments = append(sub.Comments, collab.CommentEvent{Type: "delete", ID: 3})
				}
				r, err := a1.Submit(ctx, "d", "", sub)
				if err != nil {
					t.Fatal(err)
				}
				version = r.Version
				a1.WaitBackground()
			}
			before := mustGet(t, a1, "d")
			evBefore, err := a1.Events(ctx, "d", "", 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if clean {
				if err := a1.Close(); err != nil {
					t.Fatal(err)
				}
				if head, _ := st.Load(ctx, "d"); head.Snapshot.Version != 10 {
					t.Fatalf("snapshot at %d after Close, want 10", head.Snapshot.Version)
				}
			} else {
				defer a1.Close()
				if head, _ := st.Load(ctx, "d"); head.Snapshot.Version != 8 {
					t.Fatalf("snapshot at %d, want 8", head.Snapshot.Version)
				}
			}

			a2 := newAuthority(t, st, collab.Config{})
			after := mustGet(t, a2, "d")
			if !bytes.Equal(after.DocJSON, before.DocJSON) || after.Version != before.Version ||
				after.CommentVersion != before.CommentVersion || !equalComments(after.Comments, before.Comments) {
				t.Fatalf("after restart:\n%s v%d c%d %v\nwant\n%s v%d c%d %v", after.DocJSON, after.Version, after.CommentVersion, after.Comments,
					before.DocJSON, before.Version, before.CommentVersion, before.Comments)
			}
			evAfter, err := a2.Events(ctx, "d", "", 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(evAfter.AppendJSON(nil)), string(evBefore.AppendJSON(nil)); got != want {
				t.Fatalf("events after restart:\n%s\nwant\n%s", got, want)
			}
			// And it goes on from there.
			mustSubmit(t, a2, "d", collab.Submission{Version: 10, Steps: steps(insert(1, "z"))})
		})
	}
}

// TestRestartMappedComments checks that comments moved by steps alone are
// restored where they moved to.
func TestRestartMappedComments(t *testing.T) {
	st := memstore.New()
	a := newAuthority(t, st, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{
		Steps:    steps(insert(1, "hello world")),
		Comments: []collab.CommentEvent{{Type: "create", ID: 1, From: 1, To: 6}, {Type: "create", ID: 2, From: 7, To: 12}},
	})
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Steps: steps(insert(1, "ab"), del(9, 14))})
	want := []collab.Comment{{From: 3, To: 8, ID: 1}}
	if got := mustGet(t, a, "d").Comments; !equalComments(got, want) {
		t.Fatalf("comments %v, want %v", got, want)
	}
	b := newAuthority(t, st, collab.Config{})
	if got := mustGet(t, b, "d").Comments; !equalComments(got, want) {
		t.Fatalf("comments after restart %v, want %v", got, want)
	}
}

// TestSnapshots checks snapshots every SnapshotEvery steps, the pruning
// of the store behind them, and that Events after a restart serve the
// steps the store kept.
func TestSnapshots(t *testing.T) {
	ctx := context.Background()
	fs := &faultStore{Store: memstore.New()}
	a := newAuthority(t, fs, collab.Config{SnapshotEvery: 3, KeepSteps: 2})
	for v := range int64(7) {
		mustSubmit(t, a, "d", collab.Submission{Version: v, Steps: steps(insert(1, "x"))})
		a.WaitBackground()
	}
	if n, at := fs.snapshots.Load(), fs.lastSnapAt.Load(); n != 2 || at != 6 {
		t.Fatalf("%d snapshots, the last at %d; want 2, at 6", n, at)
	}
	head, err := fs.Load(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	// Keeping 2 steps of 7 prunes up to 5, which stops at the snapshot
	// at 3.
	if head.Snapshot.Version != 6 || head.Oldest != 3 || head.Version != 7 {
		t.Fatalf("head: snapshot %d, oldest %d, version %d; want 6, 3, 7", head.Snapshot.Version, head.Oldest, head.Version)
	}
	if _, err := fs.Steps(ctx, "d", 0, 7); !errors.Is(err, store.ErrCompacted) {
		t.Fatalf("Steps(0, 7) after pruning: %v", err)
	}
	// Memory still has all the steps.
	if ev, err := a.Events(ctx, "d", "", 0, 0); err != nil || len(ev.Steps) != 7 {
		t.Fatalf("events after 0: %d steps, %v", len(ev.Steps), err)
	}
	// A new authority has those the store kept.
	b := newAuthority(t, fs, collab.Config{SnapshotEvery: 3, KeepSteps: 2})
	if _, err := b.Events(ctx, "d", "", 2, 0); err != collab.ErrHistoryGone {
		t.Fatalf("events after 2 after a restart: %v, want ErrHistoryGone", err)
	}
	if ev, err := b.Events(ctx, "d", "", 3, 0); err != nil || len(ev.Steps) != 4 {
		t.Fatalf("events after 3 after a restart: %d steps, %v", len(ev.Steps), err)
	}
	if got, want := mustGet(t, b, "d").DocJSON, mustGet(t, a, "d").DocJSON; !bytes.Equal(got, want) {
		t.Fatalf("restarted doc %s, want %s", got, want)
	}

	// A failed snapshot is retried with the next steps.
	fs.failSnap.Store(true)
	for v := int64(7); v < 9; v++ {
		mustSubmit(t, a, "d", collab.Submission{Version: v, Steps: steps(insert(1, "y"))})
		a.WaitBackground()
	}
	fs.failSnap.Store(false)
	mustSubmit(t, a, "d", collab.Submission{Version: 9, Steps: steps(insert(1, "y"))})
	a.WaitBackground()
	if at := fs.lastSnapAt.Load(); at != 10 {
		t.Fatalf("snapshot at %d after a failed one, want 10", at)
	}
}

func TestIdleUnload(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	fs := &faultStore{Store: memstore.New()}
	a := newAuthority(t, fs, collab.Config{IdleUnload: time.Minute, Now: clk.Now})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "abc"))})
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Comments: []collab.CommentEvent{{Type: "create", ID: 1, From: 1, To: 3}}})
	before := mustGet(t, a, "d")

	clk.Advance(59 * time.Second)
	a.UnloadIdle()
	if loaded, _ := a.Loaded("d"); !loaded {
		t.Fatal("unloaded before IdleUnload")
	}
	clk.Advance(time.Second)
	a.UnloadIdle()
	if loaded, _ := a.Loaded("d"); loaded {
		t.Fatal("still loaded after IdleUnload")
	}
	if at := fs.lastSnapAt.Load(); at != 1 {
		t.Fatalf("snapshot at %d when unloading, want 1", at)
	}
	after := mustGet(t, a, "d")
	if !bytes.Equal(after.DocJSON, before.DocJSON) || after.Version != 1 || after.CommentVersion != 1 || !equalComments(after.Comments, before.Comments) {
		t.Fatalf("reloaded: %+v, want %+v", after, before)
	}
	if ev, err := a.Events(ctx, "d", "", 0, 0); err != nil || len(ev.Steps) != 1 || len(ev.Comment) != 1 {
		t.Fatalf("events after reload: %+v, %v", ev, err)
	}

	// A waiting poll keeps the document loaded.
	pctx, cancel := context.WithCancel(ctx)
	ch := poll(t, a, pctx, "u", 1, 1)
	clk.Advance(time.Hour)
	a.UnloadIdle()
	if loaded, _ := a.Loaded("d"); !loaded {
		t.Fatal("unloaded while a poll waits")
	}
	cancel()
	recv(t, ch)
	a.UnloadIdle() // the poll just ended
	if loaded, _ := a.Loaded("d"); !loaded {
		t.Fatal("unloaded right after a poll")
	}
	clk.Advance(time.Minute)
	a.UnloadIdle()
	if loaded, _ := a.Loaded("d"); loaded {
		t.Fatal("still loaded after the poll ended and IdleUnload passed")
	}
	if n := fs.snapshots.Load(); n != 1 {
		t.Fatalf("%d snapshots; unloading an unchanged document should save none", n)
	}
}

// TestJanitor checks that the janitor goroutine unloads on its own.
func TestJanitor(t *testing.T) {
	a := newAuthority(t, nil, collab.Config{IdleUnload: 20 * time.Millisecond})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "abc"))})
	waitFor(t, "the janitor to unload", func() bool { loaded, _ := a.Loaded("d"); return !loaded })
	if st := mustGet(t, a, "d"); st.Version != 1 || string(st.DocJSON) != paragraph("abc") {
		t.Fatalf("reloaded: version %d, doc %s", st.Version, st.DocJSON)
	}
}

func TestUsers(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	a := newAuthority(t, nil, collab.Config{UsersWindow: time.Minute, Now: clk.Now})
	users := func(user string) int {
		t.Helper()
		st, err := a.Get(ctx, "d", user)
		if err != nil {
			t.Fatal(err)
		}
		return st.Users
	}
	steps := []struct {
		advance time.Duration
		do      func() int
		want    int
	}{
		{0, func() int { return users("a") }, 1},
		{0, func() int { return users("a") }, 1},
		{0, func() int { return users("") }, 1},
		{10 * time.Second, func() int { return users("b") }, 2},
		{0, func() int {
			ev, err := a.Events(ctx, "d", "c", 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			return ev.Users
		}, 3},
		{0, func() int {
			if _, err := a.Submit(ctx, "d", "e", collab.Submission{}); err != nil {
				t.Fatal(err)
			}
			return users("")
		}, 4},
		{50 * time.Second, func() int { return users("") }, 3}, // a gone
		{5 * time.Second, func() int { return users("a") }, 4},
		{59 * time.Second, func() int { return users("") }, 1}, // a only
		{time.Second, func() int { return users("") }, 0},
	}
	for i, s := range steps {
		clk.Advance(s.advance)
		if got := s.do(); got != s.want {
			t.Fatalf("step %d: %d users, want %d", i, got, s.want)
		}
	}
	// A waiting user counts however long it waits, and from the end of
	// its wait.
	pctx, cancel := context.WithCancel(ctx)
	ch := poll(t, a, pctx, "w", 0, 0)
	clk.Advance(time.Hour)
	if n := users("x"); n != 2 {
		t.Fatalf("%d users with one waiting, want 2", n)
	}
	cancel()
	recv(t, ch)
	clk.Advance(59 * time.Second)
	if n := users(""); n != 2 {
		t.Fatalf("%d users 59 s after the wait ended, want 2 (w and x)", n)
	}
	clk.Advance(time.Second)
	if n := users(""); n != 0 {
		t.Fatalf("%d users a minute after the wait ended, want 0", n)
	}
	list, err := a.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != "d" || list[0].Users != 0 || list[0].Version != 0 || list[0].Updated.IsZero() {
		t.Fatalf("List: %+v, %v", list, err)
	}
}

func TestCreateDelete(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	a, err := collab.New(collab.Config{Store: st, Schemas: lookupSchema})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Get(ctx, "d", ""); !errors.Is(err, collab.ErrNotFound) {
		t.Fatalf("Get of an unknown document without AutoCreate: %v", err)
	}
	if _, err := a.Events(ctx, "d", "", 0, 0); !errors.Is(err, collab.ErrNotFound) {
		t.Fatalf("Events of an unknown document without AutoCreate: %v", err)
	}
	if _, err := a.Submit(ctx, "d", "", collab.Submission{}); !errors.Is(err, collab.ErrNotFound) {
		t.Fatalf("Submit to an unknown document without AutoCreate: %v", err)
	}
	if _, err := a.Create(ctx, "d", "basic", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Create(ctx, "d", "basic", nil); !errors.Is(err, collab.ErrExists) {
		t.Fatalf("second Create: %v", err)
	}
	text, _ := lookupSchema("text")
	doc, err := text.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"text","text":"plain"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Create(ctx, "t", "basic", doc); !errors.Is(err, collab.ErrInvalidRequest) {
		t.Fatalf("Create with a document of another schema: %v", err)
	}
	if _, err := a.Create(ctx, "t", "nope", nil); !errors.Is(err, collab.ErrInvalidRequest) {
		t.Fatalf("Create with an unknown schema: %v", err)
	}
	if _, err := a.Create(ctx, "t", "text", doc); err != nil {
		t.Fatal(err)
	}
	if s := mustGet(t, a, "t"); s.Schema != "text" || string(s.DocJSON) != `{"type":"doc","content":[{"type":"text","text":"plain"}]}` {
		t.Fatalf("created text doc: %s %s", s.Schema, s.DocJSON)
	}
	if s := mustGet(t, a, "d"); string(s.DocJSON) != paragraph("") {
		t.Fatalf("created basic doc: %s", s.DocJSON)
	}
	mustSubmit(t, a, "t", collab.Submission{Steps: steps(insert(0, "very "))})
	if s := mustGet(t, a, "t"); string(s.DocJSON) != `{"type":"doc","content":[{"type":"text","text":"very plain"}]}` {
		t.Fatalf("text doc after a step: %s", s.DocJSON)
	}
	list, err := a.List(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "d" || list[1].ID != "t" {
		t.Fatalf("List: %+v, %v", list, err)
	}

	// Delete wakes the waiters with ErrNotFound.
	ch := poll(t, a, ctx, "u", 0, 0)
	if err := a.Delete(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, ch); !errors.Is(r.err, collab.ErrNotFound) {
		t.Fatalf("poll on a deleted document: %+v, %v", r.ev, r.err)
	}
	if _, err := a.Get(ctx, "d", ""); !errors.Is(err, collab.ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if err := a.Delete(ctx, "d"); !errors.Is(err, collab.ErrNotFound) {
		t.Fatalf("second Delete: %v", err)
	}
	// An unloaded document is deleted from the store.
	if _, err := a.Create(ctx, "u", "basic", nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, "u"); err != nil {
		t.Fatal(err)
	}
	if list, _ := st.List(ctx); len(list) != 1 || list[0].ID != "t" {
		t.Fatalf("stored after the deletions: %+v", list)
	}
}

func TestClose(t *testing.T) {
	ctx := context.Background()
	fs := &faultStore{Store: memstore.New()}
	a, err := collab.New(collab.Config{Store: fs, Schemas: lookupSchema, AutoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "abc"))})
	ch := poll(t, a, ctx, "u", 1, 0)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, ch); !errors.Is(r.err, collab.ErrClosed) {
		t.Fatalf("poll at Close: %v", r.err)
	}
	if at := fs.lastSnapAt.Load(); at != 1 {
		t.Fatalf("snapshot at %d at Close, want 1", at)
	}
	if _, err := a.Get(ctx, "d", ""); !errors.Is(err, collab.ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	if _, err := a.Submit(ctx, "d", "", collab.Submission{Version: 1}); !errors.Is(err, collab.ErrClosed) {
		t.Fatalf("Submit after Close: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// The store stays open.
	if _, err := fs.Load(ctx, "d"); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrent has writers and pollers on several documents at once
// (run it with -race). Every writer retries on conflict until all its
// steps are in; every poller follows its document to the end and must see
// every step once, in order.
func TestConcurrent(t *testing.T) {
	const (
		docs    = 3
		writers = 3
		edits   = 15
		pollers = 2
	)
	ctx := context.Background()
	st := memstore.New()
	a := newAuthority(t, st, collab.Config{SnapshotEvery: 7, KeepSteps: 5})
	var wg sync.WaitGroup
	errs := make(chan error, docs*(writers+pollers))
	for d := range docs {
		id := fmt.Sprint("doc", d)
		for w := range writers {
			wg.Go(func() {
				for range edits {
					for {
						ev, err := a.Get(ctx, id, fmt.Sprint("w", w))
						if err != nil {
							errs <- err
							return
						}
						_, err = a.Submit(ctx, id, fmt.Sprint("w", w), collab.Submission{
							Version:  ev.Version,
							Steps:    steps(insert(1, fmt.Sprint(w))),
							ClientID: collab.ClientID(fmt.Sprint(w)),
							Comments: []collab.CommentEvent{{Type: "create", ID: ev.Version*10 + int64(w), From: 1, To: 2}},
						})
						if err == nil {
							break
						}
						if !errors.Is(err, collab.ErrConflict) {
							errs <- err
							return
						}
					}
				}
			})
		}
		for p := range pollers {
			wg.Go(func() {
				var version, commentVersion int64
				counts := map[string]int{}
				for version < writers*edits {
					ev, err := nextEvents(ctx, a, id, fmt.Sprint("p", p), version, commentVersion)
					if err != nil {
						errs <- fmt.Errorf("poller %d of %s at %d: %w", p, id, version, err)
						return
					}
					if ev.Version != version+int64(len(ev.Steps)) {
						errs <- fmt.Errorf("poller %d of %s: version %d after %d with %d steps", p, id, ev.Version, version, len(ev.Steps))
						return
					}
					for _, s := range ev.Steps {
						counts[string(s.ClientID)]++
					}
					version, commentVersion = ev.Version, ev.CommentVersion
				}
				for w := range writers {
					if counts[fmt.Sprint(w)] != edits {
						errs <- fmt.Errorf("poller %d of %s saw %v", p, id, counts)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for d := range docs {
		id := fmt.Sprint("doc", d)
		s := mustGet(t, a, id)
		if s.Version != writers*edits || s.CommentVersion != writers*edits || s.Doc.Content.Size() != 2+writers*edits {
			t.Errorf("%s: version %d, comment version %d, size %d", id, s.Version, s.CommentVersion, s.Doc.Content.Size())
		}
		a.WaitBackground()
		b := newAuthority(t, st, collab.Config{})
		if r := mustGet(t, b, id); !bytes.Equal(r.DocJSON, s.DocJSON) || r.Version != s.Version || !equalComments(r.Comments, s.Comments) {
			t.Errorf("%s rebuilt differs: %s v%d", id, r.DocJSON, r.Version)
		}
	}
}
