package collab_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// shareEnv is an Authority whose memory budget holds four and a half of
// the documents a … f, each of about the same estimate, one, and whose
// share per client is share (in ones).
type shareEnv struct {
	a   *collab.Authority
	one int64
}

func newShareEnv(t *testing.T, share float64) *shareEnv {
	st := memstore.New()
	setup := newAuthority(t, st, collab.Config{})
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		mustSubmit(t, setup, id, collab.Submission{Version: 0, Steps: steps(insert(1, strings.Repeat(id, 10_000)))})
	}
	if err := setup.Close(); err != nil {
		t.Fatal(err)
	}
	probe := newAuthority(t, st, collab.Config{})
	mustGet(t, probe, "a")
	e := &shareEnv{one: probe.MemoryInUse()}
	maxClient := int64(share * float64(e.one))
	if share < 0 {
		maxClient = -1
	}
	e.a = newAuthority(t, st, collab.Config{IdleUnload: -1, Limits: collab.Limits{MaxMemory: 4*e.one + e.one/2, MaxClientMemory: maxClient}})
	return e
}

// wait keeps id in use by user with a waiting Events call until the test
// ends, once it waits; it returns the error of a call that failed at once.
func (e *shareEnv) wait(t *testing.T, id, user string) error {
	ctx, cancel := context.WithCancel(context.Background())
	st := mustGet(t, e.a, id)
	failed := make(chan error, 1)
	go func() {
		_, err := nextEvents(ctx, e.a, id, user, st.Version, st.CommentVersion)
		failed <- err
	}()
	t.Cleanup(func() { cancel(); <-failed })
	for e.a.Waiting(id) == 0 {
		select {
		case err := <-failed:
			failed <- err // for the cleanup
			return err
		default:
		}
	}
	return nil
}

// overShare reports whether err is the refusal of a client over its
// share of the budget.
func overShare(err error) bool {
	return errors.Is(err, collab.ErrOverloaded) && strings.Contains(err.Error(), "Limits.MaxClientMemory")
}

// TestClientMemoryShare: one client keeping documents in use with waiting
// Events calls holds at most its share (Config.MaxClientMemory) of the
// memory budget: beyond it its own Events, Get and Hold fail with an error
// matching ErrOverloaded that names the limit, while another client goes
// on loading and editing documents. Without a share the same client keeps
// the whole budget in use and the other client's load fails.
func TestClientMemoryShare(t *testing.T) {
	ctx := context.Background()
	e := newShareEnv(t, 2.5)
	for _, id := range []string{"a", "b"} {
		if err := e.wait(t, id, "mallory"); err != nil {
			t.Fatalf("mallory's wait on %s, within its share: %v", id, err)
		}
	}
	if err := e.wait(t, "c", "mallory"); !overShare(err) {
		t.Fatalf("mallory's third wait, over its share: %v", err)
	}
	if _, err := e.a.Get(ctx, "c", "mallory"); !overShare(err) {
		t.Fatalf("mallory's Get of a third document: %v", err)
	}
	if _, err := e.a.Hold(ctx, "d", "mallory"); !overShare(err) {
		t.Fatalf("mallory's Hold of a third document: %v", err)
	}
	// Alice loads and edits the documents that the budget has room for.
	for _, id := range []string{"c", "d", "e"} {
		if _, err := e.a.Get(ctx, id, "alice"); err != nil {
			t.Fatalf("alice's Get of %s: %v", id, err)
		}
	}
	if _, err := e.a.Submit(ctx, "e", "alice", collab.Submission{Version: 1, Steps: steps(insert(1, "!")), ClientID: collab.ClientID("2")}); err != nil {
		t.Fatalf("alice's submission: %v", err)
	}
	// Mallory's documents in use count for alice too when she uses them.
	if _, err := e.a.Hold(ctx, "a", "alice"); err != nil {
		t.Fatalf("alice's Hold of mallory's document: %v", err)
	}
	// A document that alice loaded is over mallory's share as well.
	if loaded, _ := e.a.Loaded("e"); !loaded {
		t.Fatal("e is not loaded")
	}
	if _, err := e.a.Get(ctx, "e", "mallory"); !overShare(err) {
		t.Fatalf("mallory's Get of a document loaded by alice: %v", err)
	}

	// Without a share, mallory keeps four documents in use and alice
	// cannot load a fifth.
	e = newShareEnv(t, -1)
	for _, id := range []string{"a", "b", "c", "d"} {
		if err := e.wait(t, id, "mallory"); err != nil {
			t.Fatalf("without a share, mallory's wait on %s: %v", id, err)
		}
	}
	if _, err := e.a.Get(ctx, "e", "alice"); !errors.Is(err, collab.ErrOverloaded) || overShare(err) {
		t.Fatalf("without a share, alice's Get of a fifth document: %v, want the budget's refusal", err)
	}
}

// TestClientMemoryShareHold: Hold keeps a document in use by its client
// until released; the share refuses a client's first use of a document
// only when the client uses another one, so that one document the budget
// takes is always usable; a submission that grows a document over the
// client's share is refused and changes nothing.
func TestClientMemoryShareHold(t *testing.T) {
	ctx := context.Background()
	e := newShareEnv(t, 0.5) // less than one document
	release, err := e.a.Hold(ctx, "a", "mallory")
	if err != nil {
		t.Fatalf("Hold of one document larger than the share: %v", err)
	}
	if _, err := e.a.Hold(ctx, "b", "mallory"); !overShare(err) {
		t.Fatalf("Hold of a second document: %v", err)
	}
	if _, err := e.a.Get(ctx, "a", "mallory"); err != nil {
		t.Fatalf("Get of the document held: %v", err)
	}
	release()
	release() // a second call does nothing
	if _, err := e.a.Get(ctx, "b", "mallory"); err != nil {
		t.Fatalf("Get of another document once released: %v", err)
	}

	e = newShareEnv(t, 2.5)
	if _, err := e.a.Hold(ctx, "a", "mallory"); err != nil {
		t.Fatal(err)
	}
	before := mustGet(t, e.a, "b")
	grow := collab.Submission{Version: 1, Steps: steps(insert(1, strings.Repeat("x", 8_000))), ClientID: collab.ClientID("3")}
	if _, err := e.a.Submit(ctx, "b", "mallory", grow); !overShare(err) {
		t.Fatalf("a submission growing a second document over the share: %v", err)
	}
	if after := mustGet(t, e.a, "b"); after.Version != before.Version || string(after.DocJSON) != string(before.DocJSON) {
		t.Fatalf("the refused submission changed the document: version %d", after.Version)
	}
	if _, err := e.a.Submit(ctx, "b", "alice", grow); err != nil {
		t.Fatalf("the same submission by another client: %v", err)
	}
}
