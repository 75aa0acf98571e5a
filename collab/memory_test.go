package collab_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestMaxDocBytes: a submission of replace steps with from > to, each
// doubling the document, is refused with a LimitError once the JSON would
// go over MaxDocBytes (its content size is within MaxDocSize), and changes
// nothing.
func TestMaxDocBytes(t *testing.T) {
	a := newAuthority(t, nil, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Version: 0, Steps: steps(insert(1, "x"))})
	before := mustGet(t, a, "d")
	_, err := a.Submit(t.Context(), "d", "", collab.Submission{Version: 1, Steps: reqtest.DoublingSteps(23), ClientID: collab.ClientID("1")})
	var le *collab.LimitError
	if !errors.As(err, &le) || le.What != "document bytes (JSON)" || le.Limit != apply.DefaultMaxDocBytes || le.Value != 4194389 {
		t.Fatalf("the doubling steps: %v", err)
	}
	after := mustGet(t, a, "d")
	if after.Version != 1 || string(after.DocJSON) != string(before.DocJSON) {
		t.Fatalf("the refused submission changed the document: version %d, %.100s", after.Version, after.DocJSON)
	}
	// A new document over the limit is refused too.
	small := newAuthority(t, nil, collab.Config{Limits: collab.Limits{Limits: apply.Limits{MaxDocBytes: 50}}})
	doc := mustDoc(t, "basic", reqtest.DoublingDoc)
	if _, err := small.Create(t.Context(), "e", "basic", doc); !errors.As(err, &le) || le.What != "document bytes (JSON)" {
		t.Fatalf("Create over MaxDocBytes: %v", err)
	}
}

// budgetEnv is an Authority with a memory budget over a store holding
// documents a, b, c and d of about the same memory estimate, one.
type budgetEnv struct {
	a        *collab.Authority
	clock    *clock
	one      int64
	unloaded []string
	held     map[string]*atomic.Int64 // the version each holder waits after
}

// newBudgetEnv makes the four documents with an Authority without a
// budget, then returns one whose budget holds n and a half of them.
func newBudgetEnv(t *testing.T, n int64) *budgetEnv {
	st := memstore.New()
	setup := newAuthority(t, st, collab.Config{})
	for _, id := range []string{"a", "b", "c", "d"} {
		mustSubmit(t, setup, id, collab.Submission{Version: 0, Steps: steps(insert(1, strings.Repeat(id, 10_000)))})
	}
	if err := setup.Close(); err != nil {
		t.Fatal(err)
	}
	probe := newAuthority(t, st, collab.Config{})
	mustGet(t, probe, "a")
	e := &budgetEnv{clock: newClock(), one: probe.MemoryInUse()}
	if e.one < 20_000 || e.one > 40_000 {
		t.Fatalf("the estimate of a document of 10,000 characters is %d bytes", e.one)
	}
	e.a = newAuthority(t, st, collab.Config{
		Limits:     collab.Limits{MaxMemory: n*e.one + e.one/2},
		IdleUnload: -1,
		Now:        e.clock.Now,
		OnUnload:   func(id string, _ int64) { e.unloaded = append(e.unloaded, id) },
	})
	return e
}

// get loads id, a second after the previous request.
func (e *budgetEnv) get(id string) error {
	e.clock.Advance(time.Second)
	_, err := e.a.Get(context.Background(), id, "")
	return err
}

// hold keeps id in use with waiting Events calls of a client of its own
// (which its share of the budget does not limit) until the test ends,
// each waiting for the version after the last one's, and returns once
// the first waits.
func (e *budgetEnv) hold(t *testing.T, id string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	st := mustGet(t, e.a, id)
	version := &atomic.Int64{}
	version.Store(st.Version)
	if e.held == nil {
		e.held = map[string]*atomic.Int64{}
	}
	e.held[id] = version
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			ev, err := nextEvents(ctx, e.a, id, "holder-"+id, version.Load(), st.CommentVersion)
			if err == nil && ev.Version > version.Load() {
				version.Store(ev.Version)
			}
		}
	}()
	e.waitHeld(id, st.Version)
}

// waitHeld waits until the holder of id waits for the version after
// version.
func (e *budgetEnv) waitHeld(id string, version int64) {
	for e.held[id].Load() < version || e.a.Waiting(id) == 0 {
		time.Sleep(time.Millisecond)
	}
}

