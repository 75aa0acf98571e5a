package collab_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/pmauthority/pmauthority/changeset"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/transform"
)

// changesJSON renders changes as the JS library's JSON.
func changesJSON(t *testing.T, changes []changeset.Change[string]) string {
	t.Helper()
	buf := []byte{'['}
	for i, ch := range changes {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = ch.AppendJSON(buf); err != nil {
			t.Fatal(err)
		}
	}
	return string(append(buf, ']'))
}

// TestChanges checks Changes against the changeset package run on the
// documents and steps of the same history, by two authors, for every
// pair of versions, with and without simplify.
func TestChanges(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{})
	mustGet(t, a, "d")
	history := []struct {
		author string
		step   []byte
	}{
		{"ann", insert(1, "Hello world")},
		{"bob", del(7, 12)},
		{"bob", insert(7, "there")},
		{"ann", insert(1, "Oh, ")},
		{"", insert(16, "!")},
		{"ann", del(5, 9)},
	}
	for i, h := range history {
		mustSubmit(t, a, "d", collab.Submission{Version: int64(i), Steps: steps(h.step), Author: h.author,
			ClientID: collab.ClientID(fmt.Sprintf("%q", "client-"+h.author))})
	}
	schema, _ := lookupSchema("basic")
	for from := int64(0); from <= int64(len(history)); from++ {
		for to := from; to <= int64(len(history)); to++ {
			start, err := a.DocAt(ctx, "d", from)
			if err != nil {
				t.Fatal(err)
			}
			doc := start
			var maps []*transform.StepMap
			var authors []string
			for _, h := range history[from:to] {
				step, err := transform.StepFromJSON(schema, h.step)
				if err != nil {
					t.Fatal(err)
				}
				if doc, err = step.Apply(doc); err != nil {
					t.Fatal(err)
				}
				maps, authors = append(maps, step.GetMap()), append(authors, h.author)
			}
			set, err := changeset.Create(start, changeset.Options[string]{}).AddSteps(doc, maps, authors)
			if err != nil {
				t.Fatal(err)
			}
			simplified, err := changeset.SimplifyChanges(set.Changes(), doc)
			if err != nil {
				t.Fatal(err)
			}
			for _, simplify := range []bool{false, true} {
				r := a.Reserve("test")
				got, err := a.Changes(ctx, "d", from, to, simplify, r)
				r.Release()
				if err != nil {
					t.Fatalf("Changes(%d, %d, %v): %v", from, to, simplify, err)
				}
				want := set.Changes()
				if simplify {
					want = simplified
				}
				if g, w := changesJSON(t, got), changesJSON(t, want); g != w {
					t.Errorf("Changes(%d, %d, %v) = %s, want %s", from, to, simplify, g, w)
				}
			}
		}
	}
	r := a.Reserve("test")
	defer r.Release()
	got, err := a.Changes(ctx, "d", 1, 3, false, r)
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"fromA":7,"toA":12,"fromB":7,"toB":12,"deleted":[{"length":5,"data":"bob"}],"inserted":[{"length":5,"data":"bob"}]}]`
	if g := changesJSON(t, got); g != want {
		t.Errorf("bob's replacement of world: %s, want %s", g, want)
	}
}

// TestChangesErrors checks that Changes fails as DocAt does for versions
// and documents, and names its own limit.
func TestChangesErrors(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	a := newAuthority(t, st, collab.Config{KeepSteps: 3, Limits: collab.Limits{MaxChangesSteps: 5}})
	typeText(t, a, "d", "abcdefgh")
	if _, err := a.Checkpoint(ctx, "d", "", "eight", "ann"); err != nil {
		t.Fatal(err)
	}
	typeText2 := func(from int, s string) {
		for i, r := range s {
			mustSubmit(t, a, "d", collab.Submission{Version: int64(from + i), Steps: steps(insert(1+from+i, string(r)))})
		}
	}
	typeText2(8, "ijkl")
	// A snapshot at 10 keeping 2 steps prunes the steps up to 10.
	if err := st.SaveSnapshot(ctx, "d", store.Snapshot{Version: 10, Doc: []byte(docJSON(t, a, "d", 10)), Meta: []byte(`{"comments":[]}`)}, 2); err != nil {
		t.Fatal(err)
	}
	var limit *collab.LimitError
	for _, tt := range []struct {
		id       string
		from, to int64
		want     func(error) bool
		what     string
	}{
		{"d", 10, 12, nil, "no error"},
		{"d", 12, 12, nil, "no error"},
		{"d", 11, 10, func(err error) bool { return errors.Is(err, collab.ErrInvalidRequest) }, "ErrInvalidRequest"},
		{"d", -1, 12, func(err error) bool { return errors.Is(err, collab.ErrInvalidVersion) }, "ErrInvalidVersion"},
		{"d", 10, 13, func(err error) bool { return errors.Is(err, collab.ErrInvalidVersion) }, "ErrInvalidVersion"},
		{"nothing", 0, 0, func(err error) bool { return errors.Is(err, collab.ErrNotFound) }, "ErrNotFound"},
		{"d", 9, 12, func(err error) bool { return errors.Is(err, collab.ErrHistoryGone) }, "ErrHistoryGone"},
		// The checkpoint keeps the document at 8, not the steps after it.
		{"d", 8, 12, func(err error) bool { return errors.Is(err, collab.ErrHistoryGone) }, "ErrHistoryGone"},
		{"d", 8, 8, nil, "no error"},
		{"d", 2, 12, func(err error) bool { return errors.As(err, &limit) && limit.Limit == 5 && limit.Value == 10 }, "a LimitError 10 > 5"},
	} {
		r := a.Reserve("test")
		_, err := a.Changes(ctx, tt.id, tt.from, tt.to, false, r)
		r.Release()
		if tt.want == nil && err != nil || tt.want != nil && !tt.want(err) {
			t.Errorf("Changes(%q, %d, %d): %v, want %s", tt.id, tt.from, tt.to, err, tt.what)
		}
	}
	if ok, _ := a.Exists(ctx, "nothing"); ok {
		t.Error("Changes created the document")
	}
}

// TestChangesMemory checks that Changes holds its work in the memory
// budget: a budget that has room for the document but not for the
// diff's frontiers refuses it with ErrOverloaded, and what it returns is
// held in the reservation until released.
func TestChangesMemory(t *testing.T) {
	ctx := context.Background()
	text := ""
	for i := range 3000 {
		text += string(rune('a' + i%7))
	}
	other := ""
	for i := range 3000 {
		other += string(rune('a' + i%5))
	}
	st := memstore.New()
	if err := st.Create(ctx, "d", "basic", []byte(paragraph(text)), nil); err != nil {
		t.Fatal(err)
	}
	a := newAuthority(t, st, collab.Config{Limits: collab.Limits{MaxMemory: 4 << 20}})
	mustSubmit(t, a, "d", collab.Submission{Version: 0, Steps: steps([]byte(fmt.Sprintf(
		`{"stepType":"replace","from":1,"to":3001,"slice":{"content":[{"type":"text","text":%q}]}}`, other)))})
	r := a.Reserve("test")
	_, err := a.Changes(ctx, "d", 0, 1, false, r)
	r.Release()
	if !errors.Is(err, collab.ErrOverloaded) {
		t.Errorf("Changes needing %d bytes for its diff in a budget of 4 MiB: %v, want ErrOverloaded", changeset.DiffMemory(3002, 3002), err)
	}
	b := newAuthority(t, st, collab.Config{Limits: collab.Limits{MaxMemory: 64 << 20}})
	r = b.Reserve("test")
	defer r.Release()
	changes, err := b.Changes(ctx, "d", 0, 1, false, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) == 0 || r.Size() == 0 {
		t.Errorf("%d changes held in %d bytes", len(changes), r.Size())
	}
}

// BenchmarkChanges measures Changes over DefaultMaxChangesSteps steps
// of typing by two authors, in lines of 50 characters.
func BenchmarkChanges(b *testing.B) {
	ctx := context.Background()
	a := newAuthority(b, nil, collab.Config{KeepSteps: 1 << 20})
	mustGet(b, a, "d")
	n := collab.DefaultMaxChangesSteps
	pos, version := 1, int64(0)
	for version < int64(n) {
		var batch [][]byte
		for range 100 {
			if version+int64(len(batch)) > 0 && (version+int64(len(batch)))%50 == 0 {
				batch = append(batch, []byte(fmt.Sprintf(`{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"paragraph"},{"type":"paragraph"}],"openStart":1,"openEnd":1}}`, pos, pos)))
				pos += 2
				continue
			}
			batch = append(batch, insert(pos, "x"))
			pos++
		}
		author := []string{"ann", "bob"}[version/1000%2]
		if _, err := a.Submit(ctx, "d", "", collab.Submission{Version: version, Steps: batch, Author: author,
			ClientID: collab.ClientID(fmt.Sprintf("%q", author))}); err != nil {
			b.Fatal(err)
		}
		version += int64(len(batch))
	}
	b.ResetTimer()
	for range b.N {
		r := a.Reserve("bench")
		if _, err := a.Changes(ctx, "d", 0, int64(n), true, r); err != nil {
			b.Fatal(err)
		}
		r.Release()
	}
}
