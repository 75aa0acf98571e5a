package memstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// recorder collects notices.
type recorder struct {
	mu      sync.Mutex
	notices []store.Notice
}

func (r *recorder) add(n store.Notice) {
	r.mu.Lock()
	r.notices = append(r.notices, n)
	r.mu.Unlock()
}

func (r *recorder) got() []store.Notice {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.notices)
}

func step(v int64) store.Step {
	return store.Step{Version: v, JSON: []byte(`{}`), ClientID: []byte(`1`)}
}

func TestNotices(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	var r recorder
	cancel := s.Subscribe(r.add)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Create(ctx, "a", "basic", []byte(`{}`), nil))
	must(s.Append(ctx, "a", 0, []store.Step{step(1), step(2)}, nil))
	must(s.Append(ctx, "a", 2, nil, []byte(`{"c":1}`)))
	// Failures notify nothing.
	if err := s.Append(ctx, "a", 0, []store.Step{step(1)}, nil); err == nil {
		t.Fatal("append at a stale version succeeded")
	}
	if err := s.Create(ctx, "a", "basic", []byte(`{}`), nil); err == nil {
		t.Fatal("second create succeeded")
	}
	// Snapshots change no version: no notice.
	must(s.SaveSnapshot(ctx, "a", store.Snapshot{Version: 2, Doc: []byte(`{}`)}, 0))
	must(s.Delete(ctx, "a"))
	want := []store.Notice{
		{ID: "a", Version: 0},
		{ID: "a", Version: 2},
		{ID: "a", Version: 2, MetaOnly: true},
		{ID: "a", Version: -1},
	}
	if got := r.got(); !slices.Equal(got, want) {
		t.Fatalf("notices %v, want %v", got, want)
	}
	cancel()
	cancel() // twice is fine
	must(s.Create(ctx, "b", "basic", []byte(`{}`), nil))
	if got := r.got(); len(got) != len(want) {
		t.Fatalf("notices after cancel: %v", got[len(want):])
	}
}

// TestNoticesOrder checks that concurrent appends to one document are
// notified in commit order, to every subscriber, and that a subscriber
// may call the store from its callback and from another goroutine.
func TestNoticesOrder(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	if err := s.Create(ctx, "a", "basic", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	var r1, r2 recorder
	defer s.Subscribe(r1.add)()
	// The second subscriber reads the store in its callback, and commits
	// to another document from it.
	defer s.Subscribe(func(n store.Notice) {
		if _, err := s.Load(ctx, n.ID); err != nil && n.Version >= 0 {
			t.Errorf("Load(%q) in the callback: %v", n.ID, err)
		}
		if n.ID == "a" && n.Version == 10 {
			if err := s.Create(ctx, "b", "basic", []byte(`{}`), nil); err != nil {
				t.Errorf("Create in the callback: %v", err)
			}
		}
		r2.add(n)
	})()
	const writers, each = 4, 25
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for done := 0; done < each; {
				h, err := s.Load(ctx, "a")
				if err != nil {
					t.Error(err)
					return
				}
				if err := s.Append(ctx, "a", h.Version, []store.Step{step(h.Version + 1)}, nil); err == nil {
					done++
				}
			}
		})
	}
	wg.Wait()
	var want []store.Notice
	for v := int64(1); v <= writers*each; v++ {
		want = append(want, store.Notice{ID: "a", Version: v})
	}
	got1 := r1.got()
	// b was created after a reached version 10 (by the callback of its
	// notice), while the writers went on.
	b := slices.Index(got1, store.Notice{ID: "b"})
	if b <= slices.Index(got1, store.Notice{ID: "a", Version: 10}) {
		t.Fatalf("b's notice not after a's version 10: %v", got1)
	}
	if onlyA := slices.Delete(slices.Clone(got1), b, b+1); !slices.Equal(onlyA, want) {
		t.Fatalf("first subscriber: %v", fmt.Sprint(got1))
	}
	if got2 := r2.got(); !slices.Equal(got1, got2) {
		t.Fatalf("subscribers disagree:\n%v\n%v", got1, got2)
	}
}
