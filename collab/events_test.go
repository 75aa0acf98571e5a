package collab_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
)

func TestEventsVersions(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{History: 3})
	for v := range int64(5) {
		mustSubmit(t, a, "d", collab.Submission{Version: v, Steps: steps(insert(1, "x")), ClientID: collab.ClientID("1")})
	}
	mustSubmit(t, a, "d", collab.Submission{Version: 5, Comments: []collab.CommentEvent{{Type: "create", ID: 1, From: 1, To: 2}}})
	tests := []struct {
		version, commentVersion int64
		steps                   int
		want                    error
		msg                     string
	}{
		{-1, 0, 0, collab.ErrInvalidVersion, "Invalid version -1"},
		{6, 0, 0, collab.ErrInvalidVersion, "Invalid version 6"},
		{5, 2, 0, collab.ErrInvalidVersion, "Invalid version 2 (commentVersion)"},
		{5, -1, 0, collab.ErrInvalidVersion, "Invalid version -1 (commentVersion)"},
		{0, 0, 0, collab.ErrHistoryGone, "History no longer available"},
		{1, 1, 0, collab.ErrHistoryGone, "History no longer available"},
		{2, 1, 3, nil, ""},
		{4, 0, 1, nil, ""},
		{5, 1, 0, nil, ""},
	}
	for _, tt := range tests {
		ev, err := a.Events(ctx, "d", "", tt.version, tt.commentVersion)
		if !errors.Is(err, tt.want) || (err != nil && err.Error() != tt.msg) {
			t.Errorf("Events(%d, %d): %v, want %q", tt.version, tt.commentVersion, err, tt.msg)
			continue
		}
		if err != nil {
			continue
		}
		if ev.Version != 5 || ev.CommentVersion != 1 || len(ev.Steps) != tt.steps || len(ev.Comment) != int(1-tt.commentVersion) {
			t.Errorf("Events(%d, %d): %+v", tt.version, tt.commentVersion, ev)
		}
	}
}

// waitFor polls cond until it holds or a few seconds passed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// recv returns what a poll answered, failing the test when it does not
// answer within a few seconds.
func recv(t *testing.T, ch <-chan eventsResult) eventsResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("the poll did not answer")
		return eventsResult{}
	}
}

type eventsResult struct {
	ev  collab.Events
	err error
}

// poll starts a waiting Events call and returns its answer's channel,
// once it waits.
func poll(t *testing.T, a *collab.Authority, ctx context.Context, user string, version, commentVersion int64) <-chan eventsResult {
	t.Helper()
	before := a.Waiting("d")
	out := make(chan eventsResult, 1)
	go func() {
		ev, err := nextEvents(ctx, a, "d", user, version, commentVersion)
		out <- eventsResult{ev, err}
	}()
	waitFor(t, "the poll to wait", func() bool { return a.Waiting("d") > before })
	return out
}

