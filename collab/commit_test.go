package collab_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/transform"
)

// commit submits a commit and fails the test on an error.
func commit(t *testing.T, a *collab.Authority, id string, s collab.Submission) collab.Result {
	t.Helper()
	r, err := a.Submit(context.Background(), id, "", s)
	if err != nil {
		t.Fatalf("commit %q at %d: %v", s.Ref, s.Version, err)
	}
	if r.Commit == nil {
		t.Fatalf("commit %q at %d: no Commit in the result %+v", s.Ref, s.Version, r)
	}
	return r
}

// stepsText joins steps' JSON for messages and comparisons.
func stepsText(steps [][]byte) string {
	var b strings.Builder
	for i, s := range steps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.Write(s)
	}
	return b.String()
}

func TestCommitRebase(t *testing.T) {
	a := newAuthority(t, nil, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Version: 0, Steps: steps(insert(1, "hello")), ClientID: collab.ClientID("1")})

	// At the current version a commit is applied as it is.
	r := commit(t, a, "d", collab.Submission{Version: 1, Ref: "a1", ClientID: collab.ClientID("2"), Steps: steps(insert(1, "A"))})
	if r.Version != 2 || r.Commit.From != 1 || stepsText(r.Commit.Steps) != string(insert(1, "A")) || r.Commit.Dropped != nil {
		t.Fatalf("current commit: %+v %+v", r, r.Commit)
	}
	// Made on version 1 too, B's steps are mapped over A's.
	b := collab.Submission{Version: 1, Ref: "b1", ClientID: collab.ClientID("3"), Steps: steps(insert(6, "B"), insert(7, "C"))}
	r = commit(t, a, "d", b)
	want := stepsText(steps(insert(7, "B"), insert(8, "C")))
	if r.Version != 4 || r.Commit.From != 2 || stepsText(r.Commit.Steps) != want || r.Commit.Dropped != nil {
		t.Fatalf("rebased commit: version %d from %d, steps %s, dropped %v; want 4 from 2, %s", r.Version, r.Commit.From, stepsText(r.Commit.Steps), r.Commit.Dropped, want)
	}
	if got := string(mustGet(t, a, "d").DocJSON); got != paragraph("AhelloBC") {
		t.Fatalf("doc %s", got)
	}
	ev, err := a.Events(context.Background(), "d", "", 2, 0)
	if err != nil || len(ev.Steps) != 2 || string(ev.Steps[0].JSON) != string(insert(7, "B")) || string(ev.Steps[0].ClientID) != "3" {
		t.Fatalf("events after 2: %+v, %v", ev, err)
	}

	// Sent again, the commit is answered as it was and applies nothing.
	again := commit(t, a, "d", b)
	if !reflect.DeepEqual(again, r) && !(again.Version == r.Version && reflect.DeepEqual(*again.Commit, *r.Commit)) {
		t.Fatalf("resent: %+v %+v, want %+v %+v", again, again.Commit, r, r.Commit)
	}
	if v := mustGet(t, a, "d").Version; v != 4 {
		t.Fatalf("version %d after a resend, want 4", v)
	}
	// The same ref with other steps is refused.
	other := b
	other.Steps = steps(insert(6, "X"))
	if _, err := a.Submit(context.Background(), "d", "", other); !errors.Is(err, collab.ErrRefReused) {
		t.Fatalf("a known ref with other steps: %v, want ErrRefReused", err)
	}

	// A step whose range another commit deleted is dropped; the others
	// are kept.
	commit(t, a, "d", collab.Submission{Version: 4, Ref: "cut", ClientID: collab.ClientID("2"), Steps: steps(del(2, 7))}) // "AhelloBC" → "ABC"
	r = commit(t, a, "d", collab.Submission{Version: 4, Ref: "d1", ClientID: collab.ClientID("3"), Steps: steps(del(3, 5), insert(7, "!"))})
	if r.Version != 6 || r.Commit.From != 5 || !reflect.DeepEqual(r.Commit.Dropped, []int{0}) || stepsText(r.Commit.Steps) != string(insert(4, "!")) {
		t.Fatalf("commit with a dropped step: version %d from %d, steps %s, dropped %v", r.Version, r.Commit.From, stepsText(r.Commit.Steps), r.Commit.Dropped)
	}
	if got := string(mustGet(t, a, "d").DocJSON); got != paragraph("ABC!") {
		t.Fatalf("doc %s, want ABC!", got)
	}
	// A commit whose steps are all dropped changes nothing.
	r = commit(t, a, "d", collab.Submission{Version: 4, Ref: "e1", ClientID: collab.ClientID("3"), Steps: steps(del(3, 5))})
	if r.Version != 6 || r.Commit.From != 6 || len(r.Commit.Steps) != 0 || !reflect.DeepEqual(r.Commit.Dropped, []int{0}) {
		t.Fatalf("all dropped: %+v %+v", r, r.Commit)
	}
}

