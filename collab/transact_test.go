package collab_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// insertText inserts text at pos with tr.
func insertText(tr *transform.Transform, pos int, text string) error {
	n, err := tr.Doc.Type.Schema.Text(text, nil)
	if err != nil {
		return err
	}
	return tr.Insert(pos, model.FragmentOf(n))
}

func TestTransact(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{})
	typeText(t, a, "d", "hello")
	calls := 0
	res, err := a.Transact(ctx, "d", "bot", func(tr *transform.Transform) error {
		calls++
		if err := insertText(tr, 6, " world"); err != nil {
			return err
		}
		strong, err := tr.Doc.Type.Schema.Mark("strong", nil)
		if err != nil {
			return err
		}
		return tr.AddMark(7, 12, strong)
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || res.Version != 7 {
		t.Errorf("Transact: %d calls, version %d; want 1 call, version 7", calls, res.Version)
	}
	want := `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"hello "},{"type":"text","marks":[{"type":"strong"}],"text":"world"}]}]}`
	if got := string(mustGet(t, a, "d").DocJSON); got != want {
		t.Errorf("after Transact: %s, want %s", got, want)
	}
	page, err := a.StepLog(ctx, "d", 5, 10, 0, nil)
	if err != nil || len(page.Steps) != 2 {
		t.Fatalf("StepLog(5) = %+v, %v", page, err)
	}
	for _, s := range page.Steps {
		if s.Author != "bot" || string(s.ClientID) != string(collab.EditClientID) {
			t.Errorf("step %s by %q as %s, want bot as %s", s.JSON, s.Author, s.ClientID, collab.EditClientID)
		}
	}

	// Nothing to do: no submission.
	for name, fn := range map[string]func(*transform.Transform) error{
		"no step":     func(*transform.Transform) error { return nil },
		"ErrNoChange": func(tr *transform.Transform) error { insertText(tr, 1, "x"); return collab.ErrNoChange },
	} {
		if res, err := a.Transact(ctx, "d", "bot", fn); err != nil || res.Version != 7 {
			t.Errorf("%s: %+v, %v; want version 7", name, res, err)
		}
	}
	// The function's error: nothing submitted.
	mine := errors.New("mine")
	if _, err := a.Transact(ctx, "d", "bot", func(tr *transform.Transform) error {
		insertText(tr, 1, "x")
		return mine
	}); err != mine {
		t.Errorf("Transact's error %v, want the function's", err)
	}
	// A transform error (a position out of the document).
	if _, err := a.Transact(ctx, "d", "bot", func(tr *transform.Transform) error {
		return insertText(tr, 100, "x")
	}); err == nil {
		t.Error("insert at 100: no error")
	}
	if v := mustGet(t, a, "d").Version; v != 7 {
		t.Errorf("version %d after refused transactions, want 7", v)
	}
	if _, err := a.Transact(ctx, "nothing", "bot", func(*transform.Transform) error { return nil }); err != nil {
		// AutoCreate is on in these tests: the document is made.
		t.Errorf("Transact on a new document: %v", err)
	}
}

// TestTransactRace has an editor's steps come first while the function
// runs: it runs again on the newer document.
func TestTransactRace(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{})
	typeText(t, a, "d", "ab")
	calls := 0
	res, err := a.Transact(ctx, "d", "bot", func(tr *transform.Transform) error {
		calls++
		if calls == 1 {
			mustSubmit(t, a, "d", collab.Submission{Version: 2, Steps: steps(insert(1, "x"))})
		}
		// At the end of the paragraph, wherever it is now.
		return insertText(tr, tr.Doc.Content.Size()-1, "!")
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || res.Version != 4 {
		t.Errorf("%d calls, version %d; want 2 calls, version 4", calls, res.Version)
	}
	if got, want := string(mustGet(t, a, "d").DocJSON), paragraph("xab!"); got != want {
		t.Errorf("after the race: %s, want %s", got, want)
	}

	// An editor that always comes first: bounded.
	calls = 0
	_, err = a.Transact(ctx, "d", "bot", func(tr *transform.Transform) error {
		calls++
		v := mustGet(t, a, "d").Version
		mustSubmit(t, a, "d", collab.Submission{Version: v, Steps: steps(insert(1, "y"))})
		return insertText(tr, 1, "z")
	})
	if !errors.Is(err, collab.ErrContended) || calls != 20 {
		t.Errorf("always overtaken: %v after %d calls, want ErrContended after 20", err, calls)
	}
	if strings.Contains(string(mustGet(t, a, "d").DocJSON), "z") {
		t.Error("an overtaken transaction was applied")
	}
}

func TestTransactSince(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{History: 5})
	typeText(t, a, "d", "abc") // versions 1..3
	mustSubmit(t, a, "d", collab.Submission{Version: 3, Steps: steps(insert(1, "xy"))})
	var at int
	_, err := a.TransactSince(ctx, "d", "bot", 3, func(tr *transform.Transform, since *transform.Mapping) error {
		at = since.Map(3, 1) // between "b" and "c" at version 3
		return insertText(tr, at, "-")
	})
	if err != nil {
		t.Fatal(err)
	}
	if at != 5 {
		t.Errorf("position 3 at version 3 mapped to %d, want 5", at)
	}
	if got, want := string(mustGet(t, a, "d").DocJSON), paragraph("xyab-c"); got != want {
		t.Errorf("after TransactSince: %s, want %s", got, want)
	}
	nop := func(*transform.Transform, *transform.Mapping) error { return nil }
	if _, err := a.TransactSince(ctx, "d", "bot", 99, nop); !errors.Is(err, collab.ErrInvalidVersion) {
		t.Errorf("base 99: %v, want ErrInvalidVersion", err)
	}
	for v := int64(5); v < 15; v++ {
		mustSubmit(t, a, "d", collab.Submission{Version: v, Steps: steps(insert(1, "0"))})
	}
	if _, err := a.TransactSince(ctx, "d", "bot", 3, nop); !errors.Is(err, collab.ErrHistoryGone) {
		t.Errorf("base 3 past the history: %v, want ErrHistoryGone", err)
	}
}

// TestTransactHooks checks that BeforeSubmit sees a server edit and may
// refuse it, and that editors may not use the server's client id.
func TestTransactHooks(t *testing.T) {
	ctx := context.Background()
	var seen []*collab.Proposal
	a := newAuthority(t, nil, collab.Config{BeforeSubmit: func(_ context.Context, p *collab.Proposal) error {
		seen = append(seen, p)
		if p.Author == "evil" {
			return collab.ErrForbidden
		}
		return nil
	}})
	mustGet(t, a, "d")
	if _, err := a.Transact(ctx, "d", "evil", func(tr *transform.Transform) error { return insertText(tr, 1, "x") }); !errors.Is(err, collab.ErrForbidden) {
		t.Errorf("refused by the hook: %v, want ErrForbidden", err)
	}
	if _, err := a.Transact(ctx, "d", "bot", func(tr *transform.Transform) error { return insertText(tr, 1, "x") }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[1].Author != "bot" || len(seen[1].Steps) != 1 {
		t.Errorf("the hook saw %+v", seen)
	}
	_, err := a.Submit(ctx, "d", "", collab.Submission{Version: 1, Steps: steps(insert(1, "y")), ClientID: collab.EditClientID})
	var cerr *collab.ClientIDError
	if !errors.As(err, &cerr) || !errors.Is(err, collab.ErrForbidden) {
		t.Errorf("an editor under the server's client id: %v, want a ClientIDError", err)
	}
}

// TestShowEdit: followers see the server's client after a server edit,
// with its cursor where the edit ended, and then see it leave.
func TestShowEdit(t *testing.T) {
	a := newAuthority(t, nil, collab.Config{PresenceEvery: time.Millisecond, EditPresence: 50 * time.Millisecond})
	typeText(t, a, "d", "abc")
	s := follow(t, a, "d")
	a.ShowEdit("d", []byte(`{"name":"Bot"}`), 2, 2) // between "a" and "b" at version 2
	ev := nextPresence(t, s)
	p, ok := entryOf(ev.Presence, string(collab.EditClientID))
	if !ok || string(p.Info) != `{"name":"Bot"}` || p.Anchor != 2 || p.Head != 2 {
		t.Fatalf("after ShowEdit: %+v", ev)
	}
	ev = nextPresence(t, s)
	if len(ev.Left) != 1 || string(ev.Left[0]) != string(collab.EditClientID) {
		t.Fatalf("after EditPresence: %+v, want the server's client gone", ev)
	}
	a.ShowEdit("nothing", []byte(`{}`), 0, 0) // not loaded: nothing to show, no error
}
