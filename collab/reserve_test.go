package collab_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestReservation: a Reservation counts in MemoryInUse and the budget;
// growing it unloads the least recently used idle document when the
// budget needs room, and is refused with ErrOverloaded, unchanged, when
// the documents are in use; Release gives everything back.
func TestReservation(t *testing.T) {
	e := newBudgetEnv(t, 3)
	for _, id := range []string{"a", "b", "c"} {
		if err := e.get(id); err != nil {
			t.Fatal(err)
		}
	}
	used := e.a.MemoryInUse()
	r := e.a.Reserve("a test")
	if err := r.Resize(e.one / 2); err != nil {
		t.Fatalf("half a document within the budget: %v", err)
	}
	if e.a.MemoryInUse() != used+e.one/2 || e.a.ReservedMemory() != e.one/2 || r.Size() != e.one/2 {
		t.Fatalf("in use %d, reserved %d, size %d; want %d, %d, %d", e.a.MemoryInUse(), e.a.ReservedMemory(), r.Size(), used+e.one/2, e.one/2, e.one/2)
	}
	if err := r.Grow(e.one / 2); err != nil {
		t.Fatalf("a document more: %v", err)
	}
	if !slices.Equal(e.unloaded, []string{"a"}) {
		t.Fatalf("unloaded %v, want [a] (the least recently used)", e.unloaded)
	}
	// b and c in use: no room for more.
	e.hold(t, "b")
	e.hold(t, "c")
	before := r.Size()
	err := r.Grow(2 * e.one)
	if !errors.Is(err, collab.ErrOverloaded) || !strings.Contains(err.Error(), "a test") || !strings.Contains(err.Error(), "Limits.MaxMemory") {
		t.Fatalf("growing over the budget: %v, want ErrOverloaded naming the read and Limits.MaxMemory", err)
	}
	if r.Size() != before || e.a.ReservedMemory() != before {
		t.Fatalf("a refused Grow changed the reservation: %d, reserved %d; want %d", r.Size(), e.a.ReservedMemory(), before)
	}
	// The documents in use cannot be loaded while the reservation holds
	// their room.
	if err := e.get("d"); !errors.Is(err, collab.ErrOverloaded) {
		t.Fatalf("loading d while the budget is reserved: %v, want ErrOverloaded", err)
	}
	r.Release()
	if e.a.ReservedMemory() != 0 || r.Size() != 0 {
		t.Fatalf("after Release: reserved %d, size %d", e.a.ReservedMemory(), r.Size())
	}
	if err := e.get("d"); err != nil {
		t.Fatalf("loading d after the release: %v", err)
	}
}

// partStore is a store that records the most bytes of steps one call of
// Steps returned.
type partStore struct {
	*memstore.Store
	mu   sync.Mutex
	most int64
}

func (s *partStore) Steps(ctx context.Context, id string, from, to int64) ([]store.Step, error) {
	steps, err := s.Store.Steps(ctx, id, from, to)
	n := int64(0)
	for _, st := range steps {
		n += int64(len(st.JSON) + len(st.ClientID) + len(st.Author))
	}
	s.mu.Lock()
	s.most = max(s.most, n)
	s.mu.Unlock()
	return steps, err
}

func (s *partStore) reset() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.most
	s.most = 0
	return n
}

// noSizer hides the store's StepSizer.
type noSizer struct{ *partStore }

func (s noSizer) StepSizes() {} // not the interface's method: hides it

