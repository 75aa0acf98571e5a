package collab_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// manualNotifier is a store whose notices the test sends: it hides the
// Notifier of the store it wraps.
type manualNotifier struct {
	store.Store
	mu sync.Mutex
	fn func(store.Notice)
}

func (s *manualNotifier) Subscribe(fn func(store.Notice)) func() {
	s.mu.Lock()
	s.fn = fn
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.fn = nil
		s.mu.Unlock()
	}
}

func (s *manualNotifier) send(n store.Notice) {
	s.mu.Lock()
	fn := s.fn
	s.mu.Unlock()
	if fn != nil {
		fn(n)
	}
}

// countingStore counts the Loads and LoadHeads of a store that is a
// Notifier.
type countingStore struct {
	*memstore.Store
	loads, heads atomic.Int64
}

func (s *countingStore) Load(ctx context.Context, id string) (store.Head, error) {
	s.loads.Add(1)
	return s.Store.Load(ctx, id)
}

func (s *countingStore) LoadHead(ctx context.Context, id string) (store.Head, error) {
	s.heads.Add(1)
	return s.Store.LoadHead(ctx, id)
}

// waitEvents waits up to 5 seconds for the events of id after version and
// commentVersion.
func waitEvents(t *testing.T, a *collab.Authority, id string, version, commentVersion int64) (collab.Events, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return nextEvents(ctx, a, id, "", version, commentVersion)
}

// sameSteps fails the test unless got and want hold the same steps, maps
// and sizes.
func sameSteps(t *testing.T, got, want []collab.StepRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d steps, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !bytes.Equal(g.JSON, w.JSON) || !bytes.Equal(g.ClientID, w.ClientID) || g.Map == nil || !reflect.DeepEqual(g.Map, w.Map) || g.Size != w.Size {
			t.Fatalf("step %d: %s %s %v %d, want %s %s %v %d", i, g.JSON, g.ClientID, g.Map, g.Size, w.JSON, w.ClientID, w.Map, w.Size)
		}
	}
}

// sameState fails the test unless a and b have id in the same state.
func sameState(t *testing.T, a, b *collab.Authority, id string) collab.State {
	t.Helper()
	sa, sb := mustGet(t, a, id), mustGet(t, b, id)
	if !bytes.Equal(sa.DocJSON, sb.DocJSON) || sa.Version != sb.Version || sa.CommentVersion != sb.CommentVersion || !equalComments(sa.Comments, sb.Comments) {
		t.Fatalf("authorities disagree:\n%+v\n%+v", sa, sb)
	}
	return sa
}

