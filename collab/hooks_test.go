package collab_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// logRecords is a slog.Handler that keeps the records' levels and texts.
type logRecords struct {
	mu    sync.Mutex
	lines []string
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecords) WithGroup(string) slog.Handler            { return h }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.mu.Lock()
	h.lines = append(h.lines, b.String())
	h.mu.Unlock()
	return nil
}

// find returns the first line that holds every one of parts.
func (h *logRecords) find(parts ...string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
next:
	for _, l := range h.lines {
		for _, p := range parts {
			if !strings.Contains(l, p) {
				continue next
			}
		}
		return l, true
	}
	return "", false
}

func mustDoc(t *testing.T, schemaName, js string) *model.Node {
	t.Helper()
	schema, _ := lookupSchema(schemaName)
	n, err := schema.NodeFromJSON([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestOnLoad(t *testing.T) {
	errBackend := errors.New("backend down")
	textDoc := func(t *testing.T) *model.Node {
		return mustDoc(t, "text", `{"type":"doc","content":[{"type":"text","text":"hi"}]}`)
	}
	tests := []struct {
		name    string
		schema  string
		doc     func(t *testing.T) *model.Node
		err     error
		wantErr error  // nil: the document is created
		wantDoc string // its JSON
		want    string // its schema
	}{
		{name: "content and schema", schema: "text", doc: textDoc,
			wantDoc: `{"type":"doc","content":[{"type":"text","text":"hi"}]}`, want: "text"},
		{name: "default schema", doc: func(t *testing.T) *model.Node { return mustDoc(t, "basic", paragraph("x")) },
			wantDoc: paragraph("x"), want: "basic"},
		{name: "empty document", schema: "text", wantDoc: `{"type":"doc"}`, want: "text"},
		{name: "refused", err: fmt.Errorf("no such page: %w", collab.ErrNotFound), wantErr: collab.ErrNotFound},
		{name: "failed", err: errBackend, wantErr: errBackend},
		{name: "wrong schema", schema: "basic", doc: textDoc, wantErr: collab.ErrInvalidRequest},
		{name: "unknown schema", schema: "nope", wantErr: collab.ErrInvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := memstore.New()
			var calls atomic.Int64
			a := newAuthority(t, st, collab.Config{OnLoad: func(_ context.Context, id string) (string, *model.Node, error) {
				calls.Add(1)
				if id != "d" {
					t.Errorf("OnLoad(%q)", id)
				}
				var doc *model.Node
				if tc.doc != nil {
					doc = tc.doc(t)
				}
				return tc.schema, doc, tc.err
			}})
			got, err := a.Get(ctx, "d", "")
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Get: %v, want %v", err, tc.wantErr)
				}
				if list, _ := st.List(ctx); len(list) != 0 {
					t.Fatalf("stored after a failed OnLoad: %v", list)
				}
				if _, err := a.Get(ctx, "d", ""); !errors.Is(err, tc.wantErr) {
					t.Fatalf("second Get: %v", err)
				}
				if n := calls.Load(); n != 2 {
					t.Fatalf("OnLoad called %d times for two requests, want 2", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got.DocJSON) != tc.wantDoc || got.Schema != tc.want {
				t.Fatalf("got %s of %q, want %s of %q", got.DocJSON, got.Schema, tc.wantDoc, tc.want)
			}
			head, err := st.Load(ctx, "d")
			if err != nil || head.Schema != tc.want || string(head.Snapshot.Doc) != tc.wantDoc {
				t.Fatalf("stored %+v, %v", head, err)
			}
			mustGet(t, a, "d")
			if n := calls.Load(); n != 1 {
				t.Fatalf("OnLoad called %d times, want 1", n)
			}
		})
	}
}

func TestOnLoadLimits(t *testing.T) {
	a := newAuthority(t, nil, collab.Config{OnLoad: func(context.Context, string) (string, *model.Node, error) {
		return "", mustDoc(t, "basic", paragraph("long text")), nil
	}, Limits: collab.Limits{Limits: apply.Limits{MaxDocSize: 3}}})
	var lim *collab.LimitError
	if _, err := a.Get(context.Background(), "d", ""); !errors.As(err, &lim) {
		t.Fatalf("Get: %v, want a LimitError", err)
	}
	s := newAuthority(t, nil, collab.Config{Strict: true, OnLoad: func(context.Context, string) (string, *model.Node, error) {
		return "", mustDoc(t, "basic", `{"type":"doc","content":[{"type":"text","text":"bare"}]}`), nil
	}})
	if _, err := s.Get(context.Background(), "d", ""); !errors.Is(err, collab.ErrInvalidRequest) {
		t.Fatalf("Get with Strict: %v, want ErrInvalidRequest", err)
	}
}

func TestBeforeSubmit(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	var got []*collab.Proposal
	var refuse error
	a := newAuthority(t, st, collab.Config{BeforeSubmit: func(_ context.Context, p *collab.Proposal) error {
		got = append(got, p)
		return refuse
	}})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "ab")), Author: "ann"})
	if len(got) != 1 {
		t.Fatalf("%d proposals, want 1", len(got))
	}
	p := got[0]
	if p.ID != "d" || p.Author != "ann" || p.Version != 0 || string(p.ClientID) != "1" ||
		len(p.Steps) != 1 || len(p.StepsJSON) != 1 || len(p.Comments) != 0 {
		t.Fatalf("proposal %+v", p)
	}
	if b, af := string(p.Before.AppendJSON(nil)), string(p.After.AppendJSON(nil)); b != paragraph("") || af != paragraph("ab") {
		t.Fatalf("before %s, after %s", b, af)
	}
	if js := string(p.Steps[0].AppendJSON(nil)); js != string(p.StepsJSON[0]) || !strings.Contains(js, `"text":"ab"`) {
		t.Fatalf("steps %s, JSON %s", js, p.StepsJSON[0])
	}

	// Comment events alone go through the hook too.
	comment := []collab.CommentEvent{{Type: collab.CommentCreate, ID: 7, From: 1, To: 2, Text: "c"}}
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Comments: comment, Author: "bob"})
	if p := got[len(got)-1]; len(got) != 2 || p.Author != "bob" || p.Version != 1 || len(p.Steps) != 0 || len(p.Comments) != 1 || p.Before != p.After {
		t.Fatalf("comment proposal %+v", p)
	}
	// A submission that changes nothing does not.
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Comments: []collab.CommentEvent{{Type: collab.CommentDelete, ID: 99}}})
	if len(got) != 2 {
		t.Fatalf("the hook saw a submission that changes nothing")
	}

	before := mustGet(t, a, "d")
	head, _ := st.Load(ctx, "d")
	for _, tc := range []struct {
		name      string
		err       error
		forbidden bool
	}{
		{"forbidden", fmt.Errorf("no editing here: %w", collab.ErrForbidden), true},
		{"refused", errors.New("too many images"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refuse = tc.err
			defer func() { refuse = nil }()
			for _, s := range []collab.Submission{
				{Version: 1, Steps: steps(insert(1, "x")), ClientID: collab.ClientID("2")},
				{Version: 1, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 8, From: 1, To: 2}}},
			} {
				_, err := a.Submit(ctx, "d", "", s)
				var refused *collab.RefusedError
				if !errors.As(err, &refused) || refused.Err != tc.err || err.Error() != tc.err.Error() {
					t.Fatalf("Submit: %v, want a RefusedError of %v", err, tc.err)
				}
				if errors.Is(err, collab.ErrForbidden) != tc.forbidden {
					t.Fatalf("errors.Is(%v, ErrForbidden) = %v", err, !tc.forbidden)
				}
			}
			after := mustGet(t, a, "d")
			h, _ := st.Load(ctx, "d")
			if !bytes.Equal(after.DocJSON, before.DocJSON) || after.Version != before.Version || after.CommentVersion != before.CommentVersion ||
				h.Version != head.Version || !bytes.Equal(h.Meta, head.Meta) {
				t.Fatalf("changed by a refused submission: %+v, head %+v", after, h)
			}
		})
	}
}

