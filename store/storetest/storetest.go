// Package storetest is the conformance suite that every store.Store
// backend passes: each method's semantics, its edge cases and its
// behaviour under concurrent use. A backend's tests call Run with a
// function that opens an empty store:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return memstore.New() })
//	}
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/store"
)

// Run runs the suite against the stores that open returns. Each subtest
// opens its own empty store and closes it at the end (open may register
// cleanups of its own, such as removing a directory, with t.Cleanup).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
		swap bool // needs a store.MetaSwapper
		scan bool // needs a store.Scanner
		size bool // needs a store.StepSizer
	}{
		{"CreateLoad", testCreateLoad, false, false, false},
		{"CreateExists", testCreateExists, false, false, false},
		{"Append", testAppend, false, false, false},
		{"AppendConflict", testAppendConflict, false, false, false},
		{"AppendEmpty", testAppendEmpty, false, false, false},
		{"AppendMany", testAppendMany, false, false, false},
		{"Bytes", testBytes, false, false, false},
		{"Steps", testSteps, false, false, false},
		{"Snapshot", testSnapshot, false, false, false},
		{"SnapshotRange", testSnapshotRange, false, false, false},
		{"Prune", testPrune, false, false, false},
		{"SnapshotAt", testSnapshotAt, false, false, false},
		{"PruneAtSnapshot", testPruneAtSnapshot, false, false, false},
		{"Checkpoints", testCheckpoints, false, false, false},
		{"CheckpointsShare", testCheckpointsShare, false, false, false},
		{"Size", testSize, false, false, false},
		{"NotFound", testNotFound, false, false, false},
		{"Delete", testDelete, false, false, false},
		{"Recreate", testRecreate, false, false, false},
		{"List", testList, false, false, false},
		{"Aliasing", testAliasing, false, false, false},
		{"Canceled", testCanceled, false, false, false},
		{"ConcurrentDocs", testConcurrentDocs, false, false, false},
		{"ConcurrentOneDoc", testConcurrentOneDoc, false, false, false},
		{"MetaEntries", testMetaEntries, false, false, false},
		{"MetaBase", testMetaBase, false, false, false},
		{"MetaBaseOlder", testMetaBaseOlder, false, false, false},
		{"MetaSeq", testMetaSeq, true, false, false},
		{"AppendIf", testAppendIf, true, false, false},
		{"AppendIfConcurrent", testAppendIfConcurrent, true, false, false},
		{"Scan", testScan, false, true, false},
		{"StepSizes", testStepSizes, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			closed := false
			t.Cleanup(func() {
				if !closed {
					if err := s.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
				}
			})
			if _, ok := s.(store.MetaSwapper); tt.swap && !ok {
				t.Skip("the store is not a store.MetaSwapper")
			}
			if _, ok := s.(store.Scanner); tt.scan && !ok {
				t.Skip("the store is not a store.Scanner")
			}
			if _, ok := s.(store.StepSizer); tt.size && !ok {
				t.Skip("the store is not a store.StepSizer")
			}
			tt.fn(t, s)
		})
	}
	t.Run("Close", func(t *testing.T) { testClose(t, open(t)) })
}

// mkSteps returns n steps whose JSON and client id name tag and their
// index; every fourth, from the first, has a commit record.
func mkSteps(tag string, n int) []store.Step {
	steps := make([]store.Step, n)
	for i := range steps {
		steps[i] = store.Step{
			JSON:     fmt.Appendf(nil, `{"stepType":"replace","tag":%q,"i":%d}`, tag, i),
			ClientID: fmt.Appendf(nil, "%d", 1000+i),
			Time:     time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(i) * time.Millisecond),
		}
		if i%3 != 2 { // and some have no author
			steps[i].Author = fmt.Sprintf("user-%s-%d", tag, i%4)
		}
		if i%4 == 0 {
			steps[i].Commit = fmt.Appendf(nil, `{"ref":"%s-%d","n":3,"dropped":[1]}`, tag, i)
		}
	}
	return steps
}

// mkDoc creates id and appends n steps to it in one Append.
func mkDoc(t *testing.T, s store.Store, id string, n int) []store.Step {
	t.Helper()
	ctx := context.Background()
	if err := s.Create(ctx, id, "basic", []byte(`{"type":"doc"}`), []byte(`{"comments":[]}`)); err != nil {
		t.Fatalf("Create %q: %v", id, err)
	}
	steps := mkSteps(id, n)
	if n > 0 {
		if err := s.Append(ctx, id, 0, steps, nil); err != nil {
			t.Fatalf("Append %q: %v", id, err)
		}
	}
	for i := range steps {
		steps[i].Version = int64(i + 1)
	}
	return steps
}

func load(t *testing.T, s store.Store, id string) store.Head {
	t.Helper()
	h, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("Load %q: %v", id, err)
	}
	if h.Oldest > h.Snapshot.Version || h.Snapshot.Version > h.Version || h.Oldest < 0 {
		t.Errorf("Load %q: want 0 ≤ Oldest %d ≤ Snapshot.Version %d ≤ Version %d", id, h.Oldest, h.Snapshot.Version, h.Version)
	}
	if h.Oldest > h.MetaVersion || h.MetaVersion > h.Version || h.MetaBase < 0 || h.MetaBase > h.MetaSeq {
		t.Errorf("Load %q: want Oldest %d ≤ MetaVersion %d ≤ Version %d and 0 ≤ MetaBase %d ≤ MetaSeq %d", id, h.Oldest, h.MetaVersion, h.Version, h.MetaBase, h.MetaSeq)
	}
	if hl, ok := s.(store.HeadLoader); ok {
		got, err := hl.LoadHead(context.Background(), id)
		if err != nil {
			t.Fatalf("LoadHead %q: %v", id, err)
		}
		want := h
		want.Meta, want.Snapshot.Doc = nil, nil
		if got.Meta != nil || got.Snapshot.Doc != nil {
			t.Errorf("LoadHead %q: Meta %q, Snapshot.Doc %q, want nil", id, got.Meta, got.Snapshot.Doc)
		}
		got.Meta, got.Snapshot.Doc = nil, nil
		sameHead(t, "LoadHead "+id, got, want)
	}
	return h
}

func getSteps(t *testing.T, s store.Store, id string, from, to int64) []store.Step {
	t.Helper()
	steps, err := s.Steps(context.Background(), id, from, to)
	if err != nil {
		t.Fatalf("Steps(%q, %d, %d): %v", id, from, to, err)
	}
	return steps
}

// sameSteps reports the first difference between got and want.
func sameSteps(t *testing.T, what string, got, want []store.Step) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d steps, want %d", what, len(got), len(want))
		return
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Version != w.Version || !bytes.Equal(g.JSON, w.JSON) || !bytes.Equal(g.ClientID, w.ClientID) || g.Author != w.Author || !g.Time.Equal(w.Time) ||
			!sameCommit(g.Commit, w.Commit) {
			t.Errorf("%s: step %d = {%d %s %s %q %v %q}, want {%d %s %s %q %v %q}", what, i,
				g.Version, g.JSON, g.ClientID, g.Author, g.Time, g.Commit, w.Version, w.JSON, w.ClientID, w.Author, w.Time, w.Commit)
			return
		}
	}
}

// sameCommit reports whether a step's commit record read back as got is
// the record want it was written with: the same bytes, and nil for a nil
// or empty one.
func sameCommit(got, want []byte) bool {
	if len(want) == 0 {
		return got == nil
	}
	return bytes.Equal(got, want)
}

func sameHead(t *testing.T, what string, got, want store.Head) {
	t.Helper()
	if got.Schema != want.Schema || got.Version != want.Version || !bytes.Equal(got.Meta, want.Meta) ||
		got.Snapshot.Version != want.Snapshot.Version || !bytes.Equal(got.Snapshot.Doc, want.Snapshot.Doc) ||
		got.Oldest != want.Oldest || got.MetaSeq != want.MetaSeq || got.MetaVersion != want.MetaVersion ||
		got.MetaBase != want.MetaBase || got.Snapshot.Meta != nil {
		t.Errorf("%s: head = %+v, want %+v", what, fmtHead(got), fmtHead(want))
	}
}

func fmtHead(h store.Head) string {
	return fmt.Sprintf("{Schema:%s Version:%d Meta:%q MetaVersion:%d MetaBase:%d MetaSeq:%d Snapshot:{%d %q} Oldest:%d}",
		h.Schema, h.Version, h.Meta, h.MetaVersion, h.MetaBase, h.MetaSeq, h.Snapshot.Version, h.Snapshot.Doc, h.Oldest)
}