func TestTwoAuthorities(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	a := newAuthority(t, st, collab.Config{})
	b := newAuthority(t, st, collab.Config{})
	mustGet(t, a, "d")
	mustGet(t, b, "d")

	t.Run("steps", func(t *testing.T) {
		got := make(chan collab.Events, 1)
		go func() {
			ev, err := waitEvents(t, b, "d", 0, 0)
			if err != nil {
				t.Error(err)
			}
			got <- ev
		}()
		waitWaiting(t, b, "d")
		mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello"), del(2, 4)), ClientID: collab.ClientID("7")})
		ev := <-got
		want, err := a.Events(ctx, "d", "", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		sameSteps(t, ev.Steps, want.Steps)
		if ev.Version != 2 || ev.Size != want.Size {
			t.Fatalf("events %+v, want %+v", ev, want)
		}
		sameState(t, a, b, "d")
	})

	t.Run("comments", func(t *testing.T) {
		got := make(chan collab.Events, 1)
		go func() {
			ev, err := waitEvents(t, b, "d", 2, 0)
			if err != nil {
				t.Error(err)
			}
			got <- ev
		}()
		waitWaiting(t, b, "d")
		mustSubmit(t, a, "d", collab.Submission{Version: 2, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 3, From: 1, To: 3, Text: "note"}}})
		ev := <-got
		if len(ev.Steps) != 0 || ev.CommentVersion != 1 || len(ev.Comment) != 1 || ev.Comment[0].Text != "note" {
			t.Fatalf("events %+v", ev)
		}
		sameState(t, a, b, "d")
	})

	t.Run("conflict", func(t *testing.T) {
		start := make(chan struct{})
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, x := range []*collab.Authority{a, b} {
			wg.Go(func() {
				<-start
				_, errs[i] = x.Submit(ctx, "d", "", collab.Submission{Version: 2, Steps: steps(insert(1, string(rune('A'+i)))), ClientID: collab.ClientID("1")})
			})
		}
		close(start)
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("errors %v: want exactly one winner", errs)
		}
		loser := 0
		if errs[1] != nil {
			loser = 1
		}
		if !errors.Is(errs[loser], collab.ErrConflict) {
			t.Fatalf("loser: %v, want ErrConflict", errs[loser])
		}
		winner := []*collab.Authority{a, b}[1-loser]
		want, _ := winner.Events(ctx, "d", "", 2, 1)
		ev, err := waitEvents(t, []*collab.Authority{a, b}[loser], "d", 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		sameSteps(t, ev.Steps, want.Steps)
		sameState(t, a, b, "d")
	})

	t.Run("delete", func(t *testing.T) {
		got := make(chan error, 1)
		go func() {
			_, err := waitEvents(t, b, "d", 3, 1)
			got <- err
		}()
		waitWaiting(t, b, "d")
		if err := a.Delete(ctx, "d"); err != nil {
			t.Fatal(err)
		}
		if err := <-got; !errors.Is(err, collab.ErrNotFound) {
			t.Fatalf("waiting Events on the other authority: %v, want ErrNotFound", err)
		}
	})
}

// waitWaiting waits until an Events call waits on the document id of a.
func waitWaiting(t *testing.T, a *collab.Authority, id string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, refs := a.Loaded(id); refs > 0 {
			return
		}
	}
	t.Fatal("no Events call waits")
}