func TestAfterCommit(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var got []collab.Commit
	logs := &logRecords{}
	a := newAuthority(t, nil, collab.Config{Logger: slog.New(logs), AfterCommit: func(_ context.Context, c collab.Commit) error {
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
		if c.To == 3 {
			return errors.New("webhook down")
		}
		return nil
	}})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "ab"), insert(3, "c")), Author: "ann"})
	mustSubmit(t, a, "d", collab.Submission{Version: 2, Steps: steps(insert(1, "x")), ClientID: collab.ClientID("9"), Author: "bob"})
	mustSubmit(t, a, "d", collab.Submission{Version: 3, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 1, From: 1, To: 2}}})
	ev, err := a.Events(ctx, "d", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil { // runs what is queued
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("%d commits, want 3", len(got))
	}
	want := []struct {
		from, to, commentVersion int64
		author, clientID         string
		steps, comments          int
	}{
		{0, 2, 0, "ann", "1", 2, 0},
		{2, 3, 0, "bob", "9", 1, 0},
		{3, 3, 1, "", "", 0, 1},
	}
	for i, w := range want {
		c := got[i]
		if c.ID != "d" || c.From != w.from || c.To != w.to || c.CommentVersion != w.commentVersion || c.Author != w.author ||
			string(c.ClientID) != w.clientID || len(c.Steps) != w.steps || len(c.Comments) != w.comments || c.Time.IsZero() {
			t.Errorf("commit %d: %+v", i, c)
		}
		for j, s := range c.Steps {
			e := ev.Steps[int(c.From)+j]
			if !bytes.Equal(s.JSON, e.JSON) || s.Map != e.Map || s.Size != e.Size || s.Map == nil {
				t.Errorf("commit %d step %d: %+v, events have %+v", i, j, s, e)
			}
		}
	}
	if _, ok := logs.find("WARN", "AfterCommit", "doc=d", "webhook down"); !ok {
		t.Errorf("the hook's error was not logged: %q", logs.lines)
	}
}

