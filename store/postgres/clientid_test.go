package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/pgtest"
)

// TestAuthoritiesClientIDOwner: a client id whose steps one principal
// stored through one node is refused to another principal on the other
// node, which caught up with the steps from the database, and on a node
// that loads the document after them.
func TestAuthoritiesClientIDOwner(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	sa, sb, sc := open(t, url), open(t, url+"&application_name=b"), open(t, url+"&application_name=c")
	defer sa.Close()
	defer sb.Close()
	defer sc.Close()
	a, b := newAuthority(t, sa), newAuthority(t, sb)
	for _, x := range []*collab.Authority{a, b} {
		if _, err := x.Get(ctx, "d", ""); err != nil {
			t.Fatal(err)
		}
	}
	submit := func(x *collab.Authority, v int64, cid, author string) error {
		_, err := x.Submit(ctx, "d", author, collab.Submission{Version: v, ClientID: collab.ClientID(cid), Author: author,
			Steps: [][]byte{[]byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"x"}]}}`)}})
		return err
	}
	if err := submit(a, 0, "7", "alice"); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if ev, err := nextEvents(wctx, b, "d", "", 0, 0); err != nil || ev.Version != 1 {
		t.Fatalf("b's events: %+v, %v", ev, err)
	}
	if err := submit(b, 1, "7", "mallory"); !errors.Is(err, collab.ErrForbidden) {
		t.Errorf("mallory on the other node: %v, want ErrForbidden (a ClientIDError)", err)
	}
	c := newAuthority(t, sc)
	if err := submit(c, 1, "7", "mallory"); !errors.Is(err, collab.ErrForbidden) {
		t.Errorf("mallory on a node that loads the document: %v, want ErrForbidden (a ClientIDError)", err)
	}
	if err := submit(b, 1, "7", "alice"); err != nil {
		t.Errorf("alice on the other node: %v", err)
	}
}