// metaLog returns the metadata entries of id after its base, each as
// seq@version:json, separated by spaces, after checking that they are
// numbered MetaBase+1 … MetaSeq.
func metaLog(t *testing.T, s store.Store, id string) string {
	t.Helper()
	h := load(t, s, id)
	entries, err := s.MetaEntries(context.Background(), id, h.MetaBase, h.MetaSeq)
	if err != nil {
		t.Fatalf("MetaEntries(%q, %d, %d): %v", id, h.MetaBase, h.MetaSeq, err)
	}
	var b strings.Builder
	for i, e := range entries {
		if e.Seq != h.MetaBase+int64(i)+1 {
			t.Errorf("MetaEntries(%q, %d, %d): entry %d has number %d", id, h.MetaBase, h.MetaSeq, i, e.Seq)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d@%d:%s", e.Seq, e.Version, e.JSON)
	}
	if int64(len(entries)) != h.MetaSeq-h.MetaBase {
		t.Errorf("MetaEntries(%q, %d, %d): %d entries", id, h.MetaBase, h.MetaSeq, len(entries))
	}
	return b.String()
}

// lastMeta returns the JSON of the latest metadata entry of id, or its
// base when it has none.
func lastMeta(t *testing.T, s store.Store, id string) string {
	t.Helper()
	h := load(t, s, id)
	if h.MetaSeq == h.MetaBase {
		return string(h.Meta)
	}
	entries, err := s.MetaEntries(context.Background(), id, h.MetaSeq-1, h.MetaSeq)
	if err != nil || len(entries) != 1 {
		t.Fatalf("MetaEntries(%q, %d, %d): %d entries, %v", id, h.MetaSeq-1, h.MetaSeq, len(entries), err)
	}
	return string(entries[0].JSON)
}

func testCreateLoad(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.Create(ctx, "a", "basic", []byte(`{"type":"doc","content":[]}`), []byte(`{"comments":[]}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, "nometa", "other", []byte(`{"type":"doc"}`), nil); err != nil {
		t.Fatal(err)
	}
	sameHead(t, "a", load(t, s, "a"), store.Head{
		Schema: "basic", Version: 0, Meta: []byte(`{"comments":[]}`),
		Snapshot: store.Snapshot{Version: 0, Doc: []byte(`{"type":"doc","content":[]}`)},
	})
	sameHead(t, "nometa", load(t, s, "nometa"), store.Head{
		Schema: "other", Snapshot: store.Snapshot{Doc: []byte(`{"type":"doc"}`)},
	})
	if steps := getSteps(t, s, "a", 0, 10); len(steps) != 0 {
		t.Errorf("new doc has steps %v", steps)
	}
}

func testCreateExists(t *testing.T, s store.Store) {
	ctx := context.Background()
	mkDoc(t, s, "a", 2)
	before := load(t, s, "a")
	err := s.Create(ctx, "a", "other", []byte(`{"type":"x"}`), []byte(`{}`))
	if !errors.Is(err, store.ErrExists) {
		t.Fatalf("second Create: %v, want ErrExists", err)
	}
	sameHead(t, "after second Create", load(t, s, "a"), before)
	if got := getSteps(t, s, "a", 0, 2); len(got) != 2 {
		t.Errorf("second Create changed the steps: %d left", len(got))
	}
}

func testAppend(t *testing.T, s store.Store) {
	ctx := context.Background()
	mkDoc(t, s, "a", 0)
	first := mkSteps("first", 3)
	for i := range first {
		first[i].Version = 77 // ignored: the store numbers steps
	}
	if err := s.Append(ctx, "a", 0, first, []byte(`{"m":1}`)); err != nil {
		t.Fatal(err)
	}
	second := mkSteps("second", 2)
	if err := s.Append(ctx, "a", 3, second, nil); err != nil {
		t.Fatal(err)
	}
	h := load(t, s, "a")
	if h.Version != 5 || string(h.Meta) != `{"comments":[]}` || h.MetaSeq != 1 || h.Snapshot.Version != 0 || h.Oldest != 0 {
		t.Errorf("head after appends: %s", fmtHead(h))
	}
	if got := metaLog(t, s, "a"); got != `1@3:{"m":1}` {
		t.Errorf("metadata log %s, want the entry after the first append", got)
	}
	want := append(append([]store.Step{}, first...), second...)
	for i := range want {
		want[i].Version = int64(i + 1)
	}
	sameSteps(t, "Steps(0, 5)", getSteps(t, s, "a", 0, 5), want)

	// A zero Time is set to the time of the append.
	before := time.Now()
	if err := s.Append(ctx, "a", 5, []store.Step{{JSON: []byte(`{}`), ClientID: []byte(`"s"`)}}, []byte(`{"m":2}`)); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	got := getSteps(t, s, "a", 5, 6)
	if len(got) != 1 || got[0].Version != 6 || string(got[0].ClientID) != `"s"` {
		t.Fatalf("Steps(5, 6) = %+v", got)
	}
	if tm := got[0].Time; tm.Before(before.Add(-time.Second)) || tm.After(after.Add(time.Second)) {
		t.Errorf("zero Time stored as %v, want about %v", tm, before)
	}
	if h := load(t, s, "a"); h.Version != 6 || h.MetaSeq != 2 {
		t.Errorf("head after third append: %s", fmtHead(h))
	}
	if got := metaLog(t, s, "a"); got != `1@3:{"m":1} 2@6:{"m":2}` {
		t.Errorf("metadata log after third append: %s", got)
	}
}

func testAppendConflict(t *testing.T, s store.Store) {
	ctx := context.Background()
	want := mkDoc(t, s, "a", 4)
	before := load(t, s, "a")
	for _, base := range []int64{0, 3, 5, 100, -1} {
		for _, n := range []int{0, 1, 3} {
			err := s.Append(ctx, "a", base, mkSteps("bad", n), []byte(`{"bad":true}`))
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("Append at %d of %d steps: %v, want ErrConflict", base, n, err)
			}
		}
	}
	sameHead(t, "after conflicts", load(t, s, "a"), before)
	sameSteps(t, "after conflicts", getSteps(t, s, "a", 0, 100), want)
	// The right base still works.
	if err := s.Append(ctx, "a", 4, mkSteps("good", 1), nil); err != nil {
		t.Fatal(err)
	}
	if h := load(t, s, "a"); h.Version != 5 {
		t.Errorf("version %d after a good append, want 5", h.Version)
	}
}

func testAppendEmpty(t *testing.T, s store.Store) {
	ctx := context.Background()
	want := mkDoc(t, s, "a", 2)
	if err := s.Append(ctx, "a", 2, nil, []byte(`{"comments":[1]}`)); err != nil {
		t.Fatal(err)
	}
	h := load(t, s, "a")
	if got := metaLog(t, s, "a"); h.Version != 2 || h.MetaSeq != 1 || got != `1@2:{"comments":[1]}` {
		t.Errorf("after empty append with meta: %s, log %s", fmtHead(h), got)
	}
	if err := s.Append(ctx, "a", 2, []store.Step{}, nil); err != nil {
		t.Fatal(err)
	}
	sameHead(t, "after empty append without meta", load(t, s, "a"), h)
	if err := s.Append(ctx, "a", 1, nil, []byte(`{"stale":1}`)); !errors.Is(err, store.ErrConflict) {
		t.Errorf("empty append at a stale version: %v, want ErrConflict", err)
	}
	// An empty (non-nil) meta is an entry too.
	if err := s.Append(ctx, "a", 2, nil, []byte{}); err != nil {
		t.Fatal(err)
	}
	if got := metaLog(t, s, "a"); got != `1@2:{"comments":[1]} 2@2:` {
		t.Errorf("metadata log %s after an empty meta, want an empty entry", got)
	}
	sameSteps(t, "steps", getSteps(t, s, "a", 0, 10), want)
}

func testAppendMany(t *testing.T, s store.Store) {
	ctx := context.Background()
	mkDoc(t, s, "a", 0)
	var want []store.Step
	for round := range 3 {
		steps := mkSteps(fmt.Sprint("r", round), 1000)
		if err := s.Append(ctx, "a", int64(len(want)), steps, nil); err != nil {
			t.Fatal(err)
		}
		want = append(want, steps...)
	}
	for i := range want {
		want[i].Version = int64(i + 1)
	}
	sameSteps(t, "Steps(0, 3000)", getSteps(t, s, "a", 0, 3000), want)
	sameSteps(t, "Steps(999, 2001)", getSteps(t, s, "a", 999, 2001), want[999:2001])
}

// testBytes checks that values are kept byte for byte, whatever they hold.
func testBytes(t *testing.T, s store.Store) {
	ctx := context.Background()
	odd := []byte("\x00\xff\xfe'\"\\ \n%_ü\x00")
	big := bytes.Repeat([]byte(`{"text":"0123456789abcdef"}`), 1<<15) // ~800 KB
	for _, id := range []string{"it's", `a"b`, "ü/ä", "%_", "a\x00b", strings.Repeat("x", 1000)} {
		if err := s.Create(ctx, id, "sch'ema", odd, big); err != nil {
			t.Fatalf("Create %q: %v", id, err)
		}
		steps := []store.Step{{JSON: big, ClientID: odd, Commit: odd}, {JSON: odd, ClientID: []byte(`"client"`), Commit: []byte{}}}
		if err := s.Append(ctx, id, 0, steps, odd); err != nil {
			t.Fatalf("Append %q: %v", id, err)
		}
		if err := s.SaveSnapshot(ctx, id, store.Snapshot{Version: 1, Doc: big}, -1); err != nil {
			t.Fatalf("SaveSnapshot %q: %v", id, err)
		}
		h := load(t, s, id)
		if h.Schema != "sch'ema" || !bytes.Equal(h.Meta, big) || !bytes.Equal(h.Snapshot.Doc, big) || h.Version != 2 {
			t.Errorf("%q: head differs: schema %q, version %d, meta %d bytes, doc %d bytes",
				id, h.Schema, h.Version, len(h.Meta), len(h.Snapshot.Doc))
		}
		if entries, err := s.MetaEntries(ctx, id, 0, 1); err != nil || len(entries) != 1 || !bytes.Equal(entries[0].JSON, odd) {
			t.Errorf("%q: metadata entries differ (%v)", id, err)
		}
		if err := s.SaveSnapshot(ctx, id, store.Snapshot{Version: 2, Doc: odd, Meta: odd, MetaSeq: 1}, -1); err != nil {
			t.Fatalf("SaveSnapshot %q: %v", id, err)
		}
		if h := load(t, s, id); !bytes.Equal(h.Meta, odd) || !bytes.Equal(h.Snapshot.Doc, odd) {
			t.Errorf("%q: the snapshot's metadata differs", id)
		}
		got := getSteps(t, s, id, 0, 2)
		if len(got) != 2 || !bytes.Equal(got[0].JSON, big) || !bytes.Equal(got[0].ClientID, odd) ||
			!bytes.Equal(got[1].JSON, odd) {
			t.Errorf("%q: steps differ", id)
		} else if !bytes.Equal(got[0].Commit, odd) || got[1].Commit != nil {
			t.Errorf("%q: commit records %q and %q, want %q and nil (written empty)", id, got[0].Commit, got[1].Commit, odd)
		}
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 6 {
		t.Errorf("List has %d documents, want 6", len(list))
	}
}

func testSteps(t *testing.T, s store.Store) {
	all := mkDoc(t, s, "a", 10)
	tests := []struct {
		from, to int64
		want     []store.Step
	}{
		{0, 10, all},
		{3, 7, all[3:7]},
		{0, 1, all[:1]},
		{9, 10, all[9:]},
		{5, 5, nil},
		{0, 0, nil},
		{7, 3, nil},
		{8, 100, all[8:]}, // beyond the latest: what exists
		{10, 20, nil},     // at the latest
		{15, 20, nil},     // after the latest
		{-1, 2, all[:2]},  // before the first: from the first
		{0, -5, nil},      // empty
		{2, 1 << 62, all[2:]},
	}
	for _, tt := range tests {
		sameSteps(t, fmt.Sprintf("Steps(%d, %d)", tt.from, tt.to), getSteps(t, s, "a", tt.from, tt.to), tt.want)
	}
}

// testStepSizes checks that StepSizes tells the sizes of the steps that
// Steps returns, over the same ranges, and fails alike.
func testStepSizes(t *testing.T, s store.Store) {
	ctx := context.Background()
	sizer := s.(store.StepSizer)
	all := mkDoc(t, s, "a", 10)
	more := mkSteps("more", 5)
	more[0].JSON = bytes.Repeat([]byte("x"), 100_000) // a large one
	if err := s.Append(ctx, "a", 10, more, nil); err != nil {
		t.Fatal(err)
	}
	for i := range more {
		more[i].Version = int64(11 + i)
	}
	all = append(all, more...)
	for _, r := range [][2]int64{{0, 15}, {3, 12}, {10, 11}, {14, 100}, {5, 5}, {7, 3}, {15, 20}, {-1, 2}} {
		got, err := sizer.StepSizes(ctx, "a", r[0], r[1])
		if err != nil {
			t.Fatalf("StepSizes(%d, %d): %v", r[0], r[1], err)
		}
		var want []int64
		for _, st := range all[min(max(r[0], 0), 15):min(max(r[1], r[0], 0), 15)] {
			want = append(want, int64(len(st.JSON)+len(st.ClientID)+len(st.Author)+len(st.Commit)))
		}
		if !slices.Equal(got, want) {
			t.Errorf("StepSizes(%d, %d) = %v, want %v", r[0], r[1], got, want)
		}
	}
	snapPruning(t, s, "a", 12, 3, 12)
	if _, err := sizer.StepSizes(ctx, "a", 5, 15); !errors.Is(err, store.ErrCompacted) {
		t.Errorf("StepSizes of pruned steps: %v, want ErrCompacted", err)
	}
	if _, err := sizer.StepSizes(ctx, "nope", 0, 5); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("StepSizes of an unknown document: %v, want ErrNotFound", err)
	}
}

func testSnapshot(t *testing.T, s store.Store) {
	ctx := context.Background()
	steps := mkDoc(t, s, "a", 5)
	for _, v := range []int64{0, 2, 2, 5} {
		doc := fmt.Appendf(nil, `{"type":"doc","v":%d}`, v)
		if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: v, Doc: doc}, -1); err != nil {
			t.Fatalf("SaveSnapshot at %d: %v", v, err)
		}
		h := load(t, s, "a")
		if h.Snapshot.Version != v || !bytes.Equal(h.Snapshot.Doc, doc) || h.Version != 5 || h.Oldest != 0 {
			t.Errorf("after SaveSnapshot at %d: %s", v, fmtHead(h))
		}
	}
	// Snapshots do not touch the metadata or the steps.
	if h := load(t, s, "a"); string(h.Meta) != `{"comments":[]}` || h.Schema != "basic" {
		t.Errorf("SaveSnapshot changed the head: %s", fmtHead(h))
	}
	sameSteps(t, "steps", getSteps(t, s, "a", 0, 5), steps)
}

