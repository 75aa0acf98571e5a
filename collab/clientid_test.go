package collab_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// submitAs submits one insertion at version v under client id cid, by
// author for user.
func submitAs(a *collab.Authority, v int64, cid, user, author string) error {
	_, err := a.Submit(context.Background(), "d", user, collab.Submission{
		Version: v, Steps: steps(insert(1, "x")), ClientID: collab.ClientID(cid), Author: author})
	return err
}

// refusedFor checks that err is the *ClientIDError of cid, matching
// ErrForbidden and naming the client id.
func refusedFor(t *testing.T, what string, err error, cid string) {
	t.Helper()
	var ce *collab.ClientIDError
	if !errors.As(err, &ce) || !errors.Is(err, collab.ErrForbidden) || string(ce.ClientID) != cid || !strings.Contains(err.Error(), "client id "+cid+" ") {
		t.Errorf("%s: %v, want the ClientIDError of %s (ErrForbidden)", what, err, cid)
	}
}

// TestClientIDOwner: a client id in use by one principal (or anonymous
// user) is refused for another, and nothing changes; its owner goes on.
func TestClientIDOwner(t *testing.T) {
	a := newAuthority(t, nil, collab.Config{})
	mustGet(t, a, "d")
	if err := submitAs(a, 0, "7", "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	refusedFor(t, "mallory under alice's client id", submitAs(a, 1, "7", "mallory", "mallory"), "7")
	refusedFor(t, "an anonymous client under alice's client id", submitAs(a, 1, "7", "127.0.0.1", ""), "7")
	if st := mustGet(t, a, "d"); st.Version != 1 {
		t.Fatalf("version %d after the refusals, want 1", st.Version)
	}
	if err := submitAs(a, 1, "7", "alice", "alice"); err != nil {
		t.Errorf("alice again: %v", err)
	}
	// Anonymous clients are told apart by their user (address).
	if err := submitAs(a, 2, `"anon"`, "10.0.0.1", ""); err != nil {
		t.Fatal(err)
	}
	refusedFor(t, "another address", submitAs(a, 3, `"anon"`, "10.0.0.2", ""), `"anon"`)
	refusedFor(t, "a principal under an anonymous client's id", submitAs(a, 3, `"anon"`, "bob", "bob"), `"anon"`)
	if err := submitAs(a, 3, `"anon"`, "10.0.0.1", ""); err != nil {
		t.Errorf("the same address again: %v", err)
	}
	// A comment-only submission's client id is unused: not checked.
	if _, err := a.Submit(context.Background(), "d", "mallory", collab.Submission{Version: 4, ClientID: collab.ClientID("7"), Author: "mallory",
		Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 1, From: 1, To: 2, Text: "hi"}}}); err != nil {
		t.Errorf("a comment under alice's client id: %v", err)
	}
	// The server's client id is nobody's.
	refusedFor(t, "a client under the restore client id", submitAs(a, 4, string(collab.RestoreClientID), "alice", "alice"), string(collab.RestoreClientID))
	if _, err := a.Restore(context.Background(), "d", "alice", 0, "alice"); err != nil {
		t.Errorf("a restore: %v", err)
	}
	if _, err := a.Restore(context.Background(), "d", "bob", 1, "bob"); err != nil {
		t.Errorf("another principal's restore: %v", err)
	}
}

// TestClientIDOwnerLasts: a client id stays its principal's while the
// kept history holds a step under it, across a restart (the store keeps
// the steps' authors) and on another Authority sharing the store; then
// it is free. An anonymous client's id read back from the store is any
// anonymous client's (the store keeps no address), never a principal's.
func TestClientIDOwnerLasts(t *testing.T) {
	st := memstore.New()
	cfg := collab.Config{History: 3}
	a := newAuthority(t, st, cfg)
	mustGet(t, a, "d")
	b := newAuthority(t, st, cfg) // another node, which catches up
	mustGet(t, b, "d")
	if err := submitAs(a, 0, "7", "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	if err := submitAs(a, 1, "8", "10.0.0.1", ""); err != nil {
		t.Fatal(err)
	}
	for v := int64(0); v < 2; {
		ev, err := waitEvents(t, b, "d", v, 0)
		if err != nil {
			t.Fatalf("the other node at version %d: %v", v, err)
		}
		v = ev.Version
	}
	refusedFor(t, "another node", submitAs(b, 2, "7", "mallory", "mallory"), "7")
	c := newAuthority(t, st, cfg) // a node that loads the document now
	mustGet(t, c, "d")
	refusedFor(t, "a node loading it", submitAs(c, 2, "7", "mallory", "mallory"), "7")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a = newAuthority(t, st, cfg) // restarted
	mustGet(t, a, "d")
	refusedFor(t, "after a restart", submitAs(a, 2, "7", "mallory", "mallory"), "7")
	refusedFor(t, "a principal under an anonymous id after a restart", submitAs(a, 2, "8", "mallory", "mallory"), "8")
	if err := submitAs(a, 2, "8", "10.0.0.2", ""); err != nil {
		t.Errorf("an anonymous client under a stored anonymous id: %v", err)
	}
	// Now 10.0.0.2's again, in memory.
	refusedFor(t, "another address after it", submitAs(a, 3, "8", "10.0.0.3", ""), "8")
	// Three more steps push alice's out of the kept history: 7 is free.
	for v := int64(3); v < 5; v++ {
		if err := submitAs(a, v, "9", "bob", "bob"); err != nil {
			t.Fatal(err)
		}
	}
	refusedFor(t, "while kept", submitAs(a, 5, "8", "mallory", "mallory"), "8")
	if err := submitAs(a, 5, "9", "bob", "bob"); err != nil {
		t.Fatal(err)
	}
	if err := submitAs(a, 6, "7", "mallory", "mallory"); err != nil {
		t.Errorf("a client id whose steps left the history: %v", err)
	}
}

// TestHoldClientID: a held client id (a WebSocket's hello) is its
// holder's until released, even without steps.
func TestHoldClientID(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{})
	release, err := a.HoldClientID(ctx, "d", "alice", "alice", collab.ClientID("7"))
	if err != nil {
		t.Fatal(err)
	}
	refusedFor(t, "a submission under a held id", submitAs(a, 0, "7", "mallory", "mallory"), "7")
	if _, err := a.HoldClientID(ctx, "d", "mallory", "mallory", collab.ClientID("7")); err == nil {
		t.Error("mallory held alice's client id")
	} else {
		refusedFor(t, "a hold of a held id", err, "7")
	}
	again, err := a.HoldClientID(ctx, "d", "alice", "alice", collab.ClientID("7"))
	if err != nil {
		t.Fatalf("alice's second connection: %v", err)
	}
	if err := submitAs(a, 0, "7", "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	release()
	release() // twice is once
	again()
	// Still alice's: her step is kept.
	refusedFor(t, "after the holds", submitAs(a, 1, "7", "mallory", "mallory"), "7")
	if _, err := a.HoldClientID(ctx, "d", "alice", "alice", collab.ClientID("x")); !errors.Is(err, collab.ErrInvalidRequest) {
		t.Errorf("a hold of an invalid client id: %v, want ErrInvalidRequest", err)
	}
	r, err := a.HoldClientID(ctx, "d", "bob", "bob", collab.ClientID("11"))
	if err != nil {
		t.Fatal(err)
	}
	r()
	if err := submitAs(a, 1, "11", "mallory", "mallory"); err != nil {
		t.Errorf("a released client id without steps: %v", err)
	}
}
