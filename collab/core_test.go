package collab

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

// The submission core's tests: its steps called directly on values, no
// Authority, store or locks.

var coreNow = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// coreLimits are generous limits for the core's tests.
func coreLimits() submitLimits {
	return submitLimits{
		maxSteps:       10,
		maxCommentText: 100,
		comments:       commentLimits{comments: 10, bytes: 10_000},
		history:        100,
	}
}

// coreState returns a basic document holding "hello" at version 3 with
// comment 1 by bob on "ell", after two comment entries.
func coreState(t *testing.T) docState {
	t.Helper()
	schema, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	node, err := schema.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"hello"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	comments, _, err := commentLog{}.apply([]CommentEvent{{Type: CommentCreate, ID: 1, From: 2, To: 5, Text: "bob's", Author: "bob"}}, node.Content.Size(), commentLimits{}, commentActor{any: true})
	if err != nil {
		t.Fatal(err)
	}
	return docState{schema: schema, schemaName: "basic", node: node, version: 3, comments: comments, metaSeq: 2, metaBytes: 50}
}

func coreInsert(pos int, text string) []byte {
	return fmt.Appendf(nil, `{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"text","text":%q}]}}`, pos, pos, text)
}

// mustPrepare prepares s by user "u", failing the test on an error.
func mustPrepare(t *testing.T, s Submission, server bool) submission {
	t.Helper()
	sub, err := prepare("doc", "u", s, server, coreLimits())
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	return sub
}

func TestCorePrepare(t *testing.T) {
	lim := coreLimits()
	lim.maxSteps, lim.maxCommentText = 2, 5
	tests := []struct {
		name string
		s    Submission
		want string // the error's text; "" for none
		is   error  // what the error matches
	}{
		{"steps at the limit", Submission{Steps: [][]byte{coreInsert(1, "a"), coreInsert(1, "b")}, ClientID: ClientID("1")}, "", nil},
		{"MaxSteps", Submission{Steps: [][]byte{coreInsert(1, "a"), coreInsert(1, "b"), coreInsert(1, "c")}, ClientID: ClientID("1")}, "steps over the limit: 3 > 2", nil},
		{"comment events over MaxSteps", Submission{Comments: make([]CommentEvent, 3)}, "comment events over the limit: 3 > 2", nil},
		{"MaxCommentText", Submission{Comments: []CommentEvent{{Text: "ok"}, {Text: "too long"}}}, "bytes in the text of comment event 1 over the limit: 8 > 5", nil},
		{"steps without a client id", Submission{Steps: [][]byte{coreInsert(1, "a")}}, "clientID is missing", ErrInvalidRequest},
		{"a client id out of range", Submission{Steps: [][]byte{coreInsert(1, "a")}, ClientID: ClientID("-1")}, "clientID -1 is not an integer from 0 to 2^53", ErrInvalidRequest},
		{"a client id too long", Submission{Steps: [][]byte{coreInsert(1, "a")}, ClientID: ClientID(`"` + strings.Repeat("x", 257) + `"`)}, "clientID is a string of 257 bytes (at most 256)", ErrInvalidRequest},
		{"comments need no client id", Submission{Comments: []CommentEvent{{Text: "ok"}}, ClientID: ClientID("{")}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := prepare("doc", "u", tt.s, false, lim)
			if got := fmt.Sprint(err); tt.want == "" && err != nil || tt.want != "" && got != tt.want {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("error %v does not match %v", err, tt.is)
			}
		})
	}

	t.Run("authors", func(t *testing.T) {
		events := []CommentEvent{{Type: CommentCreate, ID: 7, Author: "mallory"}, {Type: CommentDelete, ID: 8, Author: "x"}}
		sub := mustPrepare(t, Submission{Author: "alice", Comments: events, ClientID: ClientID(" 12 "), Steps: [][]byte{coreInsert(1, "a")}, OwnComments: true}, false)
		if sub.Comments[0].Author != "alice" || sub.Comments[1].Author != "x" {
			t.Errorf("comment authors %q, %q; want the create's to be alice's", sub.Comments[0].Author, sub.Comments[1].Author)
		}
		if events[0].Author != "mallory" {
			t.Error("prepare modified the caller's events")
		}
		if string(sub.clientID) != "12" || sub.by != (owner{author: "alice"}) || sub.actor != (commentActor{author: "alice"}) {
			t.Errorf("client id %q, owner %+v, deleter %+v", sub.clientID, sub.by, sub.actor)
		}
		if anon := mustPrepare(t, Submission{}, false); anon.by != (owner{user: "u"}) || !anon.actor.any {
			t.Errorf("anonymous: owner %+v, deleter %+v", anon.by, anon.actor)
		}
	})
}