func TestCommitErrors(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{History: 2})
	mustSubmit(t, a, "d", collab.Submission{Version: 0, Steps: steps(insert(1, "a"), insert(2, "b"), insert(3, "c")), ClientID: collab.ClientID("1")})
	cases := []struct {
		name string
		sub  collab.Submission
		want error
	}{
		{"ahead", collab.Submission{Version: 4, Ref: "r", ClientID: collab.ClientID("2"), Steps: steps(insert(1, "x"))}, collab.ErrInvalidVersion},
		{"older than the history", collab.Submission{Version: 0, Ref: "r", ClientID: collab.ClientID("2"), Steps: steps(insert(1, "x"))}, collab.ErrHistoryGone},
		{"ref too long", collab.Submission{Version: 3, Ref: strings.Repeat("r", collab.MaxRefBytes+1), ClientID: collab.ClientID("2"), Steps: steps(insert(1, "x"))}, collab.ErrInvalidRequest},
		{"step that does not decode", collab.Submission{Version: 2, Ref: "r", ClientID: collab.ClientID("2"), Steps: steps([]byte(`{"stepType":"nope"}`))}, nil},
		{"step that does not apply at the current version", collab.Submission{Version: 3, Ref: "r", ClientID: collab.ClientID("2"), Steps: steps(insert(1, "x"), del(40, 50))}, nil},
		{"replace from after to", collab.Submission{Version: 2, Ref: "r", ClientID: collab.ClientID("2"), Steps: steps(del(3, 1))}, collab.ErrReversedRange},
	}
	for _, tt := range cases {
		_, err := a.Submit(ctx, "d", "", tt.sub)
		if tt.want == nil {
			var se *transform.StepError
			if !errors.As(err, &se) {
				t.Errorf("%s: %v, want a StepError", tt.name, err)
			}
		} else if !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if st := mustGet(t, a, "d"); st.Version != 3 || string(st.DocJSON) != paragraph("abc") {
		t.Fatalf("after refused commits: version %d, doc %s", st.Version, st.DocJSON)
	}
}

// TestCommitComments: a comment created with a stale commit has its range
// mapped onto the current document.
func TestCommitComments(t *testing.T) {
	a := newAuthority(t, nil, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Version: 0, Steps: steps(insert(1, "hello")), ClientID: collab.ClientID("1")})
	commit(t, a, "d", collab.Submission{Version: 1, Ref: "a", ClientID: collab.ClientID("2"), Steps: steps(insert(1, "12"))})
	// Made on "hello world" at version 1: the comment is on "world".
	r := commit(t, a, "d", collab.Submission{Version: 1, Ref: "b", ClientID: collab.ClientID("3"), Steps: steps(insert(6, " world")),
		Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 7, From: 7, To: 12, Text: "note"}}})
	if r.CommentVersion != 1 {
		t.Fatalf("comment version %d", r.CommentVersion)
	}
	st := mustGet(t, a, "d")
	if len(st.Comments) != 1 || st.Comments[0].From != 9 || st.Comments[0].To != 14 {
		t.Fatalf("comments %+v, want one on 9-14 (\"world\" in %s)", st.Comments, st.DocJSON)
	}
	// Without steps too: made at version 1, on "hello".
	commit(t, a, "d", collab.Submission{Version: 1, Ref: "c", Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 8, From: 1, To: 6, Text: "hi"}}})
	st = mustGet(t, a, "d")
	if len(st.Comments) != 2 || st.Comments[1].ID != 8 || st.Comments[1].From != 3 || st.Comments[1].To != 8 {
		t.Fatalf("comments %+v, want the second on 3-8 (\"hello\" in %s)", st.Comments, st.DocJSON)
	}
}

