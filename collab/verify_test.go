package collab_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// writeDoc writes the document id through an Authority over st: n
// insertions, snapshots every 10 steps, and two comments, one deleted.
func writeDoc(t *testing.T, st store.Store, id string, n int) {
	t.Helper()
	// No snapshot in the background: closing the authority every 10 steps
	// saves one there, so the snapshots are at 0, 10, 20 … and at n.
	cfg := collab.Config{SnapshotEvery: 1000}
	a := newAuthority(t, st, cfg)
	mustGet(t, a, id)
	for i := range n {
		if i > 0 && i%10 == 0 {
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			a = newAuthority(t, st, cfg)
		}
		s := collab.Submission{Version: int64(i), Steps: steps(insert(1, "ab"))}
		switch i {
		case 3:
			s.Comments = []collab.CommentEvent{{Type: "create", ID: 1, From: 1, To: 3, Text: "one"}, {Type: "create", ID: 2, From: 2, To: 4, Text: "two"}}
		case 17:
			s.Comments = []collab.CommentEvent{{Type: "delete", ID: 2}}
		}
		mustSubmit(t, a, id, s)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

func verify(t *testing.T, st store.Store, id string) collab.Verified {
	t.Helper()
	v, err := collab.Verify(context.Background(), st, id, collab.VerifyOptions{Schemas: lookupSchema})
	if err != nil {
		t.Fatalf("Verify(%q): %v", id, err)
	}
	return v
}

func TestVerifyHealthy(t *testing.T) {
	st := memstore.New()
	writeDoc(t, st, "d", 25)
	for _, tt := range []struct {
		name string
		st   store.Store
		// the kept snapshots (at 0, 10, 20 and 25 through a Scanner)
		snapshots, compared int
		replayed            int64
	}{{"Scanner", st, 4, 3, 25}, {"LoadAndSteps", struct{ store.Store }{st}, 1, 0, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			v := verify(t, tt.st, "d")
			if !v.OK() || len(v.Problems) != 0 {
				t.Fatalf("problems: %v", v.Problems)
			}
			head, err := st.Load(context.Background(), "d")
			if err != nil {
				t.Fatal(err)
			}
			if v.Version != 25 || v.Steps != 25-head.Oldest || v.Replayed != tt.replayed || v.Snapshots != tt.snapshots || v.Compared != tt.compared || v.Comments != 1 {
				t.Errorf("verified %+v; head: oldest %d, snapshot %d", v, head.Oldest, head.Snapshot.Version)
			}
		})
	}
	if _, err := collab.Verify(context.Background(), st, "nope", collab.VerifyOptions{Schemas: lookupSchema}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Verify of an unknown document: %v, want ErrNotFound", err)
	}
}

// TestVerifyDamaged damages stored documents through the store.Store
// interface (which keeps any bytes) and checks that Verify names each
// problem's version.
func TestVerifyDamaged(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		damage  func(t *testing.T, st store.Store) // on a document at version 25
		version int64
		what    string
	}{
		{"StepDoesNotApply", func(t *testing.T, st store.Store) {
			if err := st.Append(ctx, "d", 25, []store.Step{{JSON: insert(999, "x"), ClientID: []byte("1")}}, nil); err != nil {
				t.Fatal(err)
			}
		}, 26, "step does not apply"},
		{"StepDoesNotDecode", func(t *testing.T, st store.Store) {
			if err := st.Append(ctx, "d", 25, []store.Step{{JSON: []byte(`{"stepType":"nope"}`), ClientID: []byte("1")}}, nil); err != nil {
				t.Fatal(err)
			}
		}, 26, "step does not apply"},
		{"SnapshotInvalid", func(t *testing.T, st store.Store) {
			snap := store.Snapshot{Version: 25, Doc: []byte(`{"type":"doc","content":[{"type":"nope"}]}`)}
			if err := st.SaveSnapshot(ctx, "d", snap, -1); err != nil {
				t.Fatal(err)
			}
		}, 25, "snapshot: not a document"},
		{"SnapshotNotCanonical", func(t *testing.T, st store.Store) {
			snap := store.Snapshot{Version: 25, Doc: []byte(`{"type":"doc", "content":[{"type":"paragraph"}]}`)}
			if err := st.SaveSnapshot(ctx, "d", snap, -1); err != nil {
				t.Fatal(err)
			}
		}, 25, "not the canonical JSON"},
		{"SnapshotTooShort", func(t *testing.T, st store.Store) {
			// The same shape with less text: a step after it inserts
			// beyond its end.
			snap := store.Snapshot{Version: 25, Doc: []byte(paragraph("ab"))}
			if err := st.SaveSnapshot(ctx, "d", snap, -1); err != nil {
				t.Fatal(err)
			}
			if err := st.Append(ctx, "d", 25, []store.Step{{JSON: insert(7, "x"), ClientID: []byte("1")}}, nil); err != nil {
				t.Fatal(err)
			}
		}, 26, "step does not apply"},
		{"SnapshotAltered", func(t *testing.T, st store.Store) {
			head, err := st.Load(ctx, "d")
			if err != nil {
				t.Fatal(err)
			}
			doc := strings.Replace(string(head.Snapshot.Doc), "abab", "abxb", 1)
			if err := st.SaveSnapshot(ctx, "d", store.Snapshot{Version: 25, Doc: []byte(doc)}, -1); err != nil {
				t.Fatal(err)
			}
		}, 25, "not the document that the steps before it make"},
		{"CommentOutside", func(t *testing.T, st store.Store) {
			entry := []byte(`[{"type":"create","id":7,"text":"x","from":1,"to":999}]`)
			if err := st.Append(ctx, "d", 25, nil, entry); err != nil {
				t.Fatal(err)
			}
		}, 25, "comment 7: range 1-999 is outside the document"},
		{"CommentEntryBad", func(t *testing.T, st store.Store) {
			if err := st.Append(ctx, "d", 25, nil, []byte(`[{"type":"update","id":1}]`)); err != nil {
				t.Fatal(err)
			}
		}, -1, "comment entry"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := memstore.New()
			writeDoc(t, st, "d", 25)
			writeDoc(t, st, "other", 3)
			tt.damage(t, st)
			v := verify(t, st, "d")
			if v.OK() || len(v.Problems) == 0 {
				t.Fatalf("no problem found: %+v", v)
			}
			found := false
			for _, p := range v.Problems {
				found = found || p.Doc == "d" && p.Version == tt.version && strings.Contains(p.What, tt.what)
			}
			if !found {
				t.Errorf("problems %q, want one at version %d: %q…", v.Problems, tt.version, tt.what)
			}
			if o := verify(t, st, "other"); !o.OK() {
				t.Errorf("the other document: %v", o.Problems)
			}
		})
	}
}