func TestCoreDecide(t *testing.T) {
	base := coreState(t)
	edit := func(version int64, steps ...[]byte) Submission {
		return Submission{Version: version, Steps: steps, ClientID: ClientID("7"), Author: "alice"}
	}
	comment := func(version int64, events ...CommentEvent) Submission {
		return Submission{Version: version, Comments: events, Author: "alice"}
	}
	create := CommentEvent{Type: CommentCreate, ID: 2, From: 1, To: 3, Text: "note"}
	tests := []struct {
		name    string
		s       Submission
		server  bool
		view    func(*view)
		lim     func(*submitLimits)
		err     string // the error's text; "" for none
		is      error  // what the error matches
		changes bool
		result  Result
		text    string // the document's text after the decision
	}{
		{name: "current version", s: edit(3, coreInsert(6, "!"), coreInsert(1, ">")),
			changes: true, result: Result{Version: 5, CommentVersion: 1}, text: ">hello!"},
		{name: "stale version", s: edit(2, coreInsert(1, "a")), is: ErrConflict},
		{name: "stale comment-only", s: comment(2, create), is: ErrConflict},
		{name: "version ahead", s: edit(4, coreInsert(1, "a")), err: "Invalid version 4", is: ErrInvalidVersion},
		{name: "negative version", s: edit(-1, coreInsert(1, "a")), err: "Invalid version -1", is: ErrInvalidVersion},
		{name: "deleted", s: edit(3, coreInsert(1, "a")), view: func(v *view) { v.deleted = true }, is: ErrNotFound},
		{name: "comment-only", s: comment(3, create),
			changes: true, result: Result{Version: 3, CommentVersion: 2}, text: "hello"},
		{name: "comment-only resent", s: comment(3, CommentEvent{Type: CommentCreate, ID: 1, From: 2, To: 5, Text: "bob's"}),
			result: Result{Version: 3, CommentVersion: 1}},
		{name: "nothing", s: comment(3), result: Result{Version: 3, CommentVersion: 1}},
		{name: "steps and comments", s: Submission{Version: 3, Steps: [][]byte{coreInsert(1, "ab")}, ClientID: ClientID("7"), Comments: []CommentEvent{{Type: CommentCreate, ID: 2, From: 6, To: 8, Text: "on the new end"}}},
			changes: true, result: Result{Version: 4, CommentVersion: 2}, text: "abhello"},
		{name: "a comment past the steps' document", s: comment(3, CommentEvent{Type: CommentCreate, ID: 2, From: 1, To: 8}), is: ErrInvalidRequest},
		{name: "deleting another's comment", s: Submission{Version: 3, Comments: []CommentEvent{{Type: CommentDelete, ID: 1}}, Author: "alice", OwnComments: true}, is: ErrForbidden},
		{name: "an editor deleting another's comment", s: comment(3, CommentEvent{Type: CommentDelete, ID: 1}),
			changes: true, result: Result{Version: 3, CommentVersion: 2}, text: "hello"},
		{name: "MaxComments", s: comment(3, create), lim: func(l *submitLimits) { l.comments.comments = 1 }, err: "comments over the limit: 2 > 1"},
		{name: "MaxCommentBytes", s: comment(3, create), lim: func(l *submitLimits) { l.comments.bytes = 100 }, err: "bytes of comments (Limits.MaxCommentBytes) over the limit: 429 > 100"},
		{name: "MaxDocSize", s: edit(3, coreInsert(1, "abc")), lim: func(l *submitLimits) { l.step.MaxDocSize = 9 }, err: "document size over the limit: 10 > 9"},
		{name: "MaxDocBytes", s: edit(3, coreInsert(1, "abc")), lim: func(l *submitLimits) { l.step.MaxDocBytes = 40 }, err: "document bytes (JSON) over the limit"},
		{name: "a step that does not decode", s: edit(3, coreInsert(1, "a"), []byte(`{"stepType":"nope"}`)), err: "step 1:"},
		{name: "a step that does not apply", s: edit(3, coreInsert(1, "a"), coreInsert(40, "b")), err: "step 1:"},
		{name: "another's client id", s: edit(3, coreInsert(1, "a")), view: func(v *view) { v.client = clientUse{owner: owner{author: "eve"}, steps: 1} }, is: ErrForbidden},
		{name: "one's own client id", s: edit(3, coreInsert(1, "a")), view: func(v *view) { v.client = clientUse{owner: owner{author: "alice"}, holds: 1} },
			changes: true, result: Result{Version: 4, CommentVersion: 1}, text: "ahello"},
		{name: "the restore client id", s: Submission{Version: 3, Steps: [][]byte{coreInsert(1, "a")}, ClientID: RestoreClientID}, is: ErrForbidden},
		{name: "the server's submission", s: Submission{Version: 3, Steps: [][]byte{coreInsert(1, "a")}, ClientID: RestoreClientID}, server: true,
			view:    func(v *view) { v.client = clientUse{owner: owner{author: "eve"}, steps: 1} },
			changes: true, result: Result{Version: 4, CommentVersion: 1}, text: "ahello"},
		{name: "a stale version with another's client id", s: edit(2, coreInsert(1, "a")), view: func(v *view) { v.client = clientUse{owner: owner{author: "eve"}, steps: 1} }, is: ErrForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := view{st: base}
			if tt.view != nil {
				tt.view(&v)
			}
			lim := coreLimits()
			if tt.lim != nil {
				tt.lim(&lim)
			}
			sub, err := prepare("doc", "u", tt.s, tt.server, lim)
			if err != nil {
				t.Fatalf("prepare: %v", err)
			}
			dec, err := decide(v, sub, lim, coreNow)
			if tt.err != "" || tt.is != nil {
				if err == nil {
					t.Fatalf("no error; want %q matching %v", tt.err, tt.is)
				}
				if !strings.Contains(err.Error(), tt.err) || tt.is != nil && !errors.Is(err, tt.is) {
					t.Fatalf("error %v; want %q matching %v", err, tt.err, tt.is)
				}
				if dec.changes() || dec.result != (Result{}) {
					t.Fatalf("a refused decision changes %v, answers %+v", dec.changes(), dec.result)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if dec.changes() != tt.changes || dec.result != tt.result {
				t.Fatalf("changes %v, result %+v; want %v, %+v", dec.changes(), dec.result, tt.changes, tt.result)
			}
			if !tt.changes {
				return
			}
			if got := dec.next.node.TextContent(); got != tt.text {
				t.Errorf("document %q, want %q", got, tt.text)
			}
			if dec.next.version != tt.result.Version || dec.next.comments.version != tt.result.CommentVersion {
				t.Errorf("next at %d/%d, result %+v", dec.next.version, dec.next.comments.version, dec.result)
			}
			if dec.base.version != base.version || dec.base.node != base.node {
				t.Error("the decision's base is not the view's state")
			}
			checkRecords(t, dec, sub)
			checkMeta(t, dec, base)
		})
	}
	if base.version != 3 || base.node.TextContent() != "hello" || base.comments.version != 1 || len(base.steps) != 0 {
		t.Error("decide modified the state it was given")
	}
}

// checkRecords checks dec's records against its steps and its history.
func checkRecords(t *testing.T, dec decision, sub submission) {
	t.Helper()
	if len(dec.records) != len(sub.Steps) || len(dec.added) != len(sub.Steps) {
		t.Fatalf("%d records, %d added for %d steps", len(dec.records), len(dec.added), len(sub.Steps))
	}
	for i, r := range dec.records {
		if r.Version != dec.base.version+int64(i)+1 || !bytes.Equal(r.ClientID, sub.clientID) || r.Author != sub.by.author || !r.Time.Equal(coreNow) {
			t.Errorf("record %d: version %d, client %q, author %q, time %v", i, r.Version, r.ClientID, r.Author, r.Time)
		}
		if a := dec.added[i]; !bytes.Equal(a.JSON, r.JSON) || a.Map == nil || a.owner != sub.by {
			t.Errorf("added %d: %+v, record JSON %s", i, a, r.JSON)
		}
	}
	if n := len(dec.next.steps); n != len(dec.base.steps)+len(sub.Steps) {
		t.Errorf("history of %d steps, want %d", n, len(dec.base.steps)+len(sub.Steps))
	}
}

// checkMeta checks dec's comment entry and the metadata of its next
// state against base.
func checkMeta(t *testing.T, dec decision, base docState) {
	t.Helper()
	changed := dec.next.comments.version != base.comments.version
	if changed != (dec.meta != nil) {
		t.Fatalf("comments changed %v, entry %s", changed, dec.meta)
	}
	if !changed {
		if dec.next.metaSeq != base.metaSeq || dec.next.metaBytes != base.metaBytes {
			t.Errorf("metadata %d/%d, want the base's %d/%d", dec.next.metaSeq, dec.next.metaBytes, base.metaSeq, base.metaBytes)
		}
		return
	}
	if want := encodeEntry(dec.sub.Comments); !bytes.Equal(dec.meta, want) {
		t.Errorf("entry %s, want %s", dec.meta, want)
	}
	if dec.next.metaSeq != base.metaSeq+1 || dec.next.metaBytes != base.metaBytes+int64(len(dec.meta)) {
		t.Errorf("metadata %d/%d after %d/%d and an entry of %d bytes", dec.next.metaSeq, dec.next.metaBytes, base.metaSeq, base.metaBytes, len(dec.meta))
	}
	if dec.add() != stepBytes(dec.records, len(dec.meta)) {
		t.Errorf("add %d", dec.add())
	}
}

// TestCoreCommentsMapped checks that the steps move the comments before
// the events apply.
func TestCoreCommentsMapped(t *testing.T) {
	sub := mustPrepare(t, Submission{Version: 3, Steps: [][]byte{coreInsert(1, "ab")}, ClientID: ClientID("7")}, false)
	dec, err := decide(view{st: coreState(t)}, sub, coreLimits(), coreNow)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := dec.next.comments.comment(0)
	if !ok || c.ID != 1 || c.From != 4 || c.To != 7 {
		t.Errorf("comment %+v (%v), want 1 on 4-7", c, ok)
	}
}

func TestCoreHook(t *testing.T) {
	base := coreState(t)
	s := Submission{Version: 3, Steps: [][]byte{coreInsert(1, "a")}, ClientID: ClientID("7"), Author: "alice",
		Comments: []CommentEvent{{Type: CommentCreate, ID: 2, From: 1, To: 2, Text: "x"}}}
	lim := coreLimits()
	lim.keepSteps = true
	dec, err := decide(view{st: base}, mustPrepare(t, s, false), lim, coreNow)
	if err != nil {
		t.Fatal(err)
	}
	p := dec.proposal()
	if p.ID != "doc" || p.Author != "alice" || string(p.ClientID) != "7" || p.Version != 3 || p.Before != base.node || p.After != dec.next.node {
		t.Errorf("proposal %+v", p)
	}
	if len(p.Steps) != 1 || len(p.StepsJSON) != 1 || !bytes.Equal(p.StepsJSON[0], dec.records[0].JSON) {
		t.Fatalf("proposal steps %v, JSON %q", p.Steps, p.StepsJSON)
	}
	if _, ok := p.Steps[0].(*transform.ReplaceStep); !ok {
		t.Errorf("decoded step %T", p.Steps[0])
	}
	if len(p.Comments) != 1 || p.Comments[0].Author != "alice" {
		t.Errorf("proposal comments %+v", p.Comments)
	}
	if !lim.keepSteps || dec.decoded == nil {
		t.Error("the decoded steps were not kept")
	}
	if d2, _ := decide(view{st: base}, mustPrepare(t, s, false), coreLimits(), coreNow); d2.decoded != nil {
		t.Error("the decoded steps were kept without a hook")
	}
	comments, _ := decide(view{st: base}, mustPrepare(t, Submission{Version: 3, Comments: s.Comments}, false), lim, coreNow)
	if p := comments.proposal(); p.ClientID != nil || p.Steps != nil || p.StepsJSON != nil || p.Before != p.After {
		t.Errorf("comment-only proposal %+v", p)
	}

	if err := dec.approve(nil); err != nil {
		t.Errorf("approve(nil) = %v", err)
	}
	no := errors.New("no")
	var re *RefusedError
	if err := dec.approve(no); !errors.As(err, &re) || re.Err != no || err.Error() != "no" || errors.Is(err, ErrForbidden) {
		t.Errorf("approve(no) = %v", err)
	}
	forbidden := fmt.Errorf("not yours: %w", ErrForbidden)
	if err := dec.approve(forbidden); !errors.As(err, &re) || !errors.Is(err, ErrForbidden) {
		t.Errorf("approve(forbidden) = %v, want a *RefusedError matching ErrForbidden", err)
	}
}

func TestCoreRecomment(t *testing.T) {
	base := coreState(t)
	lim := coreLimits()
	s := Submission{Version: 3, Steps: [][]byte{coreInsert(1, "ab")}, ClientID: ClientID("7"),
		Comments: []CommentEvent{{Type: CommentCreate, ID: 5, From: 1, To: 3, Text: "mine"}}}
	dec, err := decide(view{st: base}, mustPrepare(t, s, false), lim, coreNow)
	if err != nil {
		t.Fatal(err)
	}
	// Another writer created comment 3 at the same version.
	cur := base
	cur.comments, _, err = base.comments.apply([]CommentEvent{{Type: CommentCreate, ID: 3, From: 5, To: 6, Text: "theirs"}}, base.node.Content.Size(), commentLimits{}, commentActor{any: true})
	if err != nil {
		t.Fatal(err)
	}
	cur.metaSeq, cur.metaBytes = base.metaSeq+1, base.metaBytes+30

	again, err := dec.recomment(cur, lim)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Version: 4, CommentVersion: 3}); again.result != want || !again.changes() {
		t.Fatalf("result %+v, changes %v; want %+v", again.result, again.changes(), want)
	}
	if again.base.metaSeq != cur.metaSeq || again.next.metaSeq != cur.metaSeq+1 || again.next.metaBytes != cur.metaBytes+int64(len(again.meta)) {
		t.Errorf("metadata: base %d, next %d/%d", again.base.metaSeq, again.next.metaSeq, again.next.metaBytes)
	}
	if again.next.node != dec.next.node || len(again.records) != 1 || &again.records[0] != &dec.records[0] {
		t.Error("recomment did not keep the steps")
	}
	var ids []string
	for _, c := range again.next.comments.list() {
		ids = append(ids, fmt.Sprintf("%d@%d-%d", c.ID, c.From, c.To))
	}
	if got, want := strings.Join(ids, " "), "1@4-7 3@7-8 5@1-3"; got != want {
		t.Errorf("comments %s, want %s", got, want)
	}

	t.Run("nothing left", func(t *testing.T) {
		del := Submission{Version: 3, Comments: []CommentEvent{{Type: CommentDelete, ID: 1}}}
		dec, err := decide(view{st: base}, mustPrepare(t, del, false), lim, coreNow)
		if err != nil || !dec.changes() {
			t.Fatalf("decide: %v, changes %v", err, dec.changes())
		}
		gone := base // another writer deleted comment 1 first
		gone.comments, _, _ = base.comments.apply(del.Comments, -1, commentLimits{}, commentActor{any: true})
		gone.metaSeq++
		again, err := dec.recomment(gone, lim)
		if err != nil || again.changes() || again.result != (Result{Version: 3, CommentVersion: 2}) {
			t.Fatalf("recomment: %v, changes %v, result %+v", err, again.changes(), again.result)
		}
	})
	t.Run("the document moved on", func(t *testing.T) {
		moved := cur
		moved.version++
		if _, err := dec.recomment(moved, lim); !errors.Is(err, ErrConflict) {
			t.Errorf("recomment on a newer version: %v", err)
		}
		moved = cur
		moved.node = dec.next.node
		if _, err := dec.recomment(moved, lim); !errors.Is(err, ErrConflict) {
			t.Errorf("recomment on another document: %v", err)
		}
	})
	t.Run("the events no longer apply", func(t *testing.T) {
		full := lim
		full.comments.comments = 2
		if _, err := dec.recomment(cur, full); err == nil || !strings.Contains(err.Error(), "comments over the limit") {
			t.Errorf("recomment over MaxComments: %v", err)
		}
	})
}

