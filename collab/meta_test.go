package collab_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// manualSwapper is a store.MetaSwapper whose notices the test sends, and
// that counts the AppendIfs that conflict (or makes all of them conflict).
type manualSwapper struct {
	*manualNotifier
	mem       *memstore.Store
	conflicts atomic.Int64
	refuse    atomic.Bool // every AppendIf fails with ErrConflict
}

func newManualSwapper(mem *memstore.Store) *manualSwapper {
	return &manualSwapper{manualNotifier: &manualNotifier{Store: mem}, mem: mem}
}

func (s *manualSwapper) AppendIf(ctx context.Context, id string, base int64, steps []store.Step, metaSeq int64, meta []byte) error {
	var err error
	if s.refuse.Load() {
		err = store.ErrConflict
	} else {
		err = s.mem.AppendIf(ctx, id, base, steps, metaSeq, meta)
	}
	if errors.Is(err, store.ErrConflict) {
		s.conflicts.Add(1)
	}
	return err
}

// commentIDs returns the ids of comments in order.
func commentIDs(comments []collab.Comment) []int64 {
	ids := make([]int64, len(comments))
	for i, c := range comments {
		ids[i] = c.ID
	}
	return ids
}

// TestMetaConflictRetries has a writer submit comment events (with steps
// and without) on comments that another writer has replaced in the store
// meanwhile: the append conflicts on the metadata alone, and the
// submission is applied again to the latest comments and succeeds.
func TestMetaConflictRetries(t *testing.T) {
	mem := memstore.New()
	hand := newManualSwapper(mem)
	a := newAuthority(t, hand, collab.Config{}) // told of nothing
	b := newAuthority(t, mem, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello")), ClientID: collab.ClientID("1")})
	mustGet(t, b, "d")
	create := func(id int64, from, to int) collab.Submission {
		return collab.Submission{Version: 1, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: id, From: from, To: to, Text: "c"}}}
	}

	mustSubmit(t, b, "d", create(1, 1, 3))
	r := mustSubmit(t, a, "d", create(2, 2, 4))
	if n := hand.conflicts.Load(); n != 1 {
		t.Errorf("%d conflicting AppendIfs, want 1", n)
	}
	if r.Version != 1 || r.CommentVersion != 2 {
		t.Errorf("result %+v, want version 1, comment version 2", r)
	}
	if got := commentIDs(mustGet(t, a, "d").Comments); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("a's comments %v, want [1 2]", got)
	}

	// Steps with a comment: b's comment is mapped through a's steps.
	mustSubmit(t, b, "d", collab.Submission{Version: 1, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 3, From: 4, To: 5}}})
	r = mustSubmit(t, a, "d", collab.Submission{
		Version:  1,
		Steps:    steps(insert(1, "ab")),
		ClientID: collab.ClientID("1"),
		Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 4, From: 1, To: 3}},
	})
	if n := hand.conflicts.Load(); n != 2 {
		t.Errorf("%d conflicting AppendIfs, want 2", n)
	}
	if r.Version != 2 || r.CommentVersion != 4 {
		t.Errorf("result %+v, want version 2, comment version 4", r)
	}
	want := []collab.Comment{{ID: 1, From: 3, To: 5, Text: "c"}, {ID: 2, From: 4, To: 6, Text: "c"}, {ID: 3, From: 6, To: 7}, {ID: 4, From: 1, To: 3}}
	if got := mustGet(t, a, "d").Comments; !equalComments(got, want) {
		t.Errorf("a's comments %+v, want %+v", got, want)
	}
	waitSame(t, a, b, "d")

	// A delete that another writer made first changes nothing.
	mustSubmit(t, b, "d", collab.Submission{Version: 2, Comments: []collab.CommentEvent{{Type: collab.CommentDelete, ID: 3}}})
	before, err := mem.Load(context.Background(), "d")
	if err != nil {
		t.Fatal(err)
	}
	r = mustSubmit(t, a, "d", collab.Submission{Version: 2, Comments: []collab.CommentEvent{{Type: collab.CommentDelete, ID: 3}}})
	if r.Version != 2 || r.CommentVersion != 5 {
		t.Errorf("result %+v, want version 2, comment version 5", r)
	}
	if n := hand.conflicts.Load(); n != 3 {
		t.Errorf("%d conflicting AppendIfs, want 3", n)
	}
	if h, err := mem.Load(context.Background(), "d"); err != nil || h.MetaSeq != before.MetaSeq {
		t.Errorf("the head's MetaSeq %d (%v), want %d: the second delete appends nothing", h.MetaSeq, err, before.MetaSeq)
	}
	waitSame(t, a, b, "d")
}

