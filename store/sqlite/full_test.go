package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/store"
)

// setMaxPages caps the size of s's database at n pages (PRAGMA
// max_page_count), between two batches of the writer.
func setMaxPages(t *testing.T, s *Store, n int64) {
	t.Helper()
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	if _, err := s.w.conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA max_page_count = %d", n)); err != nil {
		t.Fatal(err)
	}
}

// pageCount returns the number of pages of s's database.
func pageCount(t *testing.T, s *Store) int64 {
	t.Helper()
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	var n int64
	if err := s.w.conn.QueryRowContext(context.Background(), "PRAGMA page_count").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDiskFull checks what a full disk does, with SQLite's
// max_page_count standing in for it (SQLite answers both with
// SQLITE_FULL, "database or disk is full"): appends, creates and
// snapshots fail and change nothing, reads go on, the same append
// succeeds once there is room again, and everything acknowledged is there
// after a reopen.
func TestDiskFull(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	s := open(t, path, Options{})
	big := func(n int) []store.Step {
		steps := make([]store.Step, n)
		for i := range steps {
			steps[i] = store.Step{JSON: []byte(`{"text":"` + strings.Repeat("x", 20000) + `"}`), ClientID: []byte(`1`), Time: time.Unix(int64(i), 0)}
		}
		return steps
	}
	if err := s.Create(ctx, "d", "basic", []byte(`{"doc":0}`), []byte(`m0`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "d", 0, big(2), []byte(`m2`)); err != nil {
		t.Fatal(err)
	}
	before, err := s.Load(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}

	setMaxPages(t, s, pageCount(t, s))
	full := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "database or disk is full") {
			t.Fatalf("%s on a full disk: %v", what, err)
		}
	}
	full("Append", s.Append(ctx, "d", 2, big(3), []byte(`m5`)))
	full("Create", s.Create(ctx, "e", "basic", []byte(`{"doc":"`+strings.Repeat("y", 50000)+`"}`), nil))
	full("SaveSnapshot", s.SaveSnapshot(ctx, "d", store.Snapshot{Version: 2, Doc: []byte(`{"doc":"` + strings.Repeat("z", 50000) + `"}`)}, 2))
	after, err := s.Load(ctx, "d")
	if err != nil {
		t.Fatalf("Load on a full disk: %v", err)
	}
	if after.Version != before.Version || after.MetaSeq != before.MetaSeq || string(after.Meta) != string(before.Meta) || after.Snapshot.Version != before.Snapshot.Version {
		t.Fatalf("head after the failed writes %+v, want %+v", after, before)
	}
	if _, err := s.Load(ctx, "e"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Load of the document whose creation failed: %v", err)
	}
	if steps, err := s.Steps(ctx, "d", 0, 2); err != nil || len(steps) != 2 {
		t.Fatalf("Steps on a full disk: %d, %v", len(steps), err)
	}

	setMaxPages(t, s, 1<<30)
	want := big(3)
	if err := s.Append(ctx, "d", 2, want, []byte(`m5`)); err != nil {
		t.Fatalf("the same Append with room again: %v", err)
	}
	closeStore(t, s)

	s = open(t, path, Options{})
	defer closeStore(t, s)
	h, err := s.Load(ctx, "d")
	if err != nil || h.Version != 5 || h.MetaSeq != before.MetaSeq+1 {
		t.Fatalf("reopened head %+v, %v", h, err)
	}
	if entries, err := s.MetaEntries(ctx, "d", h.MetaSeq-1, h.MetaSeq); err != nil || len(entries) != 1 || string(entries[0].JSON) != "m5" {
		t.Fatalf("reopened metadata entries %+v, %v", entries, err)
	}
	got, err := s.Steps(ctx, "d", 2, 5)
	if err != nil || len(got) != 3 {
		t.Fatalf("reopened steps: %d, %v", len(got), err)
	}
	for i, st := range got {
		if st.Version != int64(i+3) || !bytes.Equal(st.JSON, want[i].JSON) {
			t.Errorf("reopened step %d: version %d, %d bytes", i+3, st.Version, len(st.JSON))
		}
	}
}
