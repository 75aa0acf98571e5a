package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/store"
)

// TestFilesDeletedOrReplaced: once the write-ahead log is deleted, or the
// database file replaced, under an open store, no write is acknowledged
// any more (they would go to files that no longer exist at their paths,
// and be lost at the next restart), Check says why, and reads go on.
func TestFilesDeletedOrReplaced(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, want string
		break_     func(path string) error
	}{
		{"WAL deleted", "write-ahead log", func(path string) error { return os.Remove(path + "-wal") }},
		{"database replaced", "database file", func(path string) error {
			other := filepath.Join(filepath.Dir(path), "other.db")
			if err := os.WriteFile(other, nil, 0o644); err != nil {
				return err
			}
			return os.Rename(other, path)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pma.db")
			s, err := Open(path, Options{Sync: SyncNormal})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Create(ctx, "d", "basic", []byte(`{"type":"doc"}`), nil); err != nil {
				t.Fatal(err)
			}
			step := []store.Step{{Version: 1, JSON: []byte(`{}`), ClientID: []byte("1")}}
			if err := s.Append(ctx, "d", 0, step, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(); err != nil {
				t.Fatalf("Check before: %v", err)
			}
			if err := tc.break_(path); err != nil {
				t.Fatal(err)
			}
			step[0].Version = 2
			err = s.Append(ctx, "d", 1, step, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, store.ErrConflict) {
				t.Fatalf("Append after: %v, want an error about the %s", err, tc.want)
			}
			if err := s.Create(ctx, "e", "basic", []byte(`{"type":"doc"}`), nil); err == nil {
				t.Fatal("Create after: accepted")
			}
			if err := s.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check after: %v", err)
			}
			head, err := s.Load(ctx, "d")
			if err != nil || head.Version != 1 {
				t.Fatalf("Load after: version %d, %v; want 1", head.Version, err)
			}
		})
	}
}

// TestWALDeletedRescued: the writes acknowledged before the write-ahead
// log was deleted are copied from the still open log into the database
// file, so a store reopened on the path has them (the process could be
// killed at once after).
func TestWALDeletedRescued(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "pma.db")
	s, err := Open(path, Options{Sync: SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, "d", "basic", []byte(`{"type":"doc"}`), nil); err != nil {
		t.Fatal(err)
	}
	for v := range int64(5) {
		step := []store.Step{{Version: v + 1, JSON: []byte(`{}`), ClientID: []byte("1")}}
		if err := s.Append(ctx, "d", v, step, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	step := []store.Step{{Version: 6, JSON: []byte(`{}`), ClientID: []byte("1")}}
	err = s.Append(ctx, "d", 5, step, nil)
	if err == nil || !strings.Contains(err.Error(), "copied into the database file") {
		t.Fatalf("Append after the WAL was deleted: %v, want the refusal saying the writes were copied", err)
	}
	// Reopened on the same path without closing the first store (as
	// after a SIGKILL; closing would checkpoint anyway).
	r, err := Open(path, Options{Sync: SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	head, err := r.Load(ctx, "d")
	if err != nil || head.Version != 5 {
		t.Fatalf("reopened: version %d, %v; want the 5 acknowledged steps", head.Version, err)
	}
	s.Close()
}