// TestMemoryBudgetLoad: loading a document beyond MaxMemory unloads the
// least recently used idle document first; when every loaded document is
// in use the load is refused with ErrOverloaded, and succeeds once one
// is idle again.
func TestMemoryBudgetLoad(t *testing.T) {
	e := newBudgetEnv(t, 3)
	for _, id := range []string{"a", "b", "c"} {
		if err := e.get(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.get("a"); err != nil { // a is now used more recently than b
		t.Fatal(err)
	}
	if err := e.get("d"); err != nil {
		t.Fatalf("loading d: %v", err)
	}
	if !slices.Equal(e.unloaded, []string{"b"}) {
		t.Fatalf("unloaded %v, want [b] (the least recently used)", e.unloaded)
	}
	if used := e.a.MemoryInUse(); used > 3*e.one+e.one/2 {
		t.Fatalf("%d bytes in use, over the budget", used)
	}
	for _, id := range []string{"a", "c", "d"} {
		e.hold(t, id)
	}
	err := e.get("b")
	if !errors.Is(err, collab.ErrOverloaded) || !strings.Contains(err.Error(), "Limits.MaxMemory") {
		t.Fatalf("loading b with all others in use: %v", err)
	}
	if !slices.Equal(e.unloaded, []string{"b"}) {
		t.Fatalf("unloaded %v, want [b]", e.unloaded)
	}
}

// TestMemoryBudgetSubmit: a submission that would take the documents over
// MaxMemory unloads idle documents first, and is refused with
// ErrOverloaded when there are none left, or with a LimitError when the
// document alone would be over MaxDocMemory; refused submissions change
// nothing.
func TestMemoryBudgetSubmit(t *testing.T) {
	e := newBudgetEnv(t, 4)
	for _, id := range []string{"a", "b", "c", "d"} {
		if err := e.get(id); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"b", "c", "d"} {
		e.hold(t, id)
	}
	// c grows by about two thirds of a document: a, idle, makes room.
	more := strings.Repeat("x", 8_000)
	if _, err := e.a.Submit(t.Context(), "c", "", collab.Submission{Version: 1, Steps: steps(insert(1, more)), ClientID: collab.ClientID("1")}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e.unloaded, []string{"a"}) {
		t.Fatalf("unloaded %v, want [a]", e.unloaded)
	}
	e.waitHeld("c", 2)
	// b grows by more than what is left, with nothing idle.
	_, err := e.a.Submit(t.Context(), "b", "", collab.Submission{Version: 1, Steps: steps(insert(1, more+strings.Repeat("y", 2_000))), ClientID: collab.ClientID("1")})
	if !errors.Is(err, collab.ErrOverloaded) {
		t.Fatalf("growing b with nothing idle: %v", err)
	}
	if st := mustGet(t, e.a, "b"); st.Version != 1 || st.Doc.Content.Size() != 10_002 {
		t.Fatalf("the refused submission changed b: version %d, size %d", st.Version, st.Doc.Content.Size())
	}
	// c alone would be over MaxDocMemory (half the budget).
	_, err = e.a.Submit(t.Context(), "c", "", collab.Submission{Version: 2, Steps: steps(insert(1, strings.Repeat("y", 40_000))), ClientID: collab.ClientID("1")})
	var le *collab.LimitError
	if !errors.As(err, &le) || !strings.Contains(le.What, "document memory") {
		t.Fatalf("c over MaxDocMemory: %v", err)
	}
	if used := e.a.MemoryInUse(); used > 4*e.one+e.one/2 {
		t.Fatalf("%d bytes in use, over the budget", used)
	}
}

// TestMemoryBudgetStored: a stored document that needs more memory than
// MaxDocMemory (written under higher limits) is not loaded: Get fails with
// a LimitError, whether its snapshot is large or the steps after it make
// it large (replace steps with from > to, each doubling it), and nothing
// stays accounted for it.
func TestMemoryBudgetStored(t *testing.T) {
	st := memstore.New()
	old := newAuthority(t, st, collab.Config{SnapshotEvery: 1_000})
	if _, err := old.Create(t.Context(), "large", "basic", mustDoc(t, "basic", paragraph(strings.Repeat("x", 300_000)))); err != nil {
		t.Fatal(err)
	}
	mustSubmit(t, old, "bomb", collab.Submission{Version: 0, Steps: steps(insert(1, "x"))})
	mustSubmit(t, old, "bomb", collab.Submission{Version: 1, Steps: reqtest.DoublingSteps(19)})
	a := newAuthority(t, st, collab.Config{Limits: collab.Limits{MaxMemory: 256 << 10}})
	for _, id := range []string{"large", "bomb"} {
		_, err := a.Get(t.Context(), id, "")
		var le *collab.LimitError
		if !errors.As(err, &le) || !strings.Contains(le.What, "document memory") || le.Limit != 128<<10 {
			t.Fatalf("Get(%q) of a document over MaxDocMemory: %v", id, err)
		}
	}
	if used := a.MemoryInUse(); used != 0 {
		t.Fatalf("%d bytes accounted with no document loaded", used)
	}
	if _, err := a.Get(t.Context(), "small", ""); err != nil {
		t.Fatal(err)
	}
}
