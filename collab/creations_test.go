package collab_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestMaxDocuments: the store's documents, counted at the first creation,
// then the creations and deletions, are bounded by Config.MaxDocuments;
// a creation over it fails with ErrTooManyDocuments and creates nothing.
func TestMaxDocuments(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	a0 := newAuthority(t, st, collab.Config{})
	mustGet(t, a0, "old") // a document already in the store
	a := newAuthority(t, st, collab.Config{Limits: collab.Limits{MaxDocuments: 3}})
	if _, err := a.Create(ctx, "made", "basic", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, "used", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	_, err := a.Get(ctx, "fourth", "10.0.0.2")
	if !errors.Is(err, collab.ErrTooManyDocuments) {
		t.Fatalf("a fourth document: %v, want ErrTooManyDocuments", err)
	}
	if _, err := a.Create(ctx, "fourth", "basic", nil); !errors.Is(err, collab.ErrTooManyDocuments) {
		t.Fatalf("Create of a fourth document: %v, want ErrTooManyDocuments", err)
	}
	if ok, _ := a.Exists(ctx, "fourth"); ok {
		t.Fatal("a refused document was created")
	}
	if n, counted := a.DocumentCount(); n != 3 || !counted {
		t.Fatalf("DocumentCount() = %d, %v; want 3, true", n, counted)
	}
	if err := a.Delete(ctx, "made"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, "fourth", "10.0.0.2"); err != nil {
		t.Fatalf("after a deletion: %v", err)
	}
	// Using a document that exists creates nothing and is not counted.
	if _, err := a.Get(ctx, "old", "10.0.0.2"); err != nil {
		t.Fatal(err)
	}
}

// TestMaxCreatesPerHour: one user may create Config.MaxCreatesPerHour
// documents by using them, at once or over an hour; over it the request
// fails with a *RateError whose RetryAfter says when one more is allowed,
// other users are not concerned, and documents that exist are used as
// before.
func TestMaxCreatesPerHour(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	a := newAuthority(t, nil, collab.Config{Now: clk.Now, Limits: collab.Limits{MaxCreatesPerHour: 2}})
	for _, id := range []string{"a", "b"} {
		if _, err := a.Get(ctx, id, "10.0.0.1"); err != nil {
			t.Fatal(err)
		}
	}
	_, err := a.Events(ctx, "c", "10.0.0.1", 0, 0)
	var re *collab.RateError
	if !errors.As(err, &re) || re.RetryAfter != 30*time.Minute {
		t.Fatalf("a third document in the hour: %v, want a *RateError with RetryAfter 30m", err)
	}
	if ok, _ := a.Exists(ctx, "c"); ok {
		t.Fatal("a refused document was created")
	}
	if _, err := a.Get(ctx, "a", "10.0.0.1"); err != nil {
		t.Fatalf("a document that exists: %v", err)
	}
	if _, err := a.Get(ctx, "c", "10.0.0.2"); err != nil {
		t.Fatalf("another user: %v", err)
	}
	clk.Advance(30 * time.Minute)
	if _, err := a.Submit(ctx, "d", "10.0.0.1", collab.Submission{}); err != nil {
		t.Fatalf("after half an hour: %v", err)
	}
}

// TestMaxClientDocuments: one user creates at most its share of the
// documents (Config.MaxClientDocuments), by using them or with CreateFor;
// beyond it its creations fail with ErrTooManyDocuments naming the limit,
// for it alone; a deletion gives its creator's place back. CreateFor also
// counts against MaxCreatesPerHour; Create counts against neither.
func TestMaxClientDocuments(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{Limits: collab.Limits{MaxDocuments: 10, MaxClientDocuments: 2, MaxCreatesPerHour: 3}})
	if _, err := a.Get(ctx, "a", "mallory"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateFor(ctx, "b", "mallory", "", nil); err != nil {
		t.Fatal(err)
	}
	over := func(err error) bool {
		return errors.Is(err, collab.ErrTooManyDocuments) && strings.Contains(err.Error(), "Limits.MaxClientDocuments")
	}
	if _, err := a.CreateFor(ctx, "c", "mallory", "", nil); !over(err) {
		t.Fatalf("a third document of one client (CreateFor): %v", err)
	}
	if _, err := a.Get(ctx, "c", "mallory"); !over(err) {
		t.Fatalf("a third document of one client (Get): %v", err)
	}
	if ok, _ := a.Exists(ctx, "c"); ok {
		t.Fatal("a refused document was created")
	}
	// A failed creation (the id is taken) takes no place.
	if _, err := a.CreateFor(ctx, "a", "alice", "", nil); !errors.Is(err, collab.ErrExists) {
		t.Fatalf("CreateFor of an existing id: %v", err)
	}
	for _, id := range []string{"c", "d"} {
		if _, err := a.CreateFor(ctx, id, "alice", "", nil); err != nil {
			t.Fatalf("another client's document %s: %v", id, err)
		}
	}
	if err := a.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateFor(ctx, "e", "mallory", "", nil); err != nil {
		t.Fatalf("after a deletion of one of its documents: %v", err)
	}
	// Create is the server's own: no share, no rate.
	for _, id := range []string{"f", "g", "h"} {
		if _, err := a.Create(ctx, id, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	// Mallory has created three in the hour (a, b, e): the fourth, after
	// a deletion, is over MaxCreatesPerHour.
	if err := a.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	var re *collab.RateError
	if _, err := a.CreateFor(ctx, "i", "mallory", "", nil); !errors.As(err, &re) {
		t.Fatalf("a fourth creation in the hour with CreateFor: %v, want a *RateError", err)
	}
}