func testSnapshotRange(t *testing.T, s store.Store) {
	ctx := context.Background()
	steps := mkDoc(t, s, "a", 6)
	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 3, Doc: []byte(`{"v":3}`)}, -1); err != nil {
		t.Fatal(err)
	}
	before := load(t, s, "a")
	for _, v := range []int64{-1, 0, 2, 7, 100} {
		for _, keep := range []int64{-1, 0} {
			err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: v, Doc: []byte(`{"bad":1}`)}, keep)
			if err == nil {
				t.Errorf("SaveSnapshot at %d (latest snapshot 3, version 6) succeeded", v)
			} else if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrClosed) {
				t.Errorf("SaveSnapshot at %d: %v", v, err)
			}
		}
	}
	sameHead(t, "after rejected snapshots", load(t, s, "a"), before)
	sameSteps(t, "after rejected snapshots", getSteps(t, s, "a", 0, 6), steps)
}

// snapPruning saves a snapshot {"v":v} of id at v, with metadata, keeping
// keep steps, and checks that it is the head's and that Oldest is then
// wantOldest.
func snapPruning(t *testing.T, s store.Store, id string, v, keep, wantOldest int64) {
	t.Helper()
	doc := fmt.Appendf(nil, `{"v":%d}`, v)
	if err := s.SaveSnapshot(context.Background(), id, store.Snapshot{Version: v, Doc: doc, Meta: doc}, keep); err != nil {
		t.Fatalf("SaveSnapshot(%d, keep %d): %v", v, keep, err)
	}
	if h := load(t, s, id); h.Oldest != wantOldest || h.Snapshot.Version != v {
		t.Errorf("SaveSnapshot(%d, keep %d): %s, want Oldest %d", v, keep, fmtHead(h), wantOldest)
	}
}

func testPrune(t *testing.T, s store.Store) {
	ctx := context.Background()
	all := mkDoc(t, s, "a", 10)
	snap := func(v, keep, wantOldest int64) {
		t.Helper()
		snapPruning(t, s, "a", v, keep, wantOldest)
	}
	compacted := func(from, to int64) {
		t.Helper()
		if steps, err := s.Steps(ctx, "a", from, to); !errors.Is(err, store.ErrCompacted) {
			t.Errorf("Steps(%d, %d) = %d steps, %v; want ErrCompacted", from, to, len(steps), err)
		}
	}
	snap(2, -1, 0)   // keep < 0 prunes nothing
	snap(3, 100, 0)  // more kept than exist
	snap(4, 8, 2)    // versions ≤ 10-8
	snap(5, 2, 5)    // versions ≤ the snapshot
	snap(6, 7, 5)    // never un-prunes
	compacted(0, 10) // partly pruned
	compacted(4, 10)
	compacted(0, 3) // wholly pruned
	sameSteps(t, "Steps(5, 10)", getSteps(t, s, "a", 5, 10), all[5:])
	sameSteps(t, "Steps(7, 9)", getSteps(t, s, "a", 7, 9), all[7:9])
	sameSteps(t, "Steps(5, 50)", getSteps(t, s, "a", 5, 50), all[5:])

	snap(10, 0, 10) // everything
	compacted(9, 10)
	if steps := getSteps(t, s, "a", 10, 20); len(steps) != 0 {
		t.Errorf("Steps(10, 20) = %d steps, want none", len(steps))
	}
	more := mkSteps("more", 3)
	if err := s.Append(ctx, "a", 10, more, nil); err != nil {
		t.Fatal(err)
	}
	for i := range more {
		more[i].Version = int64(11 + i)
	}
	sameSteps(t, "Steps(10, 13) after pruning", getSteps(t, s, "a", 10, 13), more)
	if h := load(t, s, "a"); h.Version != 13 || h.Oldest != 10 || h.Snapshot.Version != 10 {
		t.Errorf("head: %s", fmtHead(h))
	}
}

// snapshotAt returns SnapshotAt(id, v) and fails the test on an error.
func snapshotAt(t *testing.T, s store.Store, id string, v int64) store.Snapshot {
	t.Helper()
	snap, err := s.SnapshotAt(context.Background(), id, v)
	if err != nil {
		t.Fatalf("SnapshotAt(%q, %d): %v", id, v, err)
	}
	return snap
}

// testSnapshotAt checks that SnapshotAt finds the newest snapshot at or
// below a version among all those kept.
func testSnapshotAt(t *testing.T, s store.Store) {
	ctx := context.Background()
	mkDoc(t, s, "a", 10)
	mkDoc(t, s, "b", 2)
	for _, v := range []int64{3, 6} {
		if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: v, Doc: fmt.Appendf(nil, `{"v":%d}`, v)}, -1); err != nil {
			t.Fatal(err)
		}
	}
	for v, want := range map[int64]string{0: `{"type":"doc"}`, 2: `{"type":"doc"}`, 3: `{"v":3}`, 5: `{"v":3}`, 6: `{"v":6}`, 9: `{"v":6}`, 100: `{"v":6}`} {
		want := store.Snapshot{Version: map[string]int64{`{"type":"doc"}`: 0, `{"v":3}`: 3, `{"v":6}`: 6}[want], Doc: []byte(want)}
		if got := snapshotAt(t, s, "a", v); got.Version != want.Version || !bytes.Equal(got.Doc, want.Doc) || got.Meta != nil {
			t.Errorf("SnapshotAt(%d) = {%d %s %s}, want {%d %s}", v, got.Version, got.Doc, got.Meta, want.Version, want.Doc)
		}
	}
	if got := snapshotAt(t, s, "b", 2); got.Version != 0 {
		t.Errorf("SnapshotAt(b, 2) = version %d, want 0: another document's snapshot", got.Version)
	}
	if snap, err := s.SnapshotAt(ctx, "a", -1); !errors.Is(err, store.ErrCompacted) {
		t.Errorf("SnapshotAt(-1) = %d, %v; want ErrCompacted", snap.Version, err)
	}
	// The latest snapshot stays the head's.
	if h := load(t, s, "a"); h.Snapshot.Version != 6 || string(h.Snapshot.Doc) != `{"v":6}` {
		t.Errorf("head: %s", fmtHead(h))
	}
}

