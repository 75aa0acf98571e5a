package postgres

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/pgtest"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
)

func newAuthority(t *testing.T, s *Store) *collab.Authority {
	t.Helper()
	a, err := collab.New(collab.Config{
		Store:      s,
		AutoCreate: true,
		Schemas: func(name string) (*model.Schema, bool) {
			sch, err := schemas.Get(name)
			return sch, err == nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestAuthoritiesMissedNotice runs two Authorities on two Stores over one
// database and keeps the second's listener away while the first commits:
// the notice of that commit is lost, and after the listener reconnects
// the second Authority catches up all the same. Comments then cross
// both ways.
func TestAuthoritiesMissedNotice(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	sa := open(t, url)
	sb := open(t, url+"&application_name=b")
	a, b := newAuthority(t, sa), newAuthority(t, sb)
	defer sa.Close()
	defer sb.Close()
	if _, err := a.Get(ctx, "d", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "d", ""); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Wait for b's listener, then keep it from reconnecting and end its
	// connection.
	deadline := time.Now().Add(wait)
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = 'b' AND query = 'LISTEN `+channel+`'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b's listener did not LISTEN within %v", wait)
		}
		time.Sleep(10 * time.Millisecond)
	}
	sb.notes.mu.Lock()
	good := sb.notes.connCfg
	bad := good.Copy()
	bad.Host = "/nonexistent-pgtest-dir"
	bad.Fallbacks = nil
	sb.notes.connCfg = bad
	sb.notes.mu.Unlock()
	if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = 'b' AND query = 'LISTEN `+channel+`'`); err != nil {
		t.Fatal(err)
	}

	step := []byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"hi"}]}}`)
	if _, err := a.Submit(ctx, "d", "", collab.Submission{Steps: [][]byte{step}, ClientID: collab.ClientID("1")}); err != nil {
		t.Fatal(err)
	}
	// b heard nothing of it: the commit's notice was missed.
	if st, err := b.Get(ctx, "d", ""); err != nil || st.Version != 0 {
		t.Fatalf("b at version %d (%v) while its listener is away, want 0", st.Version, err)
	}

	sb.notes.mu.Lock()
	sb.notes.connCfg = good
	sb.notes.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	ev, err := nextEvents(wctx, b, "d", "", 0, 0)
	if err != nil {
		t.Fatalf("b did not catch up after the listener reconnected: %v", err)
	}
	if ev.Version != 1 || len(ev.Steps) != 1 || !bytes.Equal(ev.Steps[0].JSON, step) {
		t.Fatalf("b's events after the reconnect: %+v", ev)
	}

	// A comment alone (a metadata entry at the same version) reaches b
	// too, and b's own comment then reaches a.
	if _, err := a.Submit(ctx, "d", "", collab.Submission{Version: 1, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 3, From: 1, To: 3, Text: "note"}}}); err != nil {
		t.Fatal(err)
	}
	ev, err = nextEvents(wctx, b, "d", "", 1, 0)
	if err != nil || ev.CommentVersion != 1 || len(ev.Comment) != 1 || ev.Comment[0].Text != "note" {
		t.Fatalf("b's events after a's comment: %+v, %v", ev, err)
	}
	if _, err := b.Submit(ctx, "d", "", collab.Submission{Version: 1, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 4, From: 1, To: 2, Text: "reply"}}}); err != nil {
		t.Fatal(err)
	}
	ev, err = nextEvents(wctx, a, "d", "", 1, 1)
	if err != nil || ev.CommentVersion != 2 || len(ev.Comment) != 1 || ev.Comment[0].Text != "reply" {
		t.Fatalf("a's events after b's comment: %+v, %v", ev, err)
	}
}

