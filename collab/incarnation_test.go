package collab_test

import (
	"context"
	"errors"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestAutoCreateAfterDelete: a document created again, by using it or by
// Create, starts after the deleted one's last version, so that its
// clients' versions mean nothing to it: their events are gone, their
// submissions conflict.
func TestAutoCreateAfterDelete(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	a := newAuthority(t, ms, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "abc"))})
	if err := a.Delete(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	s := mustGet(t, a, "d")
	if s.Version != 2 || string(s.DocJSON) != paragraph("") {
		t.Fatalf("recreated: version %d, doc %s; want version 2, empty", s.Version, s.DocJSON)
	}
	for _, v := range []int64{0, 1} {
		if ev, err := a.Events(ctx, "d", "", v, 0); !errors.Is(err, collab.ErrHistoryGone) {
			t.Errorf("Events at the deleted document's version %d: %+v, %v; want ErrHistoryGone", v, ev, err)
		}
		sub := collab.Submission{Version: v, ClientID: collab.ClientID("1"), Steps: steps(insert(1, "x"))}
		if r, err := a.Submit(ctx, "d", "", sub); !errors.Is(err, collab.ErrConflict) {
			t.Errorf("Submit at the deleted document's version %d: %+v, %v; want ErrConflict", v, r, err)
		}
	}
	mustSubmit(t, a, "d", collab.Submission{Version: 2, Steps: steps(insert(1, "new"))})
	if ev, err := a.Events(ctx, "d", "", 2, 0); err != nil || ev.Version != 3 || len(ev.Steps) != 1 {
		t.Errorf("Events at 2: %+v, %v", ev, err)
	}
	// Verify takes a document whose steps start after 0.
	for _, st := range []store.Store{ms, quietStore{ms}} {
		if v := verify(t, st, "d"); !v.OK() || v.Version != 3 || v.Steps != 1 || v.Replayed != 1 {
			t.Errorf("Verify of the document created again: %+v", v)
		}
	}
	if err := a.Delete(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if v, err := a.Create(ctx, "d", "basic", nil); err != nil || v != 4 {
		t.Errorf("Create after the second Delete: %d, %v; want version 4", v, err)
	}
	if s := mustGet(t, a, "d"); s.Version != 4 {
		t.Errorf("created: version %d, want 4", s.Version)
	}
	if v, err := a.Create(ctx, "e", "basic", nil); err != nil || v != 0 {
		t.Errorf("Create of a new id: %d, %v; want version 0", v, err)
	}
}

// quietStore hides every interface of its store but store.Store: an
// Authority over it learns of other writers' changes only when an append
// conflicts.
type quietStore struct{ store.Store }

// TestIncarnationCatchUp: an Authority that has a document in memory
// while another one sharing its store deletes it and creates it again
// does not take the new document's steps for the continuation of the old
// one when it catches up: it reloads, and its clients at the old
// document's versions are told the history is gone.
func TestIncarnationCatchUp(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	a := newAuthority(t, quietStore{ms}, collab.Config{})
	b := newAuthority(t, quietStore{ms}, collab.Config{})
	for i, c := range "OLD-O" {
		mustSubmit(t, a, "d", collab.Submission{Version: int64(i), Steps: steps(insert(1+i, string(c)))})
	}
	if err := b.Delete(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	v := mustGet(t, b, "d").Version
	for i, c := range "NEW-OWNE" {
		mustSubmit(t, b, "d", collab.Submission{Version: v + int64(i), ClientID: collab.ClientID("2"), Steps: steps(insert(1+i, string(c)))})
	}
	want := paragraph("NEW-OWNE")
	// a still has the old document at 5: a submission there conflicts
	// and makes a catch up.
	sub := collab.Submission{Version: 5, ClientID: collab.ClientID("1"), Steps: steps(del(1, 6))}
	if r, err := a.Submit(ctx, "d", "", sub); !errors.Is(err, collab.ErrConflict) {
		t.Errorf("Submit at the old version 5: %+v, %v; want ErrConflict", r, err)
	}
	if ev, err := a.Events(ctx, "d", "", 5, 0); !errors.Is(err, collab.ErrHistoryGone) {
		t.Errorf("Events at the old version 5 after the catch-up: %d steps to %d, %v; want ErrHistoryGone", len(ev.Steps), ev.Version, err)
	}
	sa, sb := mustGet(t, a, "d"), mustGet(t, b, "d")
	if string(sa.DocJSON) != want || sa.Version != sb.Version || string(sb.DocJSON) != want {
		t.Errorf("after the catch-up: a has %s at %d, b %s at %d; want %s", sa.DocJSON, sa.Version, sb.DocJSON, sb.Version, want)
	}
}