func TestVerifyUnknownSchema(t *testing.T) {
	st := memstore.New()
	writeDoc(t, st, "d", 5)
	none := func(string) (*model.Schema, bool) { return nil, false }
	v, err := collab.Verify(context.Background(), st, "d", collab.VerifyOptions{Schemas: none})
	if err != nil {
		t.Fatal(err)
	}
	if v.Count != 1 || v.Problems[0].Version != -1 || !strings.Contains(v.Problems[0].String(), `doc "d": unknown schema "basic"`) || v.Steps != 5 || v.Replayed != 0 {
		t.Errorf("verified %+v", v)
	}
}

// BenchmarkVerify verifies a document of 1,000 steps replayed from its
// creation; the figure is per document.
func BenchmarkVerify(b *testing.B) {
	st := memstore.New()
	ctx := context.Background()
	a, err := collab.New(collab.Config{Store: st, Schemas: lookupSchema, AutoCreate: true})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.Get(ctx, "d", ""); err != nil {
		b.Fatal(err)
	}
	for v := range 1000 {
		if _, err := a.Submit(ctx, "d", "", collab.Submission{Version: int64(v), ClientID: collab.ClientID("1"), Steps: steps(insert(1, "ab"))}); err != nil {
			b.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		v, err := collab.Verify(ctx, st, "d", collab.VerifyOptions{Schemas: lookupSchema})
		if err != nil || !v.OK() || v.Replayed != 1000 {
			b.Fatalf("%+v, %v", v, err)
		}
	}
}