func TestAfterCommitNeverBlocks(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 1)
	var ran atomic.Int64
	logs := &logRecords{}
	a := newAuthority(t, nil, collab.Config{AfterCommitQueue: 3, Logger: slog.New(logs), AfterCommit: func(context.Context, collab.Commit) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
		ran.Add(1)
		return nil
	}})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the Close of newAuthority
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "a"))})
	<-entered
	const n = 50
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := int64(1); v < n; v++ {
			if _, err := a.Submit(context.Background(), "d", "", collab.Submission{Version: v, Steps: steps(insert(1, "a")), ClientID: collab.ClientID("1")}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Submit blocked by a blocked AfterCommit")
	}
	// One commit is in the hook, three are queued, the others dropped.
	if d := a.DroppedCommits(); d != n-4 {
		t.Fatalf("DroppedCommits %d, want %d", d, n-4)
	}
	if l, ok := logs.find("WARN", "dropped", "doc=d"); !ok {
		t.Fatalf("no WARN for a dropped commit: %q", logs.lines)
	} else if !strings.Contains(l, "dropped=1") {
		t.Fatalf("first drop logged as %q", l)
	}
	unblock()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if r := ran.Load(); r != 4 {
		t.Fatalf("the hook ran %d times by Close, want 4", r)
	}
}

func TestOnUnload(t *testing.T) {
	type unload struct {
		id      string
		version int64
	}
	var mu sync.Mutex
	var got []unload
	clk := newClock()
	st := memstore.New()
	cfg := collab.Config{Store: st, Schemas: lookupSchema, AutoCreate: true, IdleUnload: time.Minute, Now: clk.Now,
		OnUnload: func(id string, version int64) {
			mu.Lock()
			got = append(got, unload{id, version})
			mu.Unlock()
		}}
	a, err := collab.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustSubmit(t, a, "idle", collab.Submission{Steps: steps(insert(1, "ab"), insert(1, "c"))})
	clk.Advance(30 * time.Second)
	mustSubmit(t, a, "busy", collab.Submission{Steps: steps(insert(1, "ab"))})
	mustGet(t, a, "other")
	clk.Advance(30 * time.Second)
	a.UnloadIdle()
	mu.Lock()
	if len(got) != 1 || got[0] != (unload{"idle", 2}) {
		t.Fatalf("after the idle unload: %v", got)
	}
	mu.Unlock()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	rest := map[unload]bool{}
	for _, u := range got[1:] {
		rest[u] = true
	}
	if len(got) != 3 || !rest[unload{"busy", 1}] || !rest[unload{"other", 0}] {
		t.Fatalf("after Close: %v", got)
	}
}
