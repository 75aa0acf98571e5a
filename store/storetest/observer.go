package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/store"
)

// CommitRecorder is a store.CommitObserver that records what it is told.
type CommitRecorder struct {
	mu      sync.Mutex
	commits int
	ops     int
	neg     int // commits with a negative duration
}

// ObserveCommit records one commit.
func (r *CommitRecorder) ObserveCommit(d time.Duration, batch int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commits++
	r.ops += batch
	if d < 0 || batch < 1 {
		r.neg++
	}
}

// Totals returns the commits recorded and the operations they held.
func (r *CommitRecorder) Totals() (commits, ops int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.commits, r.ops
}

// RunCommitObserver appends steps to docs documents from as many
// goroutines at once, each appending n steps one at a time to its own
// document (created first with Create), and checks that rec, the
// store's observer, was told of commits holding every one of those
// operations: docs×n appends, plus the creations when creates counts
// them (a store whose Create is not group-committed does not).
func RunCommitObserver(t *testing.T, s store.Store, rec *CommitRecorder, docs, n int, creates bool) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, docs)
	for i := range docs {
		wg.Go(func() {
			id := fmt.Sprint("observed-", i)
			if err := s.Create(ctx, id, "basic", []byte(`{"type":"doc"}`), nil); err != nil {
				errs <- err
				return
			}
			for v := range n {
				step := []store.Step{{JSON: []byte(`{"stepType":"replace","from":1,"to":1}`), ClientID: []byte(`1`)}}
				if err := s.Append(ctx, id, int64(v), step, nil); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := docs * n
	if creates {
		want += docs
	}
	commits, ops := rec.Totals()
	if ops != want || commits < 1 || commits > ops {
		t.Errorf("observed %d commits of %d operations, want %d operations in at most as many commits", commits, ops, want)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.neg > 0 {
		t.Errorf("%d commits observed with a negative duration or an empty batch", rec.neg)
	}
}