// hugeSteps stores id with n steps that each replace its text with size
// characters (a letter of its own), by "author-i", and returns the store.
func hugeSteps(t *testing.T, id string, n, size int) *partStore {
	t.Helper()
	st := &partStore{Store: memstore.New()}
	a := newAuthority(t, st, collab.Config{SnapshotEvery: 1000, KeepSteps: -1, Limits: collab.Limits{Limits: apply.Limits{MaxDocBytes: int64(2 * size)}, MaxDocMemory: 1 << 40}})
	mustGet(t, a, id)
	for i := range n {
		step := fmt.Sprintf(`{"stepType":"replace","from":1,"to":%d,"slice":{"content":[{"type":"text","text":"%s"}]}}`,
			1+min(i, 1)*size, strings.Repeat(string(rune('a'+i%26)), size))
		// One client id per author: client ids belong to their principal.
		mustSubmit(t, a, id, collab.Submission{Version: int64(i), Steps: [][]byte{[]byte(step)}, ClientID: collab.ClientID(fmt.Sprint(i + 1)), Author: fmt.Sprintf("author-%d", i)})
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	st.reset()
	return st
}

// TestStepLogBytes: a page of StepLog stops before the step that would
// take it over maxBytes, but always has its first step; the page's steps
// are held in the caller's Reservation until it releases it.
func TestStepLogBytes(t *testing.T) {
	const size = 100_000
	st := hugeSteps(t, "d", 6, size)
	a := newAuthority(t, st, collab.Config{AutoCreate: false})
	ctx := context.Background()
	for _, tt := range []struct {
		from     int64
		maxBytes int64
		want     int
	}{
		{0, 3*size + 1000, 3},
		{0, 1, 1}, // the first however large
		{4, 10 * size, 2},
		{6, 1, 0},
		{0, 0, 6}, // 0: 4 MiB
	} {
		r := a.Reserve("a page")
		page, err := a.StepLog(ctx, "d", tt.from, 100, tt.maxBytes, r)
		if err != nil {
			t.Fatalf("StepLog(%d, bytes %d): %v", tt.from, tt.maxBytes, err)
		}
		if len(page.Steps) != tt.want || page.Version != 6 {
			t.Errorf("StepLog(%d, bytes %d): %d steps, version %d; want %d, 6", tt.from, tt.maxBytes, len(page.Steps), page.Version, tt.want)
		}
		for i, s := range page.Steps {
			if s.Version != tt.from+int64(i)+1 || s.Author != fmt.Sprintf("author-%d", s.Version-1) {
				t.Errorf("StepLog(%d): step %d is %d by %q", tt.from, i, s.Version, s.Author)
			}
		}
		if held := a.ReservedMemory(); held < int64(len(page.Steps))*size || held != r.Size() {
			t.Errorf("StepLog(%d, bytes %d): %d bytes reserved (the reservation %d) for %d steps of %d", tt.from, tt.maxBytes, held, r.Size(), len(page.Steps), size)
		}
		r.Release()
		if held := a.ReservedMemory(); held != 0 {
			t.Fatalf("%d bytes reserved after the release", held)
		}
	}
}

// TestReadsInParts: DocAt, Authors and StepLog read a step log of 12
// steps of 1 MB in parts of at most 4 MiB (from a store that cannot tell
// sizes: 16 steps), hold nothing once done, and answer as reading it
// whole does.
func TestReadsInParts(t *testing.T) {
	const size = 1_000_000
	st := hugeSteps(t, "d", 12, size)
	ctx := context.Background()
	for _, sizes := range []bool{true, false} {
		var s store.Store = st
		if !sizes {
			s = noSizer{st}
		}
		if _, ok := s.(store.StepSizer); ok != sizes {
			t.Fatalf("the store is a StepSizer: %v, want %v", ok, sizes)
		}
		a := newAuthority(t, s, collab.Config{AutoCreate: false, Limits: collab.Limits{Limits: apply.Limits{MaxDocBytes: int64(2 * size)}, MaxDocMemory: 1 << 40}})
		node, err := a.DocAt(ctx, "d", 12)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := node.Content.Size(), size+2; got != want {
			t.Errorf("DocAt(12): size %d, want %d", got, want)
		}
		au, err := a.Authors(ctx, "d")
		if err != nil {
			t.Fatal(err)
		}
		if len(au.Ranges) != 3 || au.Ranges[1].Version != 12 || au.Ranges[1].Author != "author-11" || au.Ranges[1].To-au.Ranges[1].From != size {
			t.Errorf("Authors: %+v", au.Ranges)
		}
		page, err := a.StepLog(ctx, "d", 0, 1000, 0, nil)
		if err != nil || len(page.Steps) != 4 {
			t.Fatalf("StepLog: %d steps, %v; want 4 (4 MiB)", len(page.Steps), err)
		}
		most := st.reset()
		limit := int64(4 << 20)
		if !sizes {
			limit = 16 * (size + 100)
		}
		if most > limit || most < size {
			t.Errorf("StepSizer %v: one read of the store returned %d bytes of steps, want at most %d", sizes, most, limit)
		}
		if held := a.ReservedMemory(); held != 0 {
			t.Errorf("%d bytes still reserved after the reads", held)
		}
	}
}

// TestReadsOverBudget: a read whose steps do not fit in the memory budget
// is refused with ErrOverloaded and holds nothing after; with room it
// succeeds.
func TestReadsOverBudget(t *testing.T) {
	const size = 1_000_000
	st := hugeSteps(t, "d", 4, size)
	ctx := context.Background()
	a := newAuthority(t, st, collab.Config{AutoCreate: false, Limits: collab.Limits{Limits: apply.Limits{MaxDocBytes: int64(2 * size)}, MaxMemory: 3 * size / 2, MaxDocMemory: 6 * size / 5}})
	if _, err := a.StepLog(ctx, "d", 0, 10, 0, nil); !errors.Is(err, collab.ErrOverloaded) || !strings.Contains(err.Error(), `the steps of "d" after 0`) {
		t.Errorf("StepLog over the budget: %v, want ErrOverloaded naming the read", err)
	}
	if _, err := a.DocAt(ctx, "d", 3); !errors.Is(err, collab.ErrOverloaded) {
		t.Errorf("DocAt over the budget: %v, want ErrOverloaded", err)
	}
	if _, err := a.Authors(ctx, "d"); !errors.Is(err, collab.ErrOverloaded) {
		t.Errorf("Authors over the budget: %v, want ErrOverloaded", err)
	}
	if held, used := a.ReservedMemory(), a.MemoryInUse(); held != 0 || used != 0 {
		t.Errorf("after the refusals: %d reserved, %d in use", held, used)
	}
	b := newAuthority(t, st, collab.Config{AutoCreate: false, Limits: collab.Limits{Limits: apply.Limits{MaxDocBytes: int64(2 * size)}, MaxMemory: 40 * size, MaxDocMemory: 4 * size}})
	if _, err := b.StepLog(ctx, "d", 0, 10, 0, nil); err != nil {
		t.Errorf("StepLog within the budget: %v", err)
	}
	if _, err := b.DocAt(ctx, "d", 3); err != nil {
		t.Errorf("DocAt within the budget: %v", err)
	}
	if _, err := b.Authors(ctx, "d"); err != nil {
		t.Errorf("Authors within the budget: %v", err)
	}
}

// TestLoadInBudget: loading a document reads its kept steps in parts
// reserved in the memory budget: one whose steps do not fit is refused
// with ErrOverloaded, and one whose steps alone are over MaxDocMemory with
// a LimitError before all are read; neither holds anything after.
func TestLoadInBudget(t *testing.T) {
	const size = 1_000_000
	st := hugeSteps(t, "d", 8, size)
	ctx := context.Background()
	a := newAuthority(t, st, collab.Config{AutoCreate: false, Limits: collab.Limits{Limits: apply.Limits{MaxDocBytes: int64(2 * size)}, MaxMemory: 3 * size}})
	if _, err := a.Get(ctx, "d", ""); !errors.Is(err, collab.ErrOverloaded) || !strings.Contains(err.Error(), "loading") {
		t.Errorf("loading over the budget: %v, want ErrOverloaded", err)
	}
	st.reset()
	b := newAuthority(t, st, collab.Config{AutoCreate: false, Limits: collab.Limits{Limits: apply.Limits{MaxDocBytes: int64(2 * size)}, MaxMemory: 20 * size, MaxDocMemory: 3 * size}})
	var le *collab.LimitError
	if _, err := b.Get(ctx, "d", ""); !errors.As(err, &le) {
		t.Errorf("loading over MaxDocMemory: %v, want a LimitError", err)
	}
	if most := st.reset(); most > 4<<20 {
		t.Errorf("one read of the store returned %d bytes of steps, want at most 4 MiB", most)
	}
	for _, x := range []*collab.Authority{a, b} {
		if held, used := x.ReservedMemory(), x.MemoryInUse(); held != 0 || used != 0 {
			t.Errorf("after the refused load: %d reserved, %d in use", held, used)
		}
	}
	c := newAuthority(t, st, collab.Config{AutoCreate: false, Limits: collab.Limits{Limits: apply.Limits{MaxDocBytes: int64(2 * size)}, MaxMemory: 40 * size}})
	if _, err := c.Get(ctx, "d", ""); err != nil {
		t.Errorf("loading within the budget: %v", err)
	}
	if held := c.ReservedMemory(); held != 0 {
		t.Errorf("after the load: %d reserved", held)
	}
}
