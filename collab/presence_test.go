package collab_test

import (
	"context"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/testutil"
)

// follow subscribes to the document id on a at its current versions,
// following presence.
func follow(t *testing.T, a *collab.Authority, id string) *collab.Subscription {
	t.Helper()
	s, err := a.Subscribe(context.Background(), id, "", -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.FollowPresence()
	return s
}

// nextPresence waits for s's next update with presence changes and
// returns it.
func nextPresence(t *testing.T, s *collab.Subscription) collab.Events {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		ev, err := s.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for presence: %v", err)
		}
		if len(ev.Presence) > 0 || len(ev.Left) > 0 {
			return ev
		}
	}
}

// entryOf returns the entry of id in entries.
func entryOf(entries []collab.Presence, id string) (collab.Presence, bool) {
	for _, p := range entries {
		if string(p.ClientID) == id {
			return p, true
		}
	}
	return collab.Presence{}, false
}

// TestPresence: a follower is told of a client that comes, of its
// selections (mapped from older versions to the document's), not of
// steps that map them, and of its leaving; a joining client gets every
// entry at the cursor; selections outside the document are refused, and
// ones that cannot be mapped ignored.
func TestPresence(t *testing.T) {
	a := newAuthority(t, nil, collab.Config{PresenceEvery: time.Millisecond})
	mustSubmit(t, a, "d", collab.Submission{Version: 0, Steps: steps(insert(1, "abcdef"))}) // size 8
	s := follow(t, a, "d")
	s.Present(collab.ClientID("7"), []byte(`{"name":"Ann"}`))
	ev := nextPresence(t, s)
	if p, ok := entryOf(ev.Presence, "7"); !ok || string(p.Info) != `{"name":"Ann"}` || p.Anchor != -1 || ev.Version != 1 {
		t.Fatalf("after Present: %+v", ev)
	}
	if !s.Select(collab.ClientID("7"), 1, 2, 4) {
		t.Fatal("a selection inside the document refused")
	}
	if p, _ := entryOf(nextPresence(t, s).Presence, "7"); p.Anchor != 2 || p.Head != 4 {
		t.Fatalf("selection %+v", p)
	}
	// A step before the selection maps it, silently.
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Steps: steps(insert(1, "xy"))})
	ev, _, err := s.Take()
	if err != nil || len(ev.Steps) != 1 || len(ev.Presence) != 0 {
		t.Fatalf("after a step: %+v, %v", ev, err)
	}
	_, _, w, err := s.Join("u", 2, 0, -1, false)
	if p, ok := entryOf(w.Presence, "7"); err != nil || !ok || p.Anchor != 4 || p.Head != 6 {
		t.Fatalf("welcome presence %+v, %v", w.Presence, err)
	}
	// A selection at version 1 is mapped to version 2.
	s.Select(collab.ClientID("7"), 1, 1, 1)
	if p, _ := entryOf(nextPresence(t, s).Presence, "7"); p.Anchor != 3 {
		t.Fatalf("a selection at an older version mapped to %d, want 3", p.Anchor)
	}
	// Outside the document at version 1 (size 8): refused; ahead of the
	// document, or before its history: ignored.
	if s.Select(collab.ClientID("7"), 1, 9, 9) {
		t.Error("a position outside the document accepted")
	}
	if !s.Select(collab.ClientID("7"), 5, 1, 1) || !s.Select(collab.ClientID("7"), 0, 1, 1) {
		t.Error("an unmappable selection refused")
	}
	_, _, w, _ = s.Join("u", 2, 0, -1, false)
	if p, _ := entryOf(w.Presence, "7"); p.Anchor != 3 {
		t.Errorf("after refused and ignored selections: %+v", p)
	}
	// Two Presents under one id need two Absents.
	s.Present(collab.ClientID("7"), []byte(`{"name":"Ann"}`))
	s.Absent(collab.ClientID("7"))
	s.Present(collab.ClientID("8"), []byte(`{}`))
	ev = nextPresence(t, s)
	if _, ok := entryOf(ev.Presence, "8"); !ok || len(ev.Left) != 0 {
		t.Fatalf("after an Absent of two Presents: %+v", ev)
	}
	s.Absent(collab.ClientID("7"))
	if ev = nextPresence(t, s); len(ev.Left) != 1 || string(ev.Left[0]) != "7" {
		t.Fatalf("after the last Absent: %+v", ev)
	}
	// A subscription that does not follow presence is not told.
	plain, err := a.Subscribe(context.Background(), "d", "", -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	s.Select(collab.ClientID("8"), 2, 1, 1)
	nextPresence(t, s)
	if ev, news, _ := plain.Take(); news || len(ev.Presence) > 0 {
		t.Errorf("a plain subscription got presence: %+v", ev)
	}
}

// TestPresenceAcrossNodes: the clients of one node are shown to the
// followers of the others, with their selections mapped to the
// receiving node's version, their client ids held there for their
// owners while they are present, and their leaving.
func TestPresenceAcrossNodes(t *testing.T) {
	bus := new(testutil.Bus)
	as, _ := nodes(t, bus, 2, collab.Config{PeerRefresh: 20 * time.Millisecond, PresenceEvery: time.Millisecond})
	mustSubmit(t, as[0], "d", collab.Submission{Version: 0, Steps: steps(insert(1, "abcdef"))})
	release, err := as[0].HoldClientID(context.Background(), "d", "alice", "alice", collab.ClientID("7"))
	if err != nil {
		t.Fatal(err)
	}
	s0 := follow(t, as[0], "d")
	s1 := follow(t, as[1], "d")
	s0.Present(collab.ClientID("7"), []byte(`{"name":"Alice"}`))
	s0.Select(collab.ClientID("7"), 1, 3, 5)
	var p collab.Presence
	for p.Anchor != 3 {
		p, _ = entryOf(nextPresence(t, s1).Presence, "7")
	}
	if string(p.Info) != `{"name":"Alice"}` || p.Head != 5 {
		t.Fatalf("entry of the other node %+v", p)
	}
	refusedFor(t, "a submission under an id present on another node", submitAs(as[1], 1, "7", "mallory", "mallory"), "7")
	// The other node's selection, at its version 1, reaches a node at
	// version 2 mapped.
	mustSubmit(t, as[1], "d", collab.Submission{Version: 1, Steps: steps(insert(1, "xy")), ClientID: collab.ClientID("9")})
	if _, _, err := s1.Take(); err != nil {
		t.Fatal(err)
	}
	s0.Select(collab.ClientID("7"), 1, 1, 2) // node 0 may not have the step yet: its version is 1 or 2
	for p = (collab.Presence{}); p.Anchor != 3; {
		p, _ = entryOf(nextPresence(t, s1).Presence, "7")
	}
	if p.Head != 4 {
		t.Fatalf("mapped entry %+v, want 3-4", p)
	}
	s0.Absent(collab.ClientID("7"))
	release()
	for ev := nextPresence(t, s1); len(ev.Left) == 0; ev = nextPresence(t, s1) {
	}
	if err := submitAs(as[1], 2, "7", "mallory", "mallory"); err != nil {
		t.Errorf("the id is still held after its client left: %v", err)
	}
}