// TestCommitResentAfterRestart: a commit's record is in the store, so a
// new Authority over it answers a resend as the first did.
func TestCommitResentAfterRestart(t *testing.T) {
	ms := memstore.New()
	a := newAuthority(t, ms, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Version: 0, Steps: steps(insert(1, "hello")), ClientID: collab.ClientID("1")})
	commit(t, a, "d", collab.Submission{Version: 1, Ref: "a", ClientID: collab.ClientID("2"), Steps: steps(insert(1, "A"))})
	b := collab.Submission{Version: 1, Ref: "b", ClientID: collab.ClientID("3"), Steps: steps(insert(6, "B"))}
	first := commit(t, a, "d", b)
	a.Close()

	a2 := newAuthority(t, ms, collab.Config{})
	again := commit(t, a2, "d", b)
	if again.Version != first.Version || !reflect.DeepEqual(*again.Commit, *first.Commit) {
		t.Fatalf("resent after a restart: %+v %+v, want %+v %+v", again, again.Commit, first, first.Commit)
	}
	if st := mustGet(t, a2, "d"); st.Version != 3 || string(st.DocJSON) != paragraph("AhelloB") {
		t.Fatalf("after the resend: version %d, doc %s", st.Version, st.DocJSON)
	}
}

// TestGroupCommit: commits that queue while an append is in flight are
// decided in order, each rebased over the ones before, and made durable
// in one store append.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	fs := &faultStore{Store: memstore.New()}
	groups := &groupSizes{}
	a := newAuthority(t, fs, collab.Config{Observer: groups})
	mustSubmit(t, a, "d", collab.Submission{Version: 0, Steps: steps(insert(1, "hello")), ClientID: collab.ClientID("1")})
	fs.gate, fs.ungated = make(chan struct{}), make(chan struct{})
	before := fs.appends.Load()

	const n = 10
	type answer struct {
		r   collab.Result
		err error
	}
	answers := make(chan answer, n+1)
	send := func(i int) {
		s := collab.Submission{Version: 1, Ref: "r" + string(rune('a'+i)), ClientID: collab.ClientID(strconv.Itoa(20 + i)), Steps: steps(insert(6, string(rune('A'+i))))}
		r, err := a.Submit(ctx, "d", "", s)
		answers <- answer{r, err}
	}
	go send(n) // its append waits at the gate
	<-fs.gate
	for i := range n {
		go send(i)
	}
	time.Sleep(200 * time.Millisecond) // they queue behind the append in flight
	close(fs.ungated)

	seen := map[int64]bool{}
	for range n + 1 {
		ans := <-answers
		if ans.err != nil {
			t.Fatal(ans.err)
		}
		c := ans.r.Commit
		if c == nil || ans.r.Version != c.From+1 || len(c.Steps) != 1 || len(c.Dropped) != 0 || seen[c.From] {
			t.Fatalf("answer %+v %+v", ans.r, c)
		}
		seen[c.From] = true
		ev, err := a.Events(ctx, "d", "", c.From, 0)
		if err != nil || string(ev.Steps[0].JSON) != string(c.Steps[0]) {
			t.Fatalf("events after %d: %v; the commit's step %s", c.From, err, c.Steps[0])
		}
	}
	if got := fs.appends.Load() - before; got != 2 {
		t.Errorf("%d store appends for %d commits, want 2 (one, and the group behind it)", got, n+1)
	}
	if got := groups.get(); !slices.Equal(got, []int{1, n}) {
		t.Errorf("the observer was told of groups of %v, want [1 %d]", got, n)
	}
	st := mustGet(t, a, "d")
	if st.Version != n+2 {
		t.Fatalf("version %d, want %d", st.Version, n+2)
	}
	for i := range n + 1 {
		if !strings.Contains(string(st.DocJSON), string(rune('A'+i))) {
			t.Errorf("doc %s lacks %c", st.DocJSON, 'A'+i)
		}
	}
}

// TestCommitSharedStore: a commit on an authority that has not seen
// another's latest steps loses the store's race for its version, and is
// rebased again on what the other stored; sent again there or on the
// other authority, it is answered as it was.
func TestCommitSharedStore(t *testing.T) {
	st := memstore.New()
	a1 := newAuthority(t, st, collab.Config{})
	a2 := newAuthority(t, st, collab.Config{})
	mustGet(t, a1, "d")
	mustGet(t, a2, "d")
	mustSubmit(t, a1, "d", collab.Submission{Steps: steps(insert(1, "one")), ClientID: collab.ClientID("1")})
	c := collab.Submission{Version: 0, Ref: "two", ClientID: collab.ClientID("2"), Steps: steps(insert(1, "two"))}
	r := commit(t, a2, "d", c) // a2 is at version 0 still
	if r.Version != 2 || r.Commit.From != 1 {
		t.Fatalf("commit on the stale authority: %+v %+v", r, r.Commit)
	}
	for _, a := range []*collab.Authority{a2, a1} {
		again := commit(t, a, "d", c)
		if again.Version != r.Version || !reflect.DeepEqual(*again.Commit, *r.Commit) {
			t.Fatalf("sent again: %+v %+v, want %+v %+v", again, again.Commit, r, r.Commit)
		}
	}
	if head, err := st.Load(context.Background(), "d"); err != nil || head.Version != 2 {
		t.Fatalf("store at version %d (%v), want 2", head.Version, err)
	}
	if d1, d2 := mustGet(t, a1, "d"), mustGet(t, a2, "d"); string(d1.DocJSON) != string(d2.DocJSON) || d1.Version != 2 {
		t.Fatalf("the authorities disagree: %s at %d, %s at %d", d1.DocJSON, d1.Version, d2.DocJSON, d2.Version)
	}
}