func TestEventsWait(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{})
	mustGet(t, a, "d")

	// Woken by steps.
	ch := poll(t, a, ctx, "u1", 0, 0)
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hi")), ClientID: collab.ClientID(`"me"`)})
	r := recv(t, ch)
	if r.err != nil || r.ev.Version != 1 || len(r.ev.Steps) != 1 || string(r.ev.Steps[0].ClientID) != `"me"` {
		t.Fatalf("poll woken by steps: %+v, %v", r.ev, r.err)
	}

	// Not woken by a submission that changes nothing, woken by a
	// comment-only one.
	ch = poll(t, a, ctx, "u1", 1, 0)
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Comments: []collab.CommentEvent{{Type: "delete", ID: 7}}})
	select {
	case r := <-ch:
		t.Fatalf("poll woken by a submission that changed nothing: %+v, %v", r.ev, r.err)
	case <-time.After(20 * time.Millisecond):
	}
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Comments: []collab.CommentEvent{{Type: "create", ID: 7, From: 1, To: 3, Text: "c"}}})
	r = recv(t, ch)
	if r.err != nil || r.ev.Version != 1 || r.ev.CommentVersion != 1 || len(r.ev.Steps) != 0 || len(r.ev.Comment) != 1 {
		t.Fatalf("poll woken by a comment: %+v, %v", r.ev, r.err)
	}

	// Answers at once when either version is behind.
	for _, v := range [][2]int64{{0, 1}, {1, 0}} {
		ev, err := nextEvents(ctx, a, "d", "u1", v[0], v[1])
		if err != nil || ev.Version != 1 || ev.CommentVersion != 1 {
			t.Fatalf("Events(%d, %d) behind: %+v, %v", v[0], v[1], ev, err)
		}
	}
	// Not waiting: an empty answer at the current versions.
	ev, err := a.Events(ctx, "d", "u1", 1, 1)
	if err != nil || ev.Version != 1 || ev.CommentVersion != 1 || len(ev.Steps)+len(ev.Comment) != 0 {
		t.Fatalf("Events without wait: %+v, %v", ev, err)
	}
	if got := string(ev.AppendJSON(nil)); got != `{"version":1,"commentVersion":1,"steps":[],"clientIDs":[],"comment":[],"users":1}` {
		t.Fatalf("empty events JSON: %s", got)
	}

	// A canceled poll returns the context's error and leaves nothing behind.
	cctx, cancel := context.WithCancel(ctx)
	ch = poll(t, a, cctx, "u2", 1, 1)
	cancel()
	r = recv(t, ch)
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("canceled poll: %+v, %v", r.ev, r.err)
	}
	if n := a.Waiting("d"); n != 0 {
		t.Fatalf("%d waiters after the poll was canceled", n)
	}
	if _, refs := a.Loaded("d"); refs != 0 {
		t.Fatalf("%d references after the poll was canceled", refs)
	}
	tctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := nextEvents(tctx, a, "d", "u2", 1, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("poll past its deadline: %v", err)
	}
}

// TestEventsWaitCollapsedComment checks that a poll behind only on the
// comment version, whose events were all left out (the comment collapsed),
// waits like the demo server instead of answering nothing at once.
func TestEventsWaitCollapsedComment(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{})
	mustGet(t, a, "d")
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "abcd")), ClientID: collab.ClientID(`1`)})
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Comments: []collab.CommentEvent{{Type: "create", ID: 9, From: 2, To: 4, Text: "c"}}})
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Steps: steps(del(1, 5)), ClientID: collab.ClientID(`1`)})

	ev, err := a.Events(ctx, "d", "u", 2, 0)
	if err != nil || ev.Version != 2 || ev.CommentVersion != 1 || len(ev.Steps)+len(ev.Comment) != 0 {
		t.Fatalf("events of a collapsed comment: %+v, %v", ev, err)
	}
	ch := poll(t, a, ctx, "u", 2, 0)
	select {
	case r := <-ch:
		t.Fatalf("poll with nothing to show answered at once: %+v, %v", r.ev, r.err)
	case <-time.After(30 * time.Millisecond):
	}
	mustSubmit(t, a, "d", collab.Submission{Version: 2, Steps: steps(insert(1, "x")), ClientID: collab.ClientID(`1`)})
	r := recv(t, ch)
	if r.err != nil || r.ev.Version != 3 || len(r.ev.Steps) != 1 || r.ev.CommentVersion != 1 {
		t.Fatalf("poll woken by steps: %+v, %v", r.ev, r.err)
	}
}

// TestManyWaiters checks that one publish wakes every waiter.
func TestManyWaiters(t *testing.T) {
	const n = 1000
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{})
	mustGet(t, a, "d")
	var wg sync.WaitGroup
	results := make([]eventsResult, n)
	for i := range n {
		wg.Go(func() {
			ev, err := nextEvents(ctx, a, "d", "user", 0, 0)
			results[i] = eventsResult{ev, err}
		})
	}
	waitFor(t, "the waiters", func() bool { return a.Waiting("d") == n })
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "x"))})
	waitFor(t, "the waiters to answer", func() bool { return a.Waiting("d") == 0 })
	wg.Wait()
	for i, r := range results {
		if r.err != nil || r.ev.Version != 1 || len(r.ev.Steps) != 1 || r.ev.Users != 1 {
			t.Fatalf("waiter %d: %+v, %v", i, r.ev, r.err)
		}
	}
	if n := a.Waiting("d"); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
}