func TestCoreCommit(t *testing.T) {
	base := coreState(t)
	sub := mustPrepare(t, Submission{Version: 3, Steps: [][]byte{coreInsert(1, "a")}, ClientID: ClientID("7"), Author: "alice"}, false)
	dec, err := decide(view{st: base}, sub, coreLimits(), coreNow)
	if err != nil {
		t.Fatal(err)
	}
	later := coreNow.Add(time.Second)
	c := dec.commit(later)
	if c.ID != "doc" || c.Author != "alice" || c.From != 3 || c.To != 4 || len(c.Steps) != 1 || c.CommentVersion != 1 || !c.Time.Equal(coreNow) {
		t.Errorf("commit %+v", c)
	}
	sub = mustPrepare(t, Submission{Version: 3, Comments: []CommentEvent{{Type: CommentDelete, ID: 1}}}, false)
	if dec, err = decide(view{st: base}, sub, coreLimits(), coreNow); err != nil {
		t.Fatal(err)
	}
	if c := dec.commit(later); c.From != 3 || c.To != 3 || c.Steps != nil || c.CommentVersion != 2 || !c.Time.Equal(later) {
		t.Errorf("comment-only commit %+v", c)
	}
}

func TestCoreStepError(t *testing.T) {
	inner := errors.New("bad")
	var le *LimitError
	if err := stepError(&apply.StepError{Kind: apply.ErrDocTooLarge, Limit: 5, Size: 6}); !errors.As(err, &le) || le.What != "document size" {
		t.Errorf("size: %v", err)
	}
	var se *transform.StepError
	if err := stepError(&apply.StepError{Index: 2, Err: inner}); !errors.As(err, &se) || se.Index != 2 || !errors.Is(err, inner) {
		t.Errorf("step: %v", err)
	}
	if err := stepError(inner); err != inner {
		t.Errorf("other: %v", err)
	}
}