// testPruneAtSnapshot checks that pruning stops at a snapshot, so that
// every version from Oldest on has a snapshot at or below it with the
// steps after it kept, and that it drops the snapshots below Oldest.
func testPruneAtSnapshot(t *testing.T, s store.Store) {
	ctx := context.Background()
	all := mkDoc(t, s, "a", 10)
	snap := func(v, keep, wantOldest int64) {
		t.Helper()
		snapPruning(t, s, "a", v, keep, wantOldest)
	}
	snap(3, -1, 0)
	snap(7, 5, 3) // the bound is 10-5, the newest snapshot below it 3
	snap(8, 4, 3) // the bound is 6: still 3
	sameSteps(t, "Steps(3, 10)", getSteps(t, s, "a", 3, 10), all[3:])
	if got := snapshotAt(t, s, "a", 3); got.Version != 3 {
		t.Errorf("SnapshotAt(3) = %d, want 3", got.Version)
	}
	if got := snapshotAt(t, s, "a", 7); got.Version != 7 || string(got.Doc) != `{"v":7}` {
		t.Errorf("SnapshotAt(7) = {%d %s}, want 7: a snapshot that is not the latest is kept", got.Version, got.Doc)
	}
	if snap, err := s.SnapshotAt(ctx, "a", 2); !errors.Is(err, store.ErrCompacted) {
		t.Errorf("SnapshotAt(2) = %d, %v; want ErrCompacted (the snapshot at 0 is pruned)", snap.Version, err)
	}
	snap(9, 2, 8) // the bound is 10-2, a snapshot
	if snap, err := s.SnapshotAt(ctx, "a", 7); !errors.Is(err, store.ErrCompacted) {
		t.Errorf("SnapshotAt(7) = %d, %v; want ErrCompacted", snap.Version, err)
	}
	if got := snapshotAt(t, s, "a", 8); got.Version != 8 {
		t.Errorf("SnapshotAt(8) = %d, want 8", got.Version)
	}
}

// testCheckpoints checks AddCheckpoint and Checkpoints, that a
// checkpoint's document outlives pruning, and that Delete removes them.
func testCheckpoints(t *testing.T, s store.Store) {
	ctx := context.Background()
	mkDoc(t, s, "a", 5)
	mkDoc(t, s, "other", 1)
	at := time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)
	for _, cp := range []store.Checkpoint{
		{Name: "b", Version: 2, Author: "ann", Time: at, Doc: []byte(`{"cp":"b"}`)},
		{Name: "a", Version: 2, Time: at.Add(time.Second), Doc: []byte(`{"cp":"a"}`)},
		{Name: "zero", Version: 0, Author: "bob", Time: at, Doc: []byte(`{"cp":"zero"}`)},
		{Name: "Ünïcode ✓", Version: 5, Time: at, Doc: []byte(`{"cp":"u"}`)},
	} {
		if err := s.AddCheckpoint(ctx, "a", cp); err != nil {
			t.Fatalf("AddCheckpoint(%q): %v", cp.Name, err)
		}
	}
	if err := s.AddCheckpoint(ctx, "a", store.Checkpoint{Name: "b", Version: 4, Doc: []byte(`{}`)}); !errors.Is(err, store.ErrExists) {
		t.Errorf("AddCheckpoint of a taken name: %v, want ErrExists", err)
	}
	for _, v := range []int64{-1, 6} {
		err := s.AddCheckpoint(ctx, "a", store.Checkpoint{Name: "bad", Version: v, Doc: []byte(`{}`)})
		if err == nil || errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrNotFound) {
			t.Errorf("AddCheckpoint at version %d: %v, want a refusal", v, err)
		}
	}
	// A name is the document's own: another may take it.
	if err := s.AddCheckpoint(ctx, "other", store.Checkpoint{Name: "b", Version: 1, Doc: []byte(`{}`)}); err != nil {
		t.Errorf("AddCheckpoint(other, b): %v", err)
	}
	list, err := s.Checkpoints(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"zero@0 bob", "a@2 ", "b@2 ann", "Ünïcode ✓@5 "}
	var got []string
	for i, cp := range list {
		got = append(got, fmt.Sprintf("%s@%d %s", cp.Name, cp.Version, cp.Author))
		if cp.Doc != nil {
			t.Errorf("checkpoint %q has Doc %s in Checkpoints", cp.Name, cp.Doc)
		}
		if wantT := map[bool]time.Time{true: at.Add(time.Second), false: at}[cp.Name == "a"]; !cp.Time.Equal(wantT) {
			t.Errorf("checkpoint %d %q: time %v, want %v", i, cp.Name, cp.Time, wantT)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Checkpoints = %q, want %q", got, want)
	}
	// A checkpoint's document is a snapshot to SnapshotAt, kept whatever
	// is pruned.
	if got := snapshotAt(t, s, "a", 3); got.Version != 2 || (string(got.Doc) != `{"cp":"a"}` && string(got.Doc) != `{"cp":"b"}`) {
		t.Errorf("SnapshotAt(3) = {%d %s}, want a checkpoint at 2", got.Version, got.Doc)
	}
	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 5, Doc: []byte(`{"v":5}`), Meta: []byte(`{}`)}, 0); err != nil {
		t.Fatal(err)
	}
	if h := load(t, s, "a"); h.Oldest != 5 {
		t.Errorf("after pruning everything: %s", fmtHead(h))
	}
	if got := snapshotAt(t, s, "a", 0); got.Version != 0 || string(got.Doc) != `{"cp":"zero"}` {
		t.Errorf("SnapshotAt(0) after pruning = {%d %s}, want the checkpoint zero", got.Version, got.Doc)
	}
	if list, err := s.Checkpoints(ctx, "a"); err != nil || len(list) != 4 {
		t.Errorf("Checkpoints after pruning: %d, %v; want 4", len(list), err)
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, "a", "basic", []byte(`{"type":"doc"}`), nil); err != nil {
		t.Fatal(err)
	}
	if list, err := s.Checkpoints(ctx, "a"); err != nil || len(list) != 0 {
		t.Errorf("Checkpoints of a document created again: %v, %v; want none", list, err)
	}
	// It starts after the deleted one's version 5.
	if snap, err := s.SnapshotAt(ctx, "a", 3); !errors.Is(err, store.ErrCompacted) {
		t.Errorf("SnapshotAt(3) of a document created again = {%d %s}, %v; want ErrCompacted", snap.Version, snap.Doc, err)
	}
	if got := snapshotAt(t, s, "a", 7); got.Version != 6 || string(got.Doc) != `{"type":"doc"}` {
		t.Errorf("SnapshotAt(7) of a document created again = {%d %s}, want its initial document at 6", got.Version, got.Doc)
	}
	if list, err := s.Checkpoints(ctx, "other"); err != nil || len(list) != 1 {
		t.Errorf("Checkpoints(other) = %v, %v; want its one", list, err)
	}
}

// sizeOf returns the Size of id in s, a store.Sizer.
func sizeOf(t *testing.T, s store.Store, id string) int64 {
	t.Helper()
	n, err := s.(store.Sizer).Size(context.Background(), id)
	if err != nil {
		t.Fatalf("Size(%q): %v", id, err)
	}
	return n
}

// testCheckpointsShare checks that checkpoints at one version share one
// copy of the document: a hundred of an unchanged document of 2 MiB take
// little more than one copy.
func testCheckpointsShare(t *testing.T, s store.Store) {
	if _, ok := s.(store.Sizer); !ok {
		t.Skip("the store is not a store.Sizer")
	}
	ctx := context.Background()
	doc := []byte(`{"type":"doc","text":"` + strings.Repeat("x", 2<<20) + `"}`)
	if err := s.Create(ctx, "a", "basic", doc, nil); err != nil {
		t.Fatal(err)
	}
	before := sizeOf(t, s, "a")
	const n = 100
	names := 0
	for i := range n {
		cp := store.Checkpoint{Name: fmt.Sprintf("cp-%03d", i), Version: 0, Author: "ann", Doc: bytes.Clone(doc)}
		if err := s.AddCheckpoint(ctx, "a", cp); err != nil {
			t.Fatalf("AddCheckpoint %d: %v", i, err)
		}
		names += len(cp.Name) + len(cp.Author)
	}
	if grown, want := sizeOf(t, s, "a")-before, int64(len(doc)+names); grown != want {
		t.Errorf("%d checkpoints of a document of %d bytes grew Size by %d, want %d (one copy and the names)", n, len(doc), grown, want)
	}
	// A later one may come without its document.
	if err := s.AddCheckpoint(ctx, "a", store.Checkpoint{Name: "nil", Version: 0}); err != nil {
		t.Fatalf("AddCheckpoint without Doc: %v", err)
	}
	if list, err := s.Checkpoints(ctx, "a"); err != nil || len(list) != n+1 {
		t.Fatalf("Checkpoints: %d, %v; want %d", len(list), err, n+1)
	}
	// The shared copy is the document of them all, whatever is pruned.
	if err := s.Append(ctx, "a", 0, mkSteps("a", 2), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 2, Doc: []byte(`{"v":2}`), Meta: []byte(`{}`)}, 0); err != nil {
		t.Fatal(err)
	}
	if got := snapshotAt(t, s, "a", 1); got.Version != 0 || !bytes.Equal(got.Doc, doc) {
		t.Errorf("SnapshotAt(1) after pruning = {%d, %d bytes}, want the checkpoints' document at 0", got.Version, len(got.Doc))
	}
	// A checkpoint at another version has a copy of its own.
	before = sizeOf(t, s, "a")
	other := []byte(`{"type":"doc","v":2}`)
	if err := s.AddCheckpoint(ctx, "a", store.Checkpoint{Name: "two", Version: 2, Doc: other}); err != nil {
		t.Fatal(err)
	}
	if grown, want := sizeOf(t, s, "a")-before, int64(len(other)+len("two")); grown != want {
		t.Errorf("a checkpoint at a new version grew Size by %d, want %d", grown, want)
	}
	if got := snapshotAt(t, s, "a", 2); got.Version != 2 || (!bytes.Equal(got.Doc, other) && string(got.Doc) != `{"v":2}`) {
		t.Errorf("SnapshotAt(2) = {%d %s}", got.Version, got.Doc)
	}
}