// groupSizes is an Observer that keeps the sizes of the groups of
// commits it is told about.
type groupSizes struct {
	mu    sync.Mutex
	sizes []int
}

func (g *groupSizes) StepsAccepted(int)   {}
func (g *groupSizes) DocumentsLoaded(int) {}

func (g *groupSizes) CommitsGrouped(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sizes = append(g.sizes, n)
}

func (g *groupSizes) get() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.sizes)
}

// TestCommitChecks: the hook, the limits and the strict check see a
// commit's steps as rebased, and refuse it whole.
func TestCommitChecks(t *testing.T) {
	ctx := context.Background()
	var seen []string
	a := newAuthority(t, nil, collab.Config{
		Limits: collab.Limits{Limits: apply.Limits{MaxDocSize: 20}},
		BeforeSubmit: func(_ context.Context, p *collab.Proposal) error {
			seen = append(seen, stepsText(p.StepsJSON))
			if strings.Contains(stepsText(p.StepsJSON), "forbidden") {
				return errors.New("no forbidden words")
			}
			return nil
		},
	})
	mustSubmit(t, a, "d", collab.Submission{Version: 0, Steps: steps(insert(1, "hello")), ClientID: collab.ClientID("1")})
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Steps: steps(insert(1, "12")), ClientID: collab.ClientID("1")})
	seen = nil
	// Made at version 1: the hook is given the step mapped over "12".
	commit(t, a, "d", collab.Submission{Version: 1, Ref: "ok", ClientID: collab.ClientID("2"), Steps: steps(insert(6, "!"))})
	if len(seen) != 1 || seen[0] != string(insert(8, "!")) {
		t.Fatalf("the hook saw %q, want the rebased %s", seen, insert(8, "!"))
	}
	var refused *collab.RefusedError
	if _, err := a.Submit(ctx, "d", "", collab.Submission{Version: 1, Ref: "no", ClientID: collab.ClientID("2"), Steps: steps(insert(2, "forbidden"))}); !errors.As(err, &refused) {
		t.Fatalf("a commit the hook refuses: %v, want a RefusedError", err)
	}
	// "12hello!" is 8 characters, 10 positions: 11 more go over 20.
	var limit *collab.LimitError
	if _, err := a.Submit(ctx, "d", "", collab.Submission{Version: 1, Ref: "big", ClientID: collab.ClientID("2"), Steps: steps(insert(1, "abcdef"), insert(7, "ghijk"))}); !errors.As(err, &limit) {
		t.Fatalf("a commit over MaxDocSize once rebased: %v, want a LimitError", err)
	}
	if st := mustGet(t, a, "d"); st.Version != 3 || string(st.DocJSON) != paragraph("12hello!") {
		t.Fatalf("after the refused commits: version %d, doc %s", st.Version, st.DocJSON)
	}
}

// TestCommitResentLater: a commit sent again from a later version than
// it was made at (a client that took its own steps in meanwhile) is still
// answered as it was.
func TestCommitResentLater(t *testing.T) {
	a := newAuthority(t, nil, collab.Config{})
	c := collab.Submission{Version: 0, Ref: "a", ClientID: collab.ClientID("1"), Steps: steps(insert(1, "hello"))}
	first := commit(t, a, "d", c)
	commit(t, a, "d", collab.Submission{Version: 1, Ref: "b", ClientID: collab.ClientID("2"), Steps: steps(insert(1, "x"))})
	c.Version = 2
	again := commit(t, a, "d", c)
	if again.Version != first.Version || !reflect.DeepEqual(*again.Commit, *first.Commit) {
		t.Fatalf("sent again from version 2: %+v %+v, want %+v %+v", again, again.Commit, first, first.Commit)
	}
	if st := mustGet(t, a, "d"); st.Version != 2 {
		t.Fatalf("version %d, want 2", st.Version)
	}
}