// TestCatchUp drives the notices of the follower b by hand, so that it is
// behind the store when it submits or when it is told to look.
func TestCatchUp(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	hand := &manualNotifier{Store: mem}
	a := newAuthority(t, mem, collab.Config{})
	b := newAuthority(t, hand, collab.Config{History: 3})
	mustGet(t, b, "d")
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "abc"))})

	// b does not know: its append conflicts in the store, and it catches
	// up at once.
	_, err := b.Submit(ctx, "d", "", collab.Submission{Version: 0, Steps: steps(insert(1, "x")), ClientID: collab.ClientID("2")})
	if !errors.Is(err, collab.ErrConflict) {
		t.Fatalf("Submit behind the store: %v, want ErrConflict", err)
	}
	ev, err := b.Events(ctx, "d", "", 0, 0)
	want, _ := a.Events(ctx, "d", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameSteps(t, ev.Steps, want.Steps)

	// A notice for every document (after missed ones) makes b look.
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Steps: steps(insert(1, "y"), insert(1, "z"))})
	mustSubmit(t, a, "d", collab.Submission{Version: 3, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 1, From: 1, To: 2}}})
	hand.send(store.Notice{})
	ev, err = waitEvents(t, b, "d", 1, 0)
	if err != nil || len(ev.Steps) != 2 || len(ev.Comment) != 1 {
		t.Fatalf("after Notice{}: %+v, %v", ev, err)
	}
	want, _ = a.Events(ctx, "d", "", 1, 0)
	sameSteps(t, ev.Steps, want.Steps)
	sameState(t, a, b, "d")

	// Metadata alone, at the same version.
	mustSubmit(t, a, "d", collab.Submission{Version: 3, Comments: []collab.CommentEvent{{Type: collab.CommentDelete, ID: 1}}})
	hand.send(store.Notice{ID: "d", Version: 3, MetaOnly: true})
	if ev, err := waitEvents(t, b, "d", 3, 1); err != nil || ev.CommentVersion != 2 {
		t.Fatalf("after a MetaOnly notice: %+v, %v", ev, err)
	}

	// Comment events of two writers at one version (b's store does not
	// arbitrate them) are both kept, in the store's order.
	mustSubmit(t, a, "d", collab.Submission{Version: 3, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 5, From: 1, To: 2, Text: "a"}}})
	mustSubmit(t, b, "d", collab.Submission{Version: 3, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 6, From: 1, To: 2, Text: "b"}}})
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if c := mustGet(t, a, "d").Comments; len(c) == 2 && c[0].ID == 5 && c[1].ID == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a has the comments %v, want 5 and 6", mustGet(t, a, "d").Comments)
		}
	}
	hand.send(store.Notice{ID: "d", Version: 3, MetaOnly: true})
	waitSame(t, a, b, "d")

	// Steps pruned from the store: b reloads from the snapshot.
	mustSubmit(t, a, "d", collab.Submission{Version: 3, Steps: steps(insert(1, "1"), insert(1, "2"))})
	s := mustGet(t, a, "d")
	head, err := mem.Load(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	var comments []string
	for _, c := range s.Comments {
		comments = append(comments, string(c.AppendJSON(nil)))
	}
	meta := fmt.Appendf(nil, `{"comments":[%s],"commentVersion":%d,"events":[]}`, strings.Join(comments, ","), s.CommentVersion)
	if err := mem.SaveSnapshot(ctx, "d", store.Snapshot{Version: s.Version, Doc: s.DocJSON, Meta: meta, MetaSeq: head.MetaSeq}, 0); err != nil {
		t.Fatal(err)
	}
	hand.send(store.Notice{ID: "d", Version: s.Version})
	if ev, err := waitEvents(t, b, "d", 3, s.CommentVersion); !errors.Is(err, collab.ErrHistoryGone) {
		t.Fatalf("events after a reload past pruned steps: %+v, %v, want ErrHistoryGone", ev, err)
	}
	sameState(t, a, b, "d")

	// A notice of a document b does not have loaded is ignored; a deleted
	// document is dropped.
	hand.send(store.Notice{ID: "other", Version: 4})
	if loaded, _ := b.Loaded("other"); loaded {
		t.Fatal("a notice loaded a document")
	}
	if err := a.Delete(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	hand.send(store.Notice{ID: "d", Version: -1})
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if loaded, _ := b.Loaded("d"); !loaded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a deleted document stays loaded")
		}
	}
}

// TestOwnNotices checks that the notices of an Authority's own commits
// cost no store reads.
func TestOwnNotices(t *testing.T) {
	st := &countingStore{Store: memstore.New()}
	a := newAuthority(t, st, collab.Config{})
	mustGet(t, a, "d")
	loads, heads := st.loads.Load(), st.heads.Load()
	for v := range int64(50) {
		mustSubmit(t, a, "d", collab.Submission{Version: v, Steps: steps(insert(1, "a"))})
	}
	// Let the notice goroutine handle what is left.
	time.Sleep(20 * time.Millisecond)
	if n := st.loads.Load() - loads + st.heads.Load() - heads; n != 0 {
		t.Fatalf("%d Loads and LoadHeads for 50 own commits, want 0", n)
	}
}

// TestNoticesReadNoDocuments checks that catching up with another
// writer's commits reads the store's head without its snapshot: the
// documents are read once, when the document is loaded.
func TestNoticesReadNoDocuments(t *testing.T) {
	shared := memstore.New()
	a := newAuthority(t, shared, collab.Config{})
	st := &countingStore{Store: shared}
	b := newAuthority(t, st, collab.Config{})
	mustGet(t, a, "d")
	mustGet(t, b, "d")
	loads := st.loads.Load()
	for v := range int64(20) {
		mustSubmit(t, a, "d", collab.Submission{Version: v, Steps: steps(insert(1, "a"))})
		if _, err := waitEvents(t, b, "d", v, 0); err != nil {
			t.Fatalf("b after version %d: %v", v+1, err)
		}
	}
	sameState(t, a, b, "d")
	if n := st.loads.Load() - loads; n != 0 {
		t.Errorf("%d Loads catching up with 20 commits, want 0", n)
	}
	if st.heads.Load() == 0 {
		t.Error("no LoadHead catching up with 20 commits")
	}
}