// testSize checks what Size counts: the bytes of the steps, snapshots,
// checkpoints and metadata, less what pruning and Delete remove.
func testSize(t *testing.T, s store.Store) {
	if _, ok := s.(store.Sizer); !ok {
		t.Skip("the store is not a store.Sizer")
	}
	ctx := context.Background()
	doc, meta := []byte(`{"type":"doc"}`), []byte(`{"comments":[]}`)
	if err := s.Create(ctx, "a", "basic", doc, meta); err != nil {
		t.Fatal(err)
	}
	mkDoc(t, s, "other", 3)
	want := int64(len(doc) + len(meta))
	if got := sizeOf(t, s, "a"); got != want {
		t.Fatalf("Size after Create = %d, want %d", got, want)
	}
	steps := mkSteps("a", 5)
	entry := []byte(`{"entry":1}`)
	if err := s.Append(ctx, "a", 0, steps, entry); err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		want += int64(len(st.JSON) + len(st.ClientID) + len(st.Author) + len(st.Commit))
	}
	want += int64(len(entry))
	if got := sizeOf(t, s, "a"); got != want {
		t.Fatalf("Size after Append = %d, want %d", got, want)
	}
	snap := []byte(`{"type":"doc","v":5}`)
	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 5, Doc: snap}, -1); err != nil {
		t.Fatal(err)
	}
	want += int64(len(snap))
	if got := sizeOf(t, s, "a"); got != want {
		t.Fatalf("Size after SaveSnapshot = %d, want %d", got, want)
	}
	cp := store.Checkpoint{Name: "cp", Version: 3, Author: "ann", Doc: []byte(`{"v":3}`)}
	if err := s.AddCheckpoint(ctx, "a", cp); err != nil {
		t.Fatal(err)
	}
	want += int64(len(cp.Name) + len(cp.Author) + len(cp.Doc))
	if got := sizeOf(t, s, "a"); got != want {
		t.Fatalf("Size after AddCheckpoint = %d, want %d", got, want)
	}
	// Pruning everything before the snapshot drops the steps and the
	// snapshot at 0.
	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 5, Doc: snap, Meta: meta, MetaSeq: 1}, 0); err != nil {
		t.Fatal(err)
	}
	if got := sizeOf(t, s, "a"); got >= want {
		t.Errorf("Size after pruning = %d, want less than %d", got, want)
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.(store.Sizer).Size(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Size of a deleted document: %v, want ErrNotFound", err)
	}
	if _, err := s.(store.Sizer).Size(ctx, "none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Size of an unknown document: %v, want ErrNotFound", err)
	}
	if got := sizeOf(t, s, "other"); got <= int64(len(doc)) {
		t.Errorf("Size(other) = %d after another's Delete", got)
	}
}

func testNotFound(t *testing.T, s store.Store) {
	ctx := context.Background()
	mkDoc(t, s, "other", 1)
	mkDoc(t, s, "gone", 1)
	if err := s.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"missing", "gone", "", "Other"} {
		calls := map[string]error{}
		_, calls["Load"] = s.Load(ctx, id)
		if hl, ok := s.(store.HeadLoader); ok {
			_, calls["LoadHead"] = hl.LoadHead(ctx, id)
		}
		calls["Append"] = s.Append(ctx, id, 0, mkSteps("x", 1), nil)
		calls["Append empty"] = s.Append(ctx, id, 0, nil, []byte(`{}`))
		_, calls["Steps"] = s.Steps(ctx, id, 0, 1)
		_, calls["Steps empty"] = s.Steps(ctx, id, 0, 0)
		calls["SaveSnapshot"] = s.SaveSnapshot(ctx, id, store.Snapshot{Version: 0, Doc: []byte(`{}`)}, 0)
		_, calls["SnapshotAt"] = s.SnapshotAt(ctx, id, 0)
		calls["AddCheckpoint"] = s.AddCheckpoint(ctx, id, store.Checkpoint{Name: "c", Doc: []byte(`{}`)})
		_, calls["Checkpoints"] = s.Checkpoints(ctx, id)
		calls["Delete"] = s.Delete(ctx, id)
		for name, err := range calls {
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s(%q): %v, want ErrNotFound", name, id, err)
			}
		}
	}
	if _, err := s.Load(ctx, "missing"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Load error %q does not name the document", err)
	}
	if h := load(t, s, "other"); h.Version != 1 {
		t.Errorf("other document changed: %s", fmtHead(h))
	}
}

func testDelete(t *testing.T, s store.Store) {
	ctx := context.Background()
	keep := mkDoc(t, s, "keep", 3)
	mkDoc(t, s, "a", 5)
	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 4, Doc: []byte(`{"v":4}`)}, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Load after Delete: %v", err)
	}
	if err := s.Delete(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "keep" {
		t.Errorf("List after Delete = %+v", list)
	}
	// A new document with the same id starts after the deleted one's
	// last version, with nothing of it.
	if err := s.Create(ctx, "a", "other", []byte(`{"new":1}`), nil); err != nil {
		t.Fatalf("Create after Delete: %v", err)
	}
	sameHead(t, "recreated", load(t, s, "a"), store.Head{Schema: "other", Version: 6, MetaVersion: 6, Oldest: 6,
		Snapshot: store.Snapshot{Version: 6, Doc: []byte(`{"new":1}`)}})
	for _, from := range []int64{0, 4, 5} {
		if steps, err := s.Steps(ctx, "a", from, 10); !errors.Is(err, store.ErrCompacted) {
			t.Errorf("Steps(%d, 10) of the recreated document: %d steps, %v; want ErrCompacted", from, len(steps), err)
		}
	}
	if steps := getSteps(t, s, "a", 6, 10); len(steps) != 0 {
		t.Errorf("recreated document has %d steps", len(steps))
	}
	for _, base := range []int64{0, 5} {
		if err := s.Append(ctx, "a", base, mkSteps("x", 1), nil); !errors.Is(err, store.ErrConflict) {
			t.Errorf("Append at the old version %d: %v, want ErrConflict", base, err)
		}
	}
	// More steps than the old document had, so that none of its steps may
	// linger.
	fresh := mkSteps("fresh", 6)
	if err := s.Append(ctx, "a", 6, fresh, nil); err != nil {
		t.Fatal(err)
	}
	for i := range fresh {
		fresh[i].Version = int64(7 + i)
	}
	sameSteps(t, "recreated steps", getSteps(t, s, "a", 6, 20), fresh)
	sameSteps(t, "other document", getSteps(t, s, "keep", 0, 10), keep)
}

// listed returns the document id as List gives it.
func listed(t *testing.T, s store.Store, id string) store.DocInfo {
	t.Helper()
	list, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range list {
		if info.ID == id {
			return info
		}
	}
	t.Fatalf("List lacks %q", id)
	return store.DocInfo{}
}

// testRecreate checks that the versions of the documents created one
// after another under one id never repeat: each starts after the last
// version of every earlier one, and then works as any document.
func testRecreate(t *testing.T, s store.Store) {
	ctx := context.Background()
	var (
		notesMu sync.Mutex
		notes   []string
	)
	notifier, _ := s.(store.Notifier)
	if notifier != nil {
		listening := make(chan struct{})
		var heard sync.Once
		defer notifier.Subscribe(func(n store.Notice) {
			switch {
			case n.ID == "a":
				notesMu.Lock()
				notes = append(notes, fmt.Sprint(n.Version))
				notesMu.Unlock()
			case strings.HasPrefix(n.ID, "listening-"):
				heard.Do(func() { close(listening) })
			}
		})()
		// A backend may start listening after Subscribe returned: create
		// documents until the notice of one arrives.
		for i := 0; ; i++ {
			if err := s.Create(ctx, fmt.Sprint("listening-", i), "basic", []byte(`{}`), nil); err != nil {
				t.Fatal(err)
			}
			select {
			case <-listening:
			case <-time.After(250 * time.Millisecond):
				if i < 120 {
					continue
				}
				t.Fatal("no notice of 120 Creates in 30 s")
			}
			break
		}
	}
	var wantNotes []string
	firsts := []int64{0, 1, 2, 5, 9, 10}
	for i, first := range firsts {
		if err := s.Create(ctx, "a", "basic", fmt.Appendf(nil, `{"n":%d}`, i), []byte(`{"m":0}`)); err != nil {
			t.Fatalf("Create %d: %v", i, err)
		}
		wantNotes = append(wantNotes, fmt.Sprint(first))
		sameHead(t, fmt.Sprint("created ", i), load(t, s, "a"), store.Head{Schema: "basic", Version: first, Oldest: first,
			Meta: []byte(`{"m":0}`), MetaVersion: first, Snapshot: store.Snapshot{Version: first, Doc: fmt.Appendf(nil, `{"n":%d}`, i)}})
		if err := s.Create(ctx, "a", "basic", []byte(`{}`), nil); !errors.Is(err, store.ErrExists) {
			t.Errorf("Create %d again: %v, want ErrExists", i, err)
		}
		if info := listed(t, s, "a"); info.Version != first {
			t.Errorf("List after Create %d: %+v", i, info)
		}
		if i == len(firsts)-1 {
			break
		}
		// Some are deleted untouched, some after steps (and a metadata
		// entry), one after a snapshot that pruned its first steps and a
		// checkpoint.
		if n := firsts[i+1] - first - 1; n > 0 {
			if err := s.Append(ctx, "a", first, mkSteps(fmt.Sprint(i), int(n)), []byte(`{"m":1}`)); err != nil {
				t.Fatalf("Append to %d: %v", i, err)
			}
			wantNotes = append(wantNotes, fmt.Sprint(first+n))
			if entries, err := s.MetaEntries(ctx, "a", 0, 5); err != nil || len(entries) != 1 || entries[0].Version != first+n {
				t.Errorf("MetaEntries of %d: %+v, %v", i, entries, err)
			}
		}
		if i == 3 {
			snap := store.Snapshot{Version: first + 1, Doc: []byte(`{"snap":1}`), Meta: []byte(`{}`), MetaSeq: 0}
			if err := s.SaveSnapshot(ctx, "a", snap, 0); err != nil {
				t.Fatalf("SaveSnapshot of %d: %v", i, err)
			}
			if h := load(t, s, "a"); h.Oldest != first+1 {
				t.Errorf("after pruning %d: %s", i, fmtHead(h))
			}
			if err := s.AddCheckpoint(ctx, "a", store.Checkpoint{Name: "c", Version: first, Doc: []byte(`{}`)}); err != nil {
				t.Errorf("AddCheckpoint of %d: %v", i, err)
			}
		}
		if err := s.Delete(ctx, "a"); err != nil {
			t.Fatalf("Delete %d: %v", i, err)
		}
		wantNotes = append(wantNotes, "-1")
	}
	if notifier != nil {
		// Notices may come after the commit returned.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			notesMu.Lock()
			got := fmt.Sprint(notes)
			notesMu.Unlock()
			if got == fmt.Sprint(wantNotes) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("notices %s, want %s", got, wantNotes)
				break
			}
		}
	}
	// The last one has none of the earlier ones' steps, entries or
	// checkpoints.
	if _, err := s.Steps(ctx, "a", 8, 9); !errors.Is(err, store.ErrCompacted) {
		t.Errorf("Steps(8, 9) of the last document: %v, want ErrCompacted", err)
	}
	if entries, err := s.MetaEntries(ctx, "a", 0, 5); err != nil || len(entries) != 0 {
		t.Errorf("MetaEntries of the last document: %+v, %v", entries, err)
	}
	if list, err := s.Checkpoints(ctx, "a"); err != nil || len(list) != 0 {
		t.Errorf("Checkpoints of the last document: %+v, %v", list, err)
	}
	// A document of another id is not concerned.
	mkDoc(t, s, "b", 1)
	if h := load(t, s, "b"); h.Version != 1 || h.Oldest != 0 {
		t.Errorf("another document: %s", fmtHead(h))
	}
}

