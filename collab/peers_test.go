package collab_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/testutil"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// nodes returns n Authorities over one memory store, connected by bus
// as the nodes of a cluster, with cfg's other fields.
func nodes(t *testing.T, bus *testutil.Bus, n int, cfg collab.Config) ([]*collab.Authority, []store.Store) {
	t.Helper()
	shared := memstore.New()
	var as []*collab.Authority
	var sts []store.Store
	for range n {
		st := bus.Node(shared)
		sts = append(sts, st)
		as = append(as, newAuthority(t, st, cfg))
	}
	return as, sts
}

// eventually fails t unless cond holds within 10 seconds (it is checked
// every millisecond).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
	}
}

// users returns the user count of id on a, counting nobody new.
func users(t *testing.T, a *collab.Authority, id string) int {
	t.Helper()
	return mustGet(t, a, id).Users
}

// longPoll starts an Events call of user on a that waits at the
// document's current versions, and returns the channel of its answer.
func longPoll(t *testing.T, a *collab.Authority, id, user string) <-chan collab.Events {
	t.Helper()
	st := mustGet(t, a, id)
	ch := make(chan collab.Events, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	go func() {
		ev, err := nextEvents(ctx, a, id, user, st.Version, st.CommentVersion)
		if err != nil {
			t.Errorf("Events: %v", err)
		}
		ch <- ev
	}()
	waitWaiting(t, a, id)
	return ch
}

// TestUsersAcrossNodes checks that the users of a document are counted
// over every node: a waiting Events call on one node answers when a user
// comes on another, the same user on two nodes counts once, and List
// counts the users of a document loaded on another node only. (The sets
// go when they change; nothing is refreshed or expires within the
// test's hour.)
func TestUsersAcrossNodes(t *testing.T) {
	bus := new(testutil.Bus)
	as, _ := nodes(t, bus, 3, collab.Config{PeerRefresh: time.Hour})
	a, b, c := as[0], as[1], as[2]
	ctx := context.Background()
	if _, err := a.Events(ctx, "d", "x", 0, 0); err != nil {
		t.Fatal(err)
	}
	poll := longPoll(t, a, "d", "x")
	if _, err := b.Events(ctx, "d", "y", 0, 0); err != nil {
		t.Fatal(err)
	}
	if ev := <-poll; ev.Users != 2 || len(ev.Steps) != 0 {
		t.Fatalf("the waiting Events answered %d users and %d steps, want 2 users and no steps", ev.Users, len(ev.Steps))
	}
	// x on c too: still 2 users, on every node.
	if _, err := c.Events(ctx, "d", "x", 0, 0); err != nil {
		t.Fatal(err)
	}
	for i, n := range as {
		eventually(t, fmt.Sprintf("node %d counts 2 users of d", i), func() bool { return users(t, n, "d") == 2 })
	}
	// A document loaded only on b: its users show in a's list.
	if _, err := b.Events(ctx, "e", "z", 0, 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a lists e with 1 user", func() bool {
		docs, err := a.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if d.ID == "e" {
				return d.Users == 1
			}
		}
		return false
	})
	if loaded, _ := a.Loaded("e"); loaded {
		t.Fatal("List loaded e")
	}
}

// TestUsersNodeDies checks that the users of a node cut off (dead) stop
// counting on the others after the expiry, and that those of a node
// alive do not (it repeats them).
func TestUsersNodeDies(t *testing.T) {
	bus := new(testutil.Bus)
	as, sts := nodes(t, bus, 3, collab.Config{PeerRefresh: 20 * time.Millisecond})
	ctx := context.Background()
	for i, a := range as {
		if _, err := a.Events(ctx, "d", fmt.Sprint("user", i), 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "node 0 counts 3 users", func() bool { return users(t, as[0], "d") == 3 })
	bus.Cut(sts[2].(store.Broadcaster).Node())
	eventually(t, "node 0 counts 2 users", func() bool { return users(t, as[0], "d") == 2 })
	// Many expiries later, node 1's user still counts.
	time.Sleep(200 * time.Millisecond)
	eventually(t, "node 0 counts 2 users", func() bool { return users(t, as[0], "d") == 2 })
}

// TestUsersGoodbye checks that an Authority that closes tells the other
// nodes that its users are gone (without waiting for them to expire:
// nothing is repeated or expires within the test's hour).
func TestUsersGoodbye(t *testing.T) {
	bus := new(testutil.Bus)
	as, _ := nodes(t, bus, 2, collab.Config{PeerRefresh: time.Hour})
	a, b := as[0], as[1]
	ctx := context.Background()
	for i := range 1000 {
		// Enough users for several messages.
		if _, err := b.Events(ctx, "d", fmt.Sprint("user", i), 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Events(ctx, "d", "x", 0, 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a counts 1001 users", func() bool { return users(t, a, "d") == 1001 })
	if n := bus.Sent("users"); n < 3 {
		t.Errorf("1000 users went in %d messages, want several", n)
	}
	poll := longPoll(t, a, "d", "x")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if ev := <-poll; ev.Users != 1 {
		t.Fatalf("after b closed, the waiting Events answered %d users, want 1", ev.Users)
	}
}

// TestUsersOneNode checks that an Authority whose store is no
// store.Broadcaster counts its own users only, and that one whose store
// is one but has no other node counts the same.
func TestUsersOneNode(t *testing.T) {
	bus := new(testutil.Bus)
	for _, st := range []store.Store{memstore.New(), bus.Node(memstore.New())} {
		a := newAuthority(t, st, collab.Config{PeerRefresh: 10 * time.Millisecond})
		ctx := context.Background()
		for _, u := range []string{"x", "y", "x"} {
			if _, err := a.Events(ctx, "d", u, 0, 0); err != nil {
				t.Fatal(err)
			}
		}
		if n := users(t, a, "d"); n != 2 {
			t.Errorf("%T: %d users, want 2", st, n)
		}
	}
}

// TestUsersBadMessages sends malformed users messages from another
// node: none changes the count or fails anything.
func TestUsersBadMessages(t *testing.T) {
	bus := new(testutil.Bus)
	as, _ := nodes(t, bus, 1, collab.Config{PeerRefresh: time.Hour})
	a := as[0]
	other := bus.Node(memstore.New()).(store.Broadcaster)
	if _, err := a.Events(context.Background(), "d", "x", 0, 0); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{
		``, `null`, `[]`, `{"doc":""}`, `{"doc":"d","parts":0}`, `{"doc":"d","part":1,"parts":1,"users":""}`,
		`{"doc":"d","parts":1,"users":"abc"}`, `{"doc":"d","parts":1,"users":"zzzzzzzzzzzzzzzz"}`,
		`{"doc":"d","parts":999,"users":""}`, `{"doc":"d","part":-1,"parts":2,"users":""}`,
		`{"doc":"d","seq":5,"part":1,"parts":2,"users":"0000000000000001"}`, // a part without its start
	} {
		if err := other.Broadcast("users", []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	// A good one after them is heard: the bad ones were dropped, not
	// queued in its way.
	if err := other.Broadcast("users", []byte(`{"doc":"d","seq":9,"part":0,"parts":1,"users":"00000000000000010000000000000002"}`)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a counts x and the good message's 2 users", func() bool { return users(t, a, "d") == 3 })
}