// TestMetaConflictGivesUp has every AppendIf conflict: Submit tries a
// bounded number of times, then answers ErrConflict.
func TestMetaConflictGivesUp(t *testing.T) {
	hand := newManualSwapper(memstore.New())
	a := newAuthority(t, hand, collab.Config{})
	mustGet(t, a, "d")
	hand.refuse.Store(true)
	_, err := a.Submit(context.Background(), "d", "", collab.Submission{Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 1, From: 0, To: 2}}})
	if !errors.Is(err, collab.ErrConflict) {
		t.Fatalf("Submit: %v, want ErrConflict", err)
	}
	if n := hand.conflicts.Load(); n != 8 {
		t.Errorf("%d AppendIfs, want 8", n)
	}
	hand.refuse.Store(false)
	if s := mustGet(t, a, "d"); len(s.Comments) != 0 || s.CommentVersion != 0 {
		t.Errorf("after the failed Submit: %d comments, comment version %d", len(s.Comments), s.CommentVersion)
	}
}

// waitSame waits up to 5 seconds for a and b to agree on id.
func waitSame(t *testing.T, a, b *collab.Authority, id string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		sa, sb := mustGet(t, a, id), mustGet(t, b, id)
		if sa.Version == sb.Version && sa.CommentVersion == sb.CommentVersion && equalComments(sa.Comments, sb.Comments) {
			break
		}
	}
	sameState(t, a, b, id)
}