// TestTwoAuthoritiesConcurrent has two authorities edit one document at
// once, each retrying on conflicts, until both agree.
func TestTwoAuthoritiesConcurrent(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	auths := []*collab.Authority{newAuthority(t, st, collab.Config{}), newAuthority(t, st, collab.Config{})}
	const each = 30
	var wg sync.WaitGroup
	for i, x := range auths {
		for w := range 2 {
			wg.Go(func() {
				for done := 0; done < each; {
					s, err := x.Get(ctx, "d", "")
					if err != nil {
						t.Error(err)
						return
					}
					_, err = x.Submit(ctx, "d", "", collab.Submission{Version: s.Version, Steps: steps(insert(1, "x")), ClientID: collab.ClientID([]byte{'1' + byte(2*i+w)})})
					if err == nil {
						done++
					} else if !errors.Is(err, collab.ErrConflict) {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if mustGet(t, auths[0], "d").Version == 4*each && mustGet(t, auths[1], "d").Version == 4*each {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the authorities did not reach the last version")
		}
	}
	sameState(t, auths[0], auths[1], "d")
	e0, _ := auths[0].Events(ctx, "d", "", 0, 0)
	e1, _ := auths[1].Events(ctx, "d", "", 0, 0)
	sameSteps(t, e0.Steps, e1.Steps)
}

// TestCatchUpUnarbitrated has two writers over a store that is not a
// store.MetaSwapper (manualNotifier hides memstore's AppendIf) make
// comment events each without knowing the other's: the store keeps both
// in its order, and each writer adopts the store's comments when it
// catches up.
func TestCatchUpUnarbitrated(t *testing.T) {
	mem := memstore.New()
	handA, handB := &manualNotifier{Store: mem}, &manualNotifier{Store: mem}
	a := newAuthority(t, handA, collab.Config{})
	b := newAuthority(t, handB, collab.Config{})
	mustGet(t, a, "d")
	mustGet(t, b, "d")
	mustSubmit(t, b, "d", collab.Submission{Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 1, From: 1, To: 2}}})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "ab"))}) // a knows no comments
	handB.send(store.Notice{ID: "d", Version: 1})
	ev, err := waitEvents(t, b, "d", 0, 1)
	if err != nil || len(ev.Steps) != 1 || ev.CommentVersion != 1 {
		t.Fatalf("b's events: %+v, %v", ev, err)
	}
	if s := mustGet(t, b, "d"); !equalComments(s.Comments, []collab.Comment{{ID: 1, From: 3, To: 4}}) {
		t.Fatalf("b's comments %v, want its own mapped through a's step", s.Comments)
	}
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 2, From: 1, To: 3}}})
	handB.send(store.Notice{ID: "d", Version: 1, MetaOnly: true})
	handA.send(store.Notice{ID: "d", Version: 1, MetaOnly: true})
	want := []collab.Comment{{ID: 1, From: 3, To: 4}, {ID: 2, From: 1, To: 3}}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if equalComments(mustGet(t, a, "d").Comments, want) && equalComments(mustGet(t, b, "d").Comments, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a has %v, b %v, want %v", mustGet(t, a, "d").Comments, mustGet(t, b, "d").Comments, want)
		}
	}
	sameState(t, a, b, "d")
}