func testList(t *testing.T, s store.Store) {
	ctx := context.Background()
	if list, err := s.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("List of an empty store = %v, %v", list, err)
	}
	start := time.Now()
	ids := []string{"b", "a", "ü", "B", "a-1", "a.0", "z", "aa", "a~"}
	for i, id := range ids {
		if err := s.Create(ctx, id, fmt.Sprint("schema", i), []byte(`{}`), nil); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := s.Append(ctx, id, 0, mkSteps(id, i+1), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Append moves Updated on.
	time.Sleep(5 * time.Millisecond)
	mid := time.Now()
	if err := s.Append(ctx, "a", 0, nil, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"B", "a", "a-1", "a.0", "aa", "a~", "b", "z", "ü"} // byte order
	var got []string
	for _, d := range list {
		got = append(got, d.ID)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("List ids = %q, want %q", got, want)
	}
	for _, d := range list {
		i := 0
		for ids[i] != d.ID {
			i++
		}
		wantVersion := int64(0)
		if i%2 == 0 {
			wantVersion = int64(i + 1)
		}
		if d.Schema != fmt.Sprint("schema", i) || d.Version != wantVersion {
			t.Errorf("List entry %+v, want schema%d version %d", d, i, wantVersion)
		}
		if d.ID == "a" && d.Updated.Before(mid) {
			t.Errorf("Append did not move Updated of %q to after %v: %v", d.ID, mid, d.Updated)
		}
		if d.Updated.Before(start.Add(-time.Second)) || d.Updated.After(end.Add(time.Second)) {
			t.Errorf("List entry %q updated at %v, want between %v and %v", d.ID, d.Updated, start, end)
		}
	}
}

// testAliasing checks that the store copies byte slices in and out.
func testAliasing(t *testing.T, s store.Store) {
	ctx := context.Background()
	doc, meta := []byte(`{"doc":1}`), []byte(`{"meta":1}`)
	if err := s.Create(ctx, "a", "basic", doc, meta); err != nil {
		t.Fatal(err)
	}
	doc[2], meta[2] = 'X', 'X'
	steps := mkSteps("a", 2)
	meta2 := []byte(`{"meta":2}`)
	if err := s.Append(ctx, "a", 0, steps, meta2); err != nil {
		t.Fatal(err)
	}
	want := mkSteps("a", 2)
	want[0].Version, want[1].Version = 1, 2
	steps[0].JSON[2], steps[1].ClientID[0], steps[0].Commit[2], meta2[2] = 'X', 'X', 'X', 'X'
	snapDoc := []byte(`{"snap":1}`)
	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 1, Doc: snapDoc}, -1); err != nil {
		t.Fatal(err)
	}
	snapDoc[2] = 'X'

	h := load(t, s, "a")
	if string(h.Meta) != `{"meta":1}` || string(h.Snapshot.Doc) != `{"snap":1}` || lastMeta(t, s, "a") != `{"meta":2}` {
		t.Fatalf("stored values changed with the caller's slices: %s", fmtHead(h))
	}
	h.Meta[2], h.Snapshot.Doc[2] = 'Y', 'Y'
	got := getSteps(t, s, "a", 0, 2)
	sameSteps(t, "steps", got, want)
	got[0].JSON[2], got[1].ClientID[0], got[0].Commit[2] = 'Y', 'Y', 'Y'
	entries, err := s.MetaEntries(ctx, "a", 0, 1)
	if err != nil || len(entries) != 1 {
		t.Fatalf("MetaEntries: %d, %v", len(entries), err)
	}
	entries[0].JSON[2] = 'Y'

	h = load(t, s, "a")
	if string(h.Meta) != `{"meta":1}` || string(h.Snapshot.Doc) != `{"snap":1}` || lastMeta(t, s, "a") != `{"meta":2}` {
		t.Errorf("stored values changed with returned slices: %s", fmtHead(h))
	}
	base := []byte(`{"base":1}`)
	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 2, Doc: snapDoc, Meta: base, MetaSeq: 1}, -1); err != nil {
		t.Fatal(err)
	}
	base[2] = 'X'
	if h := load(t, s, "a"); string(h.Meta) != `{"base":1}` {
		t.Errorf("the metadata base changed with the caller's slice: %s", fmtHead(h))
	}
	sameSteps(t, "steps after changing returned ones", getSteps(t, s, "a", 0, 2), want)
}

// testCanceled checks that a cancelled context fails every method and
// changes nothing.
func testCanceled(t *testing.T, s store.Store) {
	steps := mkDoc(t, s, "a", 3)
	before := load(t, s, "a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := map[string]error{}
	calls["Create"] = s.Create(ctx, "b", "basic", []byte(`{}`), nil)
	_, calls["Load"] = s.Load(ctx, "a")
	calls["Append"] = s.Append(ctx, "a", 3, mkSteps("x", 1), []byte(`{}`))
	_, calls["Steps"] = s.Steps(ctx, "a", 0, 3)
	_, calls["MetaEntries"] = s.MetaEntries(ctx, "a", 0, 3)
	calls["SaveSnapshot"] = s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 3, Doc: []byte(`{}`)}, 0)
	_, calls["List"] = s.List(ctx)
	calls["Delete"] = s.Delete(ctx, "a")
	for name, err := range calls {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", name, err)
		}
	}
	sameHead(t, "after cancelled calls", load(t, s, "a"), before)
	sameSteps(t, "after cancelled calls", getSteps(t, s, "a", 0, 10), steps)
	if _, err := s.Load(context.Background(), "b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cancelled Create created the document: %v", err)
	}
}

