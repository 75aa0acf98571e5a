package collab_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// countingObserver is a collab.Observer that adds up what it is told.
type countingObserver struct {
	steps, docs atomic.Int64
}

func (o *countingObserver) StepsAccepted(n int)       { o.steps.Add(int64(n)) }
func (o *countingObserver) DocumentsLoaded(delta int) { o.docs.Add(int64(delta)) }

// TestObserver follows the steps accepted and the documents loaded
// through submissions (refused ones count no step), loads, a failed
// load, an idle unload, a deletion and Close.
func TestObserver(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	obs := &countingObserver{}
	fs := &faultStore{Store: memstore.New()}
	a, err := collab.New(collab.Config{Store: fs, Schemas: lookupSchema, AutoCreate: true,
		IdleUnload: time.Minute, Now: clk.Now, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, steps, docs int64) {
		t.Helper()
		if s, d := obs.steps.Load(), obs.docs.Load(); s != steps || d != docs {
			t.Errorf("%s: %d steps accepted, %d documents loaded; want %d, %d", what, s, d, steps, docs)
		}
	}
	mustSubmit(t, a, "a", collab.Submission{Steps: steps(insert(1, "x"), insert(2, "y"))})
	check("two steps to a", 2, 1)
	if _, err := a.Submit(ctx, "a", "", collab.Submission{Version: 0, ClientID: collab.ClientID("1"), Steps: steps(insert(1, "z"))}); err == nil {
		t.Fatal("a stale submission was accepted")
	}
	if _, err := a.Submit(ctx, "a", "", collab.Submission{Version: 2, ClientID: collab.ClientID("1"), Steps: steps(insert(99, "z"))}); err == nil {
		t.Fatal("a failing step was accepted")
	}
	mustSubmit(t, a, "a", collab.Submission{Version: 2, Comments: []collab.CommentEvent{{Type: "create", ID: 1, From: 1, To: 2}}})
	check("refusals and comments", 2, 1)
	mustGet(t, a, "b")
	mustGet(t, a, "c")
	check("b and c read", 2, 3)
	fs.failLoad.Store(true)
	if _, err := a.Get(ctx, "d", ""); err == nil {
		t.Fatal("a failing load succeeded")
	}
	fs.failLoad.Store(false)
	check("a failed load", 2, 3)
	clk.Advance(30 * time.Second)
	mustGet(t, a, "a")
	mustGet(t, a, "b")
	clk.Advance(40 * time.Second)
	a.UnloadIdle()
	check("c unloaded", 2, 2)
	if err := a.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	check("b deleted", 2, 1)
	mustSubmit(t, a, "a", collab.Submission{Version: 2, Steps: steps(insert(1, "w"))})
	check("one more step", 3, 1)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed", 3, 0)
}
