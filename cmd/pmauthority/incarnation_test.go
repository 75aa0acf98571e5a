package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

// TestBackupVerifyRecreated: verify, backup and restore take a store
// whose documents start after version 0 (created again after a Delete),
// and the copy keeps the last versions of the deleted documents, so that
// a document created again in it starts after them too.
func TestBackupVerifyRecreated(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	st, err := sqlite.Open(filepath.Join(data, "pmauthority.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := schemas.NewRegistry(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	a, err := collab.New(collab.Config{Store: st, Schemas: reg.Lookup, DefaultSchema: "basic", AutoCreate: true, SnapshotEvery: 10})
	if err != nil {
		t.Fatal(err)
	}
	write := func(id string, n int) int64 {
		t.Helper()
		s, err := a.Get(ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			sub := collab.Submission{Version: s.Version + int64(i), ClientID: collab.ClientID("1"),
				Steps: [][]byte{[]byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"ab"}]}}`)}}
			if i == 2 {
				sub.Comments = []collab.CommentEvent{{Type: "create", ID: 1, From: 1, To: 5, Text: "note"}}
			}
			if _, err := a.Submit(ctx, id, "", sub); err != nil {
				t.Fatal(err)
			}
		}
		return s.Version + int64(n)
	}
	write("d", 7)
	write("gone", 3)
	for _, id := range []string{"d", "gone"} {
		if err := a.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if v := write("d", 25); v != 8+25 {
		t.Fatalf("the document created again is at version %d, want %d", v, 8+25)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// Its steps replay from its first snapshot, at its first version 8
	// (the background snapshots after it come when they come).
	const summary = "verified 1 documents: 25 steps (25 replayed on snapshots), "
	if code, stdout, stderr := runCmd(t, "verify", "--data", data); code != 0 || !strings.Contains(stdout, "\nOK\n") ||
		!strings.HasPrefix(stdout, summary) || !strings.Contains(stdout, ", 1 comments") {
		t.Errorf("verify: exit %d\n%s%s", code, stdout, stderr)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if code, stdout, stderr := runCmd(t, "backup", "--data", data, "--to", backup); code != 0 {
		t.Fatalf("backup: exit %d\n%s%s", code, stdout, stderr)
	}
	restored := t.TempDir()
	if code, stdout, stderr := runCmd(t, "restore", "--from", backup, "--data", restored); code != 0 {
		t.Fatalf("restore: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runCmd(t, "verify", "--data", restored); code != 0 || !strings.Contains(stdout, "\nOK\n") {
		t.Errorf("verify of the restored copy: exit %d\n%s%s", code, stdout, stderr)
	}
	st, err = sqlite.Open(filepath.Join(restored, "pmauthority.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Create(ctx, "gone", "basic", []byte(`{"type":"doc","content":[{"type":"paragraph"}]}`), nil); err != nil {
		t.Fatal(err)
	}
	if h, err := st.Load(ctx, "gone"); err != nil || h.Version != 4 {
		t.Errorf("a document created again in the restored copy: version %d, %v; want 4", h.Version, err)
	}
}