// testConcurrentDocs appends to many documents at once, each document
// from its own goroutine.
func testConcurrentDocs(t *testing.T, s store.Store) {
	const docs, rounds = 32, 20
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, docs)
	for d := range docs {
		id := fmt.Sprint("doc", d)
		if err := s.Create(ctx, id, "basic", []byte(`{}`), nil); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for r := range rounds {
				steps := mkSteps(fmt.Sprint(id, "/", r), 1)
				if err := s.Append(ctx, id, int64(r*2), steps[:1], nil); err != nil {
					errs <- err
					return
				}
				if err := s.Append(ctx, id, int64(r*2+1), steps[:1], []byte(fmt.Sprint(r))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for d := range docs {
		id := fmt.Sprint("doc", d)
		h := load(t, s, id)
		if h.Version != 2*rounds || h.MetaSeq != rounds || lastMeta(t, s, id) != fmt.Sprint(rounds-1) {
			t.Errorf("%s: %s", id, fmtHead(h))
		}
		steps := getSteps(t, s, id, 0, 2*rounds)
		for i, st := range steps {
			want := mkSteps(fmt.Sprint(id, "/", i/2), 1)[0].JSON
			if st.Version != int64(i+1) || !bytes.Equal(st.JSON, want) {
				t.Errorf("%s: step %d = %d %s, want %s", id, i, st.Version, st.JSON, want)
				break
			}
		}
	}
}

// testConcurrentOneDoc lets goroutines race to append to one document at
// the version each last saw: exactly one wins each version.
func testConcurrentOneDoc(t *testing.T, s store.Store) {
	const workers, tries = 8, 40
	ctx := context.Background()
	mkDoc(t, s, "a", 0)
	var (
		mu        sync.Mutex
		winner    = map[int64]string{} // base version → winning step JSON
		conflicts int
		wg        sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for i := range tries {
				h, err := s.Load(ctx, "a")
				if err != nil {
					t.Error(err)
					return
				}
				json := fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)
				err = s.Append(ctx, "a", h.Version, []store.Step{{JSON: []byte(json), ClientID: []byte(fmt.Sprint(w))}}, []byte(json))
				mu.Lock()
				switch {
				case err == nil:
					if prev, ok := winner[h.Version]; ok {
						t.Errorf("two appends at %d succeeded: %s and %s", h.Version, prev, json)
					}
					winner[h.Version] = json
				case errors.Is(err, store.ErrConflict):
					conflicts++
				default:
					t.Error(err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	h := load(t, s, "a")
	if h.Version != int64(len(winner)) || h.Version+int64(conflicts) != workers*tries {
		t.Errorf("version %d, %d winners, %d conflicts, %d tries", h.Version, len(winner), conflicts, workers*tries)
	}
	if got := lastMeta(t, s, "a"); got != winner[h.Version-1] || h.MetaSeq != h.Version {
		t.Errorf("metadata %s (%d entries), want the last winner's %s (%d)", got, h.MetaSeq, winner[h.Version-1], h.Version)
	}
	for _, st := range getSteps(t, s, "a", 0, h.Version) {
		if want := winner[st.Version-1]; string(st.JSON) != want {
			t.Errorf("step %d = %s, want the winner's %s", st.Version, st.JSON, want)
		}
	}
}

// testMetaSeq checks that Head.MetaSeq counts the replacements of the
// metadata, by Append and AppendIf, and starts again at Create.
func testMetaSeq(t *testing.T, s store.Store) {
	ctx := context.Background()
	ms := s.(store.MetaSwapper)
	mkDoc(t, s, "a", 2) // no metadata with the steps
	seq := func(what string, want int64) {
		t.Helper()
		if h := load(t, s, "a"); h.MetaSeq != want {
			t.Errorf("%s: MetaSeq %d, want %d", what, h.MetaSeq, want)
		}
	}
	seq("after Create and an Append without metadata", 0)
	if err := s.Append(ctx, "a", 2, nil, []byte(`{"m":1}`)); err != nil {
		t.Fatal(err)
	}
	seq("after an Append of metadata alone", 1)
	if err := s.Append(ctx, "a", 2, mkSteps("b", 2), []byte(`{"m":2}`)); err != nil {
		t.Fatal(err)
	}
	seq("after an Append of steps and metadata", 2)
	if err := s.Append(ctx, "a", 4, mkSteps("c", 1), nil); err != nil {
		t.Fatal(err)
	}
	seq("after an Append of steps alone", 2)
	if err := ms.AppendIf(ctx, "a", 5, nil, 2, []byte(`{"m":3}`)); err != nil {
		t.Fatal(err)
	}
	seq("after an AppendIf of metadata", 3)
	if err := ms.AppendIf(ctx, "a", 5, mkSteps("d", 1), 3, nil); err != nil {
		t.Fatal(err)
	}
	seq("after an AppendIf of steps alone", 3)
	if h := load(t, s, "a"); h.Version != 6 || lastMeta(t, s, "a") != `{"m":3}` {
		t.Errorf("after the appends: %s", fmtHead(h))
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	mkDoc(t, s, "a", 0)
	seq("after Delete and Create", 0)
}

// testAppendIf checks that AppendIf appends only at the latest version
// and metadata sequence number, and changes nothing otherwise.
func testAppendIf(t *testing.T, s store.Store) {
	ctx := context.Background()
	ms := s.(store.MetaSwapper)
	want := mkDoc(t, s, "a", 3)
	if err := s.Append(ctx, "a", 3, nil, []byte(`{"m":1}`)); err != nil {
		t.Fatal(err)
	}
	before := load(t, s, "a")
	for _, tc := range []struct{ base, seq int64 }{{3, 0}, {3, 2}, {3, 100}, {2, 1}, {4, 1}, {0, 0}} {
		for _, n := range []int{0, 2} {
			for _, meta := range [][]byte{nil, []byte(`{"bad":true}`)} {
				err := ms.AppendIf(ctx, "a", tc.base, mkSteps("bad", n), tc.seq, meta)
				if !errors.Is(err, store.ErrConflict) {
					t.Errorf("AppendIf at %d with MetaSeq %d of %d steps and meta %q: %v, want ErrConflict", tc.base, tc.seq, n, meta, err)
				}
			}
		}
	}
	if err := ms.AppendIf(ctx, "a", 3, nil, -1, []byte(`{"bad":true}`)); err == nil || errors.Is(err, store.ErrConflict) {
		t.Errorf("AppendIf with MetaSeq -1: %v, want an error that is not ErrConflict", err)
	}
	sameHead(t, "after conflicts", load(t, s, "a"), before)
	sameSteps(t, "after conflicts", getSteps(t, s, "a", 0, 100), want)

	steps := mkSteps("good", 2)
	if err := ms.AppendIf(ctx, "a", 3, steps, 1, []byte(`{"m":2}`)); err != nil {
		t.Fatal(err)
	}
	for i := range steps {
		steps[i].Version = int64(4 + i)
	}
	sameSteps(t, "after a good AppendIf", getSteps(t, s, "a", 0, 100), append(want, steps...))
	if h := load(t, s, "a"); h.Version != 5 || h.MetaSeq != 2 || metaLog(t, s, "a") != `1@3:{"m":1} 2@5:{"m":2}` {
		t.Errorf("after a good AppendIf: %s, log %s", fmtHead(h), metaLog(t, s, "a"))
	}
	// The previous sequence number is stale now, for metadata alone too.
	if err := ms.AppendIf(ctx, "a", 5, nil, 1, []byte(`{"m":"late"}`)); !errors.Is(err, store.ErrConflict) {
		t.Errorf("AppendIf at a stale MetaSeq: %v, want ErrConflict", err)
	}
	if err := ms.AppendIf(ctx, "missing", 0, nil, 0, []byte(`{}`)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AppendIf to a missing document: %v, want ErrNotFound", err)
	}
}

// testAppendIfConcurrent has writers add a token each as a metadata
// entry with AppendIf at the sequence number they read, some with a step:
// the entries are exactly the successful writers' tokens, and every
// step's writer won.
func testAppendIfConcurrent(t *testing.T, s store.Store) {
	const workers, tries = 8, 40
	ctx := context.Background()
	ms := s.(store.MetaSwapper)
	mkDoc(t, s, "a", 0)
	if err := s.Append(ctx, "a", 0, nil, []byte{}); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		won   = map[string]bool{}
		steps int64
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for i := range tries {
				h, err := s.Load(ctx, "a")
				if err != nil {
					t.Error(err)
					return
				}
				token := fmt.Sprintf("w%di%d", w, i)
				var add []store.Step
				if i%3 == 0 {
					add = []store.Step{{JSON: []byte(`{"t":"` + token + `"}`), ClientID: []byte("1")}}
				}
				err = ms.AppendIf(ctx, "a", h.Version, add, h.MetaSeq, []byte(token))
				switch {
				case err == nil:
					mu.Lock()
					won[token] = true
					steps += int64(len(add))
					mu.Unlock()
				case !errors.Is(err, store.ErrConflict):
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	h := load(t, s, "a")
	entries, err := s.MetaEntries(ctx, "a", 1, h.MetaSeq)
	if err != nil {
		t.Fatal(err)
	}
	var tokens []string
	for i, e := range entries {
		if i > 0 && e.Version < entries[i-1].Version {
			t.Errorf("entry %d at version %d after entry %d at %d", e.Seq, e.Version, entries[i-1].Seq, entries[i-1].Version)
		}
		tokens = append(tokens, string(e.JSON))
	}
	if len(won) == 0 || len(tokens) != len(won) || h.MetaSeq != int64(len(won))+1 || h.Version != steps {
		t.Errorf("%d successful AppendIfs (%d steps); the head has %d tokens, MetaSeq %d, version %d", len(won), steps, len(tokens), h.MetaSeq, h.Version)
	}
	for _, tok := range tokens {
		if !won[tok] {
			t.Errorf("token %q in the metadata, of no successful AppendIf", tok)
		}
	}
}

// testMetaEntries checks MetaEntries' ranges and that Delete removes the
// entries.
func testMetaEntries(t *testing.T, s store.Store) {
	ctx := context.Background()
	mkDoc(t, s, "a", 0)
	for i, n := range []int{2, 0, 0, 1} {
		h := load(t, s, "a")
		if err := s.Append(ctx, "a", h.Version, mkSteps("s", n), fmt.Appendf(nil, "e%d", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if got := metaLog(t, s, "a"); got != "1@2:e1 2@2:e2 3@2:e3 4@3:e4" {
		t.Errorf("metadata log %s", got)
	}
	for _, tc := range []struct {
		from, to int64
		want     string
	}{{0, 4, "e1 e2 e3 e4"}, {1, 3, "e2 e3"}, {3, 100, "e4"}, {4, 10, ""}, {2, 2, ""}, {3, 1, ""}, {-5, 1, "e1"}} {
		entries, err := s.MetaEntries(ctx, "a", tc.from, tc.to)
		if err != nil {
			t.Errorf("MetaEntries(%d, %d): %v", tc.from, tc.to, err)
			continue
		}
		var got []string
		for _, e := range entries {
			got = append(got, string(e.JSON))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("MetaEntries(%d, %d) = %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}
	if _, err := s.MetaEntries(ctx, "missing", 0, 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("MetaEntries of a missing document: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	mkDoc(t, s, "a", 0)
	if h := load(t, s, "a"); h.MetaSeq != 0 || h.MetaBase != 0 {
		t.Errorf("after Delete and Create: %s", fmtHead(h))
	}
	if entries, err := s.MetaEntries(ctx, "a", 0, 10); err != nil || len(entries) != 0 {
		t.Errorf("after Delete and Create: %d entries, %v", len(entries), err)
	}
}

// testMetaBase checks that a snapshot with metadata replaces the base,
// drops the entries folded into it, and that one without keeps the base.
func testMetaBase(t *testing.T, s store.Store) {
	ctx := context.Background()
	mkDoc(t, s, "a", 2)
	for i := range 3 {
		if err := s.Append(ctx, "a", 2+int64(i), mkSteps("s", 1), fmt.Appendf(nil, "e%d", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	before := load(t, s, "a")
	// Out of range: nothing changes.
	for _, seq := range []int64{4, -1} {
		err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 4, Doc: []byte("d4"), Meta: []byte("bad"), MetaSeq: seq}, 0)
		if err == nil || errors.Is(err, store.ErrConflict) {
			t.Errorf("SaveSnapshot with MetaSeq %d of 3: %v, want an error that is not ErrConflict", seq, err)
		}
	}
	sameHead(t, "after refused snapshots", load(t, s, "a"), before)

	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 4, Doc: []byte("d4"), Meta: []byte("m2"), MetaSeq: 2}, -1); err != nil {
		t.Fatal(err)
	}
	h := load(t, s, "a")
	sameHead(t, "after a snapshot with metadata", h, store.Head{
		Schema: "basic", Version: 5, Meta: []byte("m2"), MetaVersion: 4, MetaBase: 2, MetaSeq: 3,
		Snapshot: store.Snapshot{Version: 4, Doc: []byte("d4")},
	})
	if got := metaLog(t, s, "a"); got != "3@5:e3" {
		t.Errorf("metadata log %s, want the entry after the base", got)
	}
	if entries, err := s.MetaEntries(ctx, "a", 1, 3); !errors.Is(err, store.ErrCompacted) {
		t.Errorf("MetaEntries(1, 3) = %d entries, %v; want ErrCompacted", len(entries), err)
	}
	// A snapshot without metadata keeps the base.
	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 5, Doc: []byte("d5")}, -1); err != nil {
		t.Fatal(err)
	}
	h.Snapshot = store.Snapshot{Version: 5, Doc: []byte("d5")}
	sameHead(t, "after a snapshot without metadata", load(t, s, "a"), h)
	// Entries go on being numbered after the base.
	if err := s.Append(ctx, "a", 5, nil, []byte("e4")); err != nil {
		t.Fatal(err)
	}
	if got := metaLog(t, s, "a"); got != "3@5:e3 4@5:e4" {
		t.Errorf("metadata log %s", got)
	}
	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 5, Doc: []byte("d5"), Meta: []byte("m4"), MetaSeq: 4}, -1); err != nil {
		t.Fatal(err)
	}
	if h := load(t, s, "a"); string(h.Meta) != "m4" || h.MetaBase != 4 || h.MetaVersion != 5 || metaLog(t, s, "a") != "" {
		t.Errorf("after folding every entry: %s", fmtHead(h))
	}
}

// testMetaBaseOlder checks that a snapshot whose metadata is older than
// the base keeps the base, and that pruning keeps the steps after the
// base's version.
func testMetaBaseOlder(t *testing.T, s store.Store) {
	ctx := context.Background()
	all := mkDoc(t, s, "a", 6)
	if err := s.Append(ctx, "a", 6, nil, []byte("e1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "a", 6, nil, []byte("e2")); err != nil {
		t.Fatal(err)
	}
	// The base stays at version 0 without metadata in the snapshots:
	// nothing is pruned.
	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 3, Doc: []byte("d3")}, 0); err != nil {
		t.Fatal(err)
	}
	if h := load(t, s, "a"); h.Oldest != 0 || h.MetaVersion != 0 {
		t.Errorf("after a snapshot without metadata: %s, want nothing pruned", fmtHead(h))
	}
	sameSteps(t, "Steps(0, 6)", getSteps(t, s, "a", 0, 6), all)
	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 4, Doc: []byte("d4"), Meta: []byte("m2"), MetaSeq: 2}, -1); err != nil {
		t.Fatal(err)
	}
	// Older metadata (fewer entries folded in) at a later version: the
	// base stays, and the steps after its version too.
	if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 6, Doc: []byte("d6"), Meta: []byte("m1"), MetaSeq: 1}, 0); err != nil {
		t.Fatal(err)
	}
	sameHead(t, "after an older snapshot", load(t, s, "a"), store.Head{
		Schema: "basic", Version: 6, Meta: []byte("m2"), MetaVersion: 4, MetaBase: 2, MetaSeq: 2,
		Snapshot: store.Snapshot{Version: 6, Doc: []byte("d6")}, Oldest: 4,
	})
	sameSteps(t, "Steps(4, 6)", getSteps(t, s, "a", 4, 6), all[4:])
}

// testClose checks that every method fails with ErrClosed after Close.
func testClose(t *testing.T, s store.Store) {
	ctx := context.Background()
	mkDoc(t, s, "a", 1)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	calls := map[string]error{}
	calls["Create"] = s.Create(ctx, "b", "basic", []byte(`{}`), nil)
	_, calls["Load"] = s.Load(ctx, "a")
	if hl, ok := s.(store.HeadLoader); ok {
		_, calls["LoadHead"] = hl.LoadHead(ctx, "a")
	}
	calls["Append"] = s.Append(ctx, "a", 1, mkSteps("x", 1), nil)
	if ms, ok := s.(store.MetaSwapper); ok {
		calls["AppendIf"] = ms.AppendIf(ctx, "a", 1, mkSteps("x", 1), 0, []byte(`{}`))
	}
	_, calls["Steps"] = s.Steps(ctx, "a", 0, 1)
	_, calls["MetaEntries"] = s.MetaEntries(ctx, "a", 0, 1)
	calls["SaveSnapshot"] = s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 1, Doc: []byte(`{}`)}, 0)
	_, calls["SnapshotAt"] = s.SnapshotAt(ctx, "a", 1)
	calls["AddCheckpoint"] = s.AddCheckpoint(ctx, "a", store.Checkpoint{Name: "c", Doc: []byte(`{}`)})
	_, calls["Checkpoints"] = s.Checkpoints(ctx, "a")
	_, calls["List"] = s.List(ctx)
	calls["Delete"] = s.Delete(ctx, "a")
	calls["Close"] = s.Close()
	for name, err := range calls {
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

func testScan(t *testing.T, s store.Store) {
	ctx := context.Background()
	sc := s.(store.Scanner)
	scan := func(id string) (store.Head, []store.Snapshot, []store.Step) {
		t.Helper()
		var head store.Head
		var older []store.Snapshot
		var steps []store.Step
		err := sc.Scan(ctx, id, func(h store.Head, o []store.Snapshot, it iter.Seq2[store.Step, error]) error {
			head, older = h, o
			for st, err := range it {
				if err != nil {
					return err
				}
				steps = append(steps, st)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Scan %q: %v", id, err)
		}
		return head, older, steps
	}
	olderAre := func(what string, older []store.Snapshot, want ...string) {
		t.Helper()
		var got []string
		for _, o := range older {
			got = append(got, fmt.Sprintf("%d:%s", o.Version, o.Doc))
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: older snapshots %q, want %q", what, got, want)
		}
	}
	all := mkDoc(t, s, "a", 10)
	mkDoc(t, s, "b", 3)
	if err := s.Append(ctx, "a", 10, nil, []byte(`{"e":1}`)); err != nil {
		t.Fatal(err)
	}
	head, older, steps := scan("a")
	sameHead(t, "Scan head", head, load(t, s, "a"))
	sameSteps(t, "Scan steps", steps, all)
	olderAre("Scan after Create", older)

	snapshot := func(v, keep int64) {
		t.Helper()
		snap := store.Snapshot{Version: v, Doc: fmt.Appendf(nil, `{"v":%d}`, v), Meta: []byte(`{"m":1}`), MetaSeq: 1}
		if err := s.SaveSnapshot(ctx, "a", snap, keep); err != nil {
			t.Fatal(err)
		}
	}
	// The creation's snapshot is kept, and so is every later one.
	snapshot(4, -1)
	head, older, steps = scan("a")
	sameHead(t, "Scan head after a snapshot", head, load(t, s, "a"))
	sameSteps(t, "Scan steps after a snapshot", steps, all)
	olderAre("Scan after a snapshot", older, `0:{"type":"doc"}`)

	// The bound 3 has the snapshot at 0 below it: nothing is pruned.
	snapshot(6, 7)
	head, older, steps = scan("a")
	sameHead(t, "Scan head after keeping 7", head, load(t, s, "a"))
	sameSteps(t, "Scan steps after keeping 7", steps, all)
	olderAre("Scan after keeping 7", older, `0:{"type":"doc"}`, `4:{"v":4}`)

	// The bound 5 has the snapshot at 4 below it: pruning stops there.
	snapshot(7, 5)
	head, older, steps = scan("a")
	sameHead(t, "Scan head after pruning", head, load(t, s, "a"))
	sameSteps(t, "Scan steps after pruning", steps, all[4:])
	olderAre("Scan after pruning", older, `4:{"v":4}`, `6:{"v":6}`)

	// Pruning up to 6, a snapshot, keeps that one and the later ones.
	snapshot(8, 4)
	head, older, steps = scan("a")
	sameHead(t, "Scan head after pruning to a snapshot", head, load(t, s, "a"))
	sameSteps(t, "Scan steps after pruning to a snapshot", steps, all[6:])
	olderAre("Scan after pruning to a snapshot", older, `6:{"v":6}`, `7:{"v":7}`)
	snapshot(9, 4)
	_, older, _ = scan("a")
	olderAre("Scan after another snapshot", older, `6:{"v":6}`, `7:{"v":7}`, `8:{"v":8}`)
	snapshot(10, 0)
	_, older, steps = scan("a")
	olderAre("Scan after pruning everything", older)
	sameSteps(t, "Scan steps after pruning everything", steps, nil)

	// A checkpoint's document is not a snapshot to Scan.
	if err := s.AddCheckpoint(ctx, "b", store.Checkpoint{Name: "c", Version: 1, Doc: []byte(`{"cp":1}`)}); err != nil {
		t.Fatal(err)
	}
	_, older, _ = scan("b")
	olderAre("Scan of a document with a checkpoint", older)

	// fn's error is Scan's; breaking off the iteration is allowed.
	stop := errors.New("stop")
	err := sc.Scan(ctx, "b", func(_ store.Head, _ []store.Snapshot, it iter.Seq2[store.Step, error]) error {
		for range it {
			break
		}
		return stop
	})
	if !errors.Is(err, stop) {
		t.Errorf("Scan returning fn's error: %v", err)
	}
	if err := sc.Scan(ctx, "nope", func(store.Head, []store.Snapshot, iter.Seq2[store.Step, error]) error { return nil }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Scan of an unknown document: %v, want ErrNotFound", err)
	}
}