// waitLoadFails waits up to 5 seconds until fs has failed a Load.
func waitLoadFails(t *testing.T, fs *faultStore) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for fs.loadFails.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no Load failed within 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCatchUpRetried fails the catch-up that a notice starts (the store
// unreachable for a moment): it is tried again after a back-off, and the
// document catches up without another notice.
func TestCatchUpRetried(t *testing.T) {
	mem := memstore.New()
	fs := &faultStore{Store: mem}
	hand := &manualNotifier{Store: fs}
	a := newAuthority(t, mem, collab.Config{})
	b := newAuthority(t, hand, collab.Config{})
	mustGet(t, b, "d")
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "abc")), ClientID: collab.ClientID("3")})
	fs.failLoad.Store(true)
	hand.send(store.Notice{ID: "d", Version: 1})
	waitLoadFails(t, fs)
	fs.failLoad.Store(false)
	ev, err := waitEvents(t, b, "d", 0, 0)
	if err != nil || ev.Version != 1 || len(ev.Steps) != 1 {
		t.Fatalf("b after its catch-up failed and the store came back: %+v, %v; want version 1", ev, err)
	}
	sameState(t, a, b, "d")
}

// TestLostAckCaughtUpLater loses the acknowledgement of an append that
// happened and fails the catch-up after it: the submission fails with
// ErrUnavailable, and the document catches up later by itself (no
// notice comes: a store's notice of the commit would have been taken for
// the append in flight's), showing the steps with their client id.
func TestLostAckCaughtUpLater(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	fs := &faultStore{Store: mem}
	b := newAuthority(t, &manualNotifier{Store: fs}, collab.Config{})
	mustGet(t, b, "d")
	fs.lostAck.Store(true)
	fs.failLoad.Store(true)
	_, err := b.Submit(ctx, "d", "", collab.Submission{Steps: steps(insert(1, "abc")), ClientID: collab.ClientID("5")})
	if !errors.Is(err, collab.ErrUnavailable) {
		t.Fatalf("Submit with its acknowledgement lost: %v, want ErrUnavailable", err)
	}
	if st := mustGet(t, b, "d"); st.Version != 0 {
		t.Fatalf("version %d before the store is back, want 0 (the catch-up failed)", st.Version)
	}
	fs.lostAck.Store(false)
	fs.failLoad.Store(false)
	ev, err := waitEvents(t, b, "d", 0, 0)
	if err != nil || ev.Version != 1 || len(ev.Steps) != 1 || string(ev.Steps[0].ClientID) != "5" {
		t.Fatalf("after the store came back: %+v, %v; want version 1 with client 5's step", ev, err)
	}
}

// slowSteps is a store whose Steps of the document "slow" wait until
// release is closed.
type slowSteps struct {
	*memstore.Store
	release chan struct{}
	waiting chan struct{} // closed when a Steps of "slow" waits
	once    sync.Once
}

func (s *slowSteps) Steps(ctx context.Context, id string, from, to int64) ([]store.Step, error) {
	if id == "slow" {
		s.once.Do(func() { close(s.waiting) })
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Store.Steps(ctx, id, from, to)
}

// TestNoticesSideBySide: a document whose catch-up waits on a slow store
// read holds up no other's.
func TestNoticesSideBySide(t *testing.T) {
	shared := memstore.New()
	a := newAuthority(t, shared, collab.Config{})
	st := &slowSteps{Store: shared, release: make(chan struct{}), waiting: make(chan struct{})}
	b := newAuthority(t, st, collab.Config{})
	for _, id := range []string{"slow", "fast"} {
		mustGet(t, a, id)
		mustGet(t, b, id)
	}
	mustSubmit(t, a, "slow", collab.Submission{Version: 0, Steps: steps(insert(1, "s"))})
	select {
	case <-st.waiting:
	case <-time.After(5 * time.Second):
		t.Fatal("b did not start catching up with slow")
	}
	mustSubmit(t, a, "fast", collab.Submission{Version: 0, Steps: steps(insert(1, "f"))})
	if _, err := waitEvents(t, b, "fast", 0, 0); err != nil {
		t.Fatalf("fast while slow's catch-up waits: %v", err)
	}
	close(st.release)
	if _, err := waitEvents(t, b, "slow", 0, 0); err != nil {
		t.Fatalf("slow once released: %v", err)
	}
}