// TestAuthoritiesDelete deletes a document through one Authority while a
// waiter of the other, on another Store over the same database, waits on
// it: the waiter answers ErrNotFound, the other Authority no longer has
// the document, and another document stays as it was on both. A restore
// through one is a step the other's waiter receives.
func TestAuthoritiesDelete(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	sa := open(t, url)
	sb := open(t, url+"&application_name=b")
	a, b := newAuthority(t, sa), newAuthority(t, sb)
	defer sa.Close()
	defer sb.Close()
	step := []byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"x"}]}}`)
	for _, id := range []string{"gone", "keep"} {
		if _, err := a.Get(ctx, id, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Submit(ctx, id, "", collab.Submission{Version: 0, Steps: [][]byte{step}, ClientID: collab.ClientID("1")}); err != nil {
			t.Fatal(err)
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	// b waits on both documents at version 1.
	waited := make(chan error, 2)
	for _, id := range []string{"gone", "keep"} {
		sub, err := b.Subscribe(waitCtx, id, "w", 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		go func() {
			_, err := sub.Next(waitCtx)
			waited <- err
		}()
	}
	if err := a.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; !errors.Is(err, collab.ErrNotFound) {
		t.Fatalf("b's waiter on the deleted document: %v, want ErrNotFound", err)
	}
	if ok, err := b.Exists(ctx, "gone"); err != nil || ok {
		t.Errorf("b: Exists(gone) = %v, %v", ok, err)
	}
	// The restore of keep to version 0 reaches b's waiter as a step.
	if _, err := a.Restore(ctx, "keep", "", 0, "ann"); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("b's waiter on keep: %v", err)
	}
	st, err := b.Get(ctx, "keep", "")
	for err == nil && st.Version < 2 && waitCtx.Err() == nil {
		time.Sleep(time.Millisecond)
		st, err = b.Get(ctx, "keep", "")
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := string(st.DocJSON); st.Version != 2 || got != `{"type":"doc","content":[{"type":"paragraph"}]}` {
		t.Errorf("b: keep at version %d: %s", st.Version, got)
	}
}

// TestAuthoritiesRecreate: a document deleted through one node and
// created again through another starts after the deleted one's last
// version (the database keeps it), so that neither node gives a client
// of the deleted document, at its version, the new one's steps, nor
// takes its submission.
func TestAuthoritiesRecreate(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	sa := open(t, url)
	sb := open(t, url+"&application_name=b")
	a, b := newAuthority(t, sa), newAuthority(t, sb)
	defer sa.Close()
	defer sb.Close()
	for i, c := range "OLD-O" {
		if _, err := a.Submit(ctx, "d", "", collab.Submission{Version: int64(i), ClientID: collab.ClientID("1"),
			Steps: [][]byte{insertStep(1+i, string(c))}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Get(ctx, "d", ""); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	st, err := b.Get(ctx, "d", "")
	if err != nil {
		t.Fatal(err)
	}
	if st.Version <= 5 {
		t.Errorf("created again at version %d, not after the deleted document's 5", st.Version)
	}
	for i, c := range "NEW-OWNE" {
		if _, err := b.Submit(ctx, "d", "", collab.Submission{Version: st.Version + int64(i), ClientID: collab.ClientID("2"),
			Steps: [][]byte{insertStep(1+i, string(c))}}); err != nil {
			t.Fatal(err)
		}
	}
	want := st.Version + 8
	// a learns of it from the notices.
	deadline := time.Now().Add(wait)
	for {
		got, err := a.Get(ctx, "d", "")
		if err == nil && got.Version == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a did not reach version %d: %d, %v", want, got.Version, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, au := range []*collab.Authority{a, b} {
		if ev, err := au.Events(ctx, "d", "", 5, 0); !errors.Is(err, collab.ErrHistoryGone) {
			t.Errorf("Events at the old version 5: %d steps to %d, %v; want ErrHistoryGone", len(ev.Steps), ev.Version, err)
		}
		for _, v := range []int64{5, 8} {
			sub := collab.Submission{Version: v, ClientID: collab.ClientID("1"), Steps: [][]byte{[]byte(`{"stepType":"replace","from":1,"to":6}`)}}
			if _, err := au.Submit(ctx, "d", "", sub); !errors.Is(err, collab.ErrConflict) {
				t.Errorf("Submit at the old document's version %d: %v, want ErrConflict", v, err)
			}
		}
		got, err := au.Get(ctx, "d", "")
		if err != nil || !bytes.Contains(got.DocJSON, []byte(`"text":"NEW-OWNE"`)) {
			t.Errorf("the document: %s, %v; want NEW-OWNE", got.DocJSON, err)
		}
	}
}

// insertStep is a step of the basic schema inserting text at pos.
func insertStep(pos int, text string) []byte {
	return []byte(`{"stepType":"replace","from":` + strconv.Itoa(pos) + `,"to":` + strconv.Itoa(pos) +
		`,"slice":{"content":[{"type":"text","text":` + strconv.Quote(text) + `}]}}`)
}

// nextEvents returns the events of id after version and commentVersion
// once there are some (or, for a user, once the user count changes).
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
