package collab_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/testutil"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// lookupSchema serves the built-in schemas.
func lookupSchema(name string) (*model.Schema, bool) {
	s, err := schemas.Get(name)
	return s, err == nil
}

// clock is a settable time for Config.Now.
type clock = testutil.FakeClock

func newClock() *clock { return testutil.NewFakeClock(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) }

// newAuthority returns an Authority over st (a new memstore when nil) with
// AutoCreate on, the basic schema and cfg's other fields, closed at the
// end of the test.
func newAuthority(t testing.TB, st store.Store, cfg collab.Config) *collab.Authority {
	t.Helper()
	if st == nil {
		st = memstore.New()
	}
	cfg.Store = st
	cfg.Schemas = lookupSchema
	cfg.AutoCreate = true
	a, err := collab.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// insert is a step inserting text at pos.
func insert(pos int, text string) []byte {
	return fmt.Appendf(nil, `{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"text","text":%q}]}}`, pos, pos, text)
}

// del is a step deleting from..to.
func del(from, to int) []byte {
	return fmt.Appendf(nil, `{"stepType":"replace","from":%d,"to":%d}`, from, to)
}

// paragraph is the JSON of a basic doc holding one paragraph of text.
func paragraph(text string) string {
	if text == "" {
		return `{"type":"doc","content":[{"type":"paragraph"}]}`
	}
	return fmt.Sprintf(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":%q}]}]}`, text)
}

// steps makes a list of steps.
func steps(s ...[]byte) [][]byte { return s }

// mustGet returns the state of id.
func mustGet(t testing.TB, a *collab.Authority, id string) collab.State {
	t.Helper()
	st, err := a.Get(context.Background(), id, "")
	if err != nil {
		t.Fatalf("Get(%q): %v", id, err)
	}
	return st
}

// mustSubmit submits and fails the test on an error.
func mustSubmit(t *testing.T, a *collab.Authority, id string, s collab.Submission) collab.Result {
	t.Helper()
	if s.ClientID == nil {
		s.ClientID = collab.ClientID("1")
	}
	r, err := a.Submit(context.Background(), id, "", s)
	if err != nil {
		t.Fatalf("Submit(%q, version %d): %v", id, s.Version, err)
	}
	return r
}

// faultStore is a store whose Append fails on demand, before or after
// doing its work, or waits to be let go.
type faultStore struct {
	store.Store
	failAppend atomic.Bool // fail without appending
	lostAck    atomic.Bool // append, then report a failure
	failSnap   atomic.Bool
	failLoad   atomic.Bool
	loadFails  atomic.Int64 // Loads failed by failLoad
	appends    atomic.Int64
	snapshots  atomic.Int64
	lastSnapAt atomic.Int64
	// With gate set, Append sends on gate when it starts and then waits
	// until it receives from gate, or until ungated is closed.
	gate, ungated chan struct{}
}

var errInjected = errors.New("injected failure")

func (s *faultStore) Append(ctx context.Context, id string, base int64, steps []store.Step, meta []byte) error {
	if s.gate != nil {
		select {
		case s.gate <- struct{}{}:
			select {
			case <-s.gate:
			case <-s.ungated:
			}
		case <-s.ungated:
		}
	}
	if s.failAppend.Load() {
		return errInjected
	}
	if err := s.Store.Append(ctx, id, base, steps, meta); err != nil {
		return err
	}
	s.appends.Add(1)
	if s.lostAck.Load() {
		return errInjected
	}
	return nil
}

func (s *faultStore) Load(ctx context.Context, id string) (store.Head, error) {
	if s.failLoad.Load() {
		s.loadFails.Add(1)
		return store.Head{}, errInjected
	}
	return s.Store.Load(ctx, id)
}

func (s *faultStore) SaveSnapshot(ctx context.Context, id string, snap store.Snapshot, keep int64) error {
	if s.failSnap.Load() {
		return errInjected
	}
	if err := s.Store.SaveSnapshot(ctx, id, snap, keep); err != nil {
		return err
	}
	s.snapshots.Add(1)
	s.lastSnapAt.Store(snap.Version)
	return nil
}

// nextEvents returns the events of id after version and commentVersion
// as a long poll of user does: at once when there are steps or comment
// events after them, else once some come or, for a user, once the user
// count changes.
func nextEvents(ctx context.Context, a *collab.Authority, id, user string, version, commentVersion int64) (collab.Events, error) {
	sub, err := a.Subscribe(ctx, id, user, version, commentVersion)
	if err != nil {
		return collab.Events{}, err
	}
	defer sub.Close()
	for {
		ev, err := sub.Next(ctx)
		if err != nil || user != "" || len(ev.Steps) > 0 || len(ev.Comment) > 0 {
			return ev, err
		}
	}
}
