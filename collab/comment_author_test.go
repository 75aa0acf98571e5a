package collab_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestCommentAuthor: a comment's author is the submission's Author,
// whatever its create event says, in Get, in Events and after a restart;
// with OwnComments a submission deletes only its author's comments (an
// error matching ErrForbidden otherwise, and nothing changes).
func TestCommentAuthor(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	a := newAuthority(t, st, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello world"))})
	comment := func(author string, own bool, events ...collab.CommentEvent) error {
		_, err := a.Submit(ctx, "d", author, collab.Submission{Version: 1, Author: author, OwnComments: own, Comments: events})
		return err
	}
	create := func(id int64, forged string) collab.CommentEvent {
		return collab.CommentEvent{Type: collab.CommentCreate, ID: id, From: 1, To: 6, Text: "note\n— " + forged, Author: forged}
	}
	remove := func(id int64) collab.CommentEvent { return collab.CommentEvent{Type: collab.CommentDelete, ID: id} }
	if err := comment("carol", true, create(1, "alice")); err != nil {
		t.Fatal(err)
	}
	if err := comment("", false, create(2, "alice")); err != nil {
		t.Fatal(err)
	}
	if err := comment("alice", true, create(3, "")); err != nil {
		t.Fatal(err)
	}
	authors := func(a *collab.Authority) map[int64]string {
		out := map[int64]string{}
		for _, c := range mustGet(t, a, "d").Comments {
			out[c.ID] = c.Author
		}
		return out
	}
	want := map[int64]string{1: "carol", 2: "", 3: "alice"}
	check := func(what string, got map[int64]string) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: authors %v, want %v", what, got, want)
		}
		for id, w := range want {
			if got[id] != w {
				t.Errorf("%s: comment %d by %q, want %q", what, id, got[id], w)
			}
		}
	}
	check("Get", authors(a))
	ev, err := a.Events(ctx, "d", "", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	fromEvents := map[int64]string{}
	for _, e := range ev.Comment {
		fromEvents[e.ID] = e.Author
	}
	check("Events", fromEvents)
	if js := string(ev.AppendJSON(nil)); !strings.Contains(js, `"id":1,"text":"note\n— alice","from":1,"to":6,"author":"carol",`) {
		t.Errorf("events JSON %s: want comment 1's author carol", js)
	}

	// carol, a commenter, may delete hers only.
	before := mustGet(t, a, "d").CommentVersion
	for _, id := range []int64{3, 2} {
		if err := comment("carol", true, remove(1), remove(id)); !errors.Is(err, collab.ErrForbidden) || !strings.Contains(err.Error(), "comment event 1") {
			t.Errorf("carol deletes comment %d: %v, want ErrForbidden for event 1", id, err)
		}
	}
	if st := mustGet(t, a, "d"); st.CommentVersion != before || len(st.Comments) != 3 {
		t.Fatalf("after the refusals: comment version %d, %d comments; want %d, 3", st.CommentVersion, len(st.Comments), before)
	}
	if err := comment("carol", true, remove(1), remove(99)); err != nil {
		t.Errorf("carol deletes hers (and an unknown one): %v", err)
	}
	delete(want, 1)
	// Another node, and a restart: the authors are read back from the
	// store (its comment entries, then its snapshot).
	check("another node", authors(newAuthority(t, st, collab.Config{})))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a = newAuthority(t, st, collab.Config{})
	check("after a restart", authors(a))
	if err := comment("alice", true, remove(2)); !errors.Is(err, collab.ErrForbidden) {
		t.Errorf("alice deletes an anonymous comment: %v, want ErrForbidden", err)
	}
	// An editor deletes anyone's.
	if err := comment("bob", false, remove(2), remove(3)); err != nil {
		t.Errorf("an editor deletes others' comments: %v", err)
	}
	if n := len(mustGet(t, a, "d").Comments); n != 0 {
		t.Errorf("%d comments left, want 0", n)
	}
}