// TestTwoAuthoritiesComments has writers on two authorities over one store
// create and delete comments and insert text at once: no comment event is
// lost, a comment-only submission never conflicts unless the version moved
// on, the comment version never goes back in either's Events, and both
// end with the same comments.
func TestTwoAuthoritiesComments(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	auths := []*collab.Authority{newAuthority(t, mem, collab.Config{}), newAuthority(t, mem, collab.Config{})}
	mustSubmit(t, auths[0], "d", collab.Submission{Steps: steps(insert(1, "0123456789")), ClientID: collab.ClientID("1")})
	const writers, rounds = 3, 40
	var (
		mu      sync.Mutex
		created = map[int64]bool{} // by a successful submission
		deleted = map[int64]bool{}
		nextID  atomic.Int64
		wg      sync.WaitGroup
	)

	// The followers read each authority's Events, checking that the
	// versions never go back.
	followCtx, stopFollowing := context.WithCancel(ctx)
	var followers sync.WaitGroup
	for i, a := range auths {
		followers.Go(func() {
			var version, commentVersion int64
			for followCtx.Err() == nil {
				wctx, cancel := context.WithTimeout(followCtx, 50*time.Millisecond)
				ev, err := nextEvents(wctx, a, "d", "", version, commentVersion)
				cancel()
				if err != nil {
					if followCtx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("authority %d: Events after %d, %d: %v", i, version, commentVersion, err)
						return
					}
					continue
				}
				if ev.Version < version || ev.CommentVersion < commentVersion {
					t.Errorf("authority %d: Events went back from %d, %d to %d, %d", i, version, commentVersion, ev.Version, ev.CommentVersion)
					return
				}
				version, commentVersion = ev.Version, ev.CommentVersion
			}
		})
	}

	for i, a := range auths {
		for w := range writers {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(i), uint64(w)))
				var mine []int64 // comments this writer created and did not delete
				for range rounds {
					s, err := a.Get(ctx, "d", "")
					if err != nil {
						t.Error(err)
						return
					}
					sub := collab.Submission{Version: s.Version}
					var created1, deleted1 int64
					switch k := rng.IntN(3); {
					case k == 0:
						sub.Steps, sub.ClientID = steps(insert(1+rng.IntN(3), "x")), collab.ClientID([]byte{'1' + byte(2*i+w)})
					case k == 1 && len(mine) > 0:
						j := rng.IntN(len(mine))
						deleted1 = mine[j]
						mine = append(mine[:j], mine[j+1:]...)
						sub.Comments = []collab.CommentEvent{{Type: collab.CommentDelete, ID: deleted1}}
					default:
						created1 = nextID.Add(1)
						sub.Comments = []collab.CommentEvent{{Type: collab.CommentCreate, ID: created1, From: 2, To: 4, Text: "c"}}
					}
					_, err = a.Submit(ctx, "d", "", sub)
					if errors.Is(err, collab.ErrConflict) {
						if len(sub.Steps) == 0 {
							if now, err := a.Get(ctx, "d", ""); err != nil || now.Version == sub.Version {
								t.Errorf("a comment-only submission at the current version %d conflicted", sub.Version)
							}
						}
						if deleted1 != 0 {
							mine = append(mine, deleted1)
						}
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if created1 != 0 {
						created[created1] = true
						mine = append(mine, created1)
					}
					if deleted1 != 0 {
						deleted[deleted1] = true
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	waitSame(t, auths[0], auths[1], "d")
	stopFollowing()
	followers.Wait()

	final := sameState(t, auths[0], auths[1], "d")
	have := map[int64]bool{}
	for _, c := range final.Comments {
		have[c.ID] = true
		if !created[c.ID] || deleted[c.ID] {
			t.Errorf("comment %d exists: created %v, deleted %v", c.ID, created[c.ID], deleted[c.ID])
		}
	}
	for id := range created {
		if !have[id] && !deleted[id] {
			t.Errorf("comment %d was created and not deleted, and is lost", id)
		}
	}
	if want := int64(len(created) + len(deleted)); final.CommentVersion != want {
		t.Errorf("comment version %d, want %d (%d creates, %d deletes)", final.CommentVersion, want, len(created), len(deleted))
	}
	if len(created) == 0 || len(deleted) == 0 || final.Version < 2 {
		t.Errorf("the writers made %d comments, deleted %d, reached version %d: too few to test anything", len(created), len(deleted), final.Version)
	}
}

// TestMetaConflictSameComment has two writers create a comment with one
// id at one version: the second's append conflicts on the metadata, and
// applied again on the first's comments the create is refused.
func TestMetaConflictSameComment(t *testing.T) {
	mem := memstore.New()
	hand := newManualSwapper(mem)
	a := newAuthority(t, hand, collab.Config{}) // told of nothing
	b := newAuthority(t, mem, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello")), ClientID: collab.ClientID("1")})
	mustGet(t, b, "d")
	create := func(text string) collab.Submission {
		return collab.Submission{Version: 1, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 7, From: 1, To: 3, Text: text}}}
	}
	mustSubmit(t, b, "d", create("b's"))
	_, err := a.Submit(context.Background(), "d", "", create("a's"))
	if !errors.Is(err, collab.ErrInvalidRequest) || hand.conflicts.Load() != 1 {
		t.Fatalf("the second create of comment 7: %v after %d conflicting appends, want ErrInvalidRequest after 1", err, hand.conflicts.Load())
	}
	waitSame(t, a, b, "d")
	if c := mustGet(t, a, "d").Comments; len(c) != 1 || c[0].Text != "b's" {
		t.Errorf("comments %+v, want b's alone", c)
	}
}
