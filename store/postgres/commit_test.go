package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/pmauthority/pmauthority/internal/pgtest"
	"github.com/pmauthority/pmauthority/store"
)

// TestGroupCommit runs batches of Appends as the committer does under
// load: the Appends of a batch commit in one transaction, a stale one
// fails alone, and a statement that fails in the database fails only its
// own Append.
func TestGroupCommit(t *testing.T) {
	s := open(t, pgtest.URL(t))
	defer s.Close()
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c", "e"} {
		if err := s.Create(ctx, id, "basic", []byte(`{}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	step := []store.Step{{JSON: []byte(`{}`), ClientID: []byte(`1`)}}
	run := func(batch ...*appendReq) []error {
		for _, r := range batch {
			r.done = make(chan struct{})
		}
		s.commits.exec(batch)
		errs := make([]error, len(batch))
		for i, r := range batch {
			<-r.done
			errs[i] = r.result(r.err)
		}
		return errs
	}
	errs := run(
		newAppendReq(ctx, "b", 0, step, -1, nil),
		newAppendReq(ctx, "a", 0, step, -1, []byte(`"m"`)),
		newAppendReq(ctx, "c", 3, step, -1, nil), // stale
		newAppendReq(ctx, "a", 1, step, 1, []byte(`"m2"`)),
	)
	for i, want := range []error{nil, nil, store.ErrConflict, nil} {
		if !errors.Is(errs[i], want) || want == nil && errs[i] != nil {
			t.Errorf("append %d of the batch: %v, want %v", i, errs[i], want)
		}
	}
	for id, want := range map[string][2]int64{"a": {2, 2}, "b": {1, 0}, "c": {0, 0}} {
		if h, err := s.Load(ctx, id); err != nil || h.Version != want[0] || h.MetaSeq != want[1] {
			t.Errorf("%s: version %d, metadata %d (%v), want %v", id, h.Version, h.MetaSeq, err, want)
		}
	}
	// One transaction wrote a and b.
	var xa, xb string
	if err := s.pool.QueryRow(ctx, "SELECT (SELECT xmin::text FROM pma_docs WHERE id = 'a'), (SELECT xmin::text FROM pma_docs WHERE id = 'b')").Scan(&xa, &xb); err != nil {
		t.Fatal(err)
	}
	if xa != xb {
		t.Errorf("a and b were written by transactions %s and %s, want one", xa, xb)
	}

	// A stray step at e's next version makes its append fail in the
	// database (the unique key): the batch is rolled back and run again
	// one by one.
	if _, err := s.pool.Exec(ctx, "INSERT INTO pma_steps (doc_id, version, json, author, time) VALUES ($1, 1, '', '', 0)", []byte("e")); err != nil {
		t.Fatal(err)
	}
	errs = run(newAppendReq(ctx, "e", 0, step, -1, nil), newAppendReq(ctx, "b", 1, step, -1, nil))
	if !errors.Is(errs[0], store.ErrConflict) || errs[1] != nil {
		t.Errorf("a batch with a failing statement: %v, %v; want ErrConflict, nil", errs[0], errs[1])
	}
	if h, err := s.Load(ctx, "b"); err != nil || h.Version != 2 {
		t.Errorf("b: version %d (%v), want 2", h.Version, err)
	}
	if h, err := s.Load(ctx, "e"); err != nil || h.Version != 0 {
		t.Errorf("e: version %d (%v), want 0", h.Version, err)
	}

	// A request whose caller gave up before it was sent is not run.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	errs = run(newAppendReq(cctx, "c", 0, step, -1, nil), newAppendReq(ctx, "b", 2, step, -1, nil))
	if !errors.Is(errs[0], context.Canceled) || errs[1] != nil {
		t.Errorf("a batch with a cancelled request: %v, %v; want context.Canceled, nil", errs[0], errs[1])
	}
	if h, err := s.Load(ctx, "c"); err != nil || h.Version != 0 {
		t.Errorf("c: version %d (%v), want 0", h.Version, err)
	}
}

// BenchmarkAppendParallel appends one step at a time to a document of
// each goroutine's own, from many goroutines at once (group commit).
func BenchmarkAppendParallel(b *testing.B) {
	s := open(b, benchURL(b))
	defer s.Close()
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		id := fmt.Sprint("doc", next.Add(1))
		if err := s.Create(ctx, id, "basic", []byte(`{}`), nil); err != nil {
			b.Error(err)
			return
		}
		step := []store.Step{{JSON: []byte(`{"stepType":"replace","from":1,"to":1}`), ClientID: []byte(`1`)}}
		for v := int64(0); pb.Next(); v++ {
			if err := s.Append(ctx, id, v, step, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAppend appends one step at a time to one document, each
// Append waiting for the one before: the latency of a commit.
func BenchmarkAppend(b *testing.B) {
	s := open(b, benchURL(b))
	defer s.Close()
	ctx := context.Background()
	if err := s.Create(ctx, "d", "basic", []byte(`{}`), nil); err != nil {
		b.Fatal(err)
	}
	step := []store.Step{{JSON: []byte(`{"stepType":"replace","from":1,"to":1}`), ClientID: []byte(`1`)}}
	for v := int64(0); b.Loop(); v++ {
		if err := s.Append(ctx, "d", v, step, nil); err != nil {
			b.Fatal(err)
		}
	}
}
