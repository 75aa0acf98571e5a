package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/store"
)

// TestBackupWhileWriting backs a store up while writers append to it, and
// checks that the copy is a store holding, for every document, a prefix
// of what was written: one state of the store, each log contiguous.
func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, filepath.Join(dir, "store.db"), Options{Sync: SyncNormal})
	const docs = 4
	for d := range docs {
		if err := s.Create(ctx, fmt.Sprint("doc", d), "basic", []byte(`{"type":"doc"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var written [docs]atomic.Int64
	for d := range docs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprint("doc", d)
			for v := int64(0); !stop.Load() || v < 50; v++ {
				st := store.Step{JSON: fmt.Appendf(nil, `{"v":%d}`, v+1), ClientID: []byte("1")}
				if err := s.Append(ctx, id, v, []store.Step{st}, nil); err != nil {
					t.Error(err)
					return
				}
				written[d].Store(v + 1)
				if v%40 == 39 {
					if err := s.SaveSnapshot(ctx, id, store.Snapshot{Version: v + 1, Doc: []byte(`{"type":"doc"}`)}, 30); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	// Let the writers get going, so that the backup runs among commits.
	for written[docs-1].Load() < 20 {
		if t.Failed() {
			t.FailNow()
		}
		time.Sleep(time.Millisecond)
	}
	to := filepath.Join(dir, "backup.db")
	info, err := Backup(ctx, filepath.Join(dir, "store.db"), to, BackupOptions{Progress: func(written, total int64) {}, ProgressEvery: time.Millisecond})
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	if info.Docs != docs || info.Bytes == 0 || info.Steps == 0 {
		t.Errorf("info %+v", info)
	}
	copied := open(t, to, Options{})
	defer closeStore(t, copied)
	list, err := copied.List(ctx)
	if err != nil || len(list) != docs {
		t.Fatalf("List of the copy: %v, %v", list, err)
	}
	for _, d := range list {
		h, err := copied.Load(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		steps, err := copied.Steps(ctx, d.ID, h.Oldest, h.Version)
		if err != nil {
			t.Fatalf("Steps of %s in the copy: %v", d.ID, err)
		}
		if int64(len(steps)) != h.Version-h.Oldest {
			t.Errorf("%s: %d steps after %d, want up to %d", d.ID, len(steps), h.Oldest, h.Version)
		}
		for i, st := range steps {
			if want := fmt.Sprintf(`{"v":%d}`, h.Oldest+int64(i)+1); string(st.JSON) != want || st.Version != h.Oldest+int64(i)+1 {
				t.Fatalf("%s: step %d is %s, want %s", d.ID, st.Version, st.JSON, want)
			}
		}
		if h.Version == 0 {
			t.Errorf("%s: no step in the copy", d.ID)
		}
	}
	if _, err := os.Stat(to + "-wal"); err != nil {
		t.Errorf("the copy opened as a store: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".partial-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestBackupRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "store.db")
	closeStore(t, open(t, path, Options{}))
	to := filepath.Join(dir, "exists.db")
	if err := os.WriteFile(to, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Backup(ctx, path, to, BackupOptions{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Backup to an existing file: %v, want ErrExist", err)
	}
	if data, _ := os.ReadFile(to); string(data) != "keep" {
		t.Errorf("the existing file was changed: %q", data)
	}
	missing := filepath.Join(dir, "missing", "store.db")
	if _, err := Backup(ctx, missing, filepath.Join(dir, "b1.db"), BackupOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Backup of a missing store: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Backup of a missing store created its directory: %v", err)
	}
	if _, err := Backup(ctx, to, filepath.Join(dir, "b2.db"), BackupOptions{}); err == nil {
		t.Error("Backup of a file that is not a store succeeded")
	}
	for _, name := range []string{"b1.db", "b2.db"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a failed backup left %s: %v", name, err)
		}
	}
}

func TestRestore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src", "store.db")
	s := open(t, src, Options{})
	if err := s.Create(ctx, "a", "basic", []byte(`{"type":"doc"}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "a", 0, []store.Step{{JSON: []byte(`{}`), ClientID: []byte("1")}}, nil); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(dir, "backup.db")
	if _, err := Backup(ctx, src, backup, BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)

	// Not from a file that is not a store.
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte("not a store"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(ctx, junk, filepath.Join(dir, "none", "store.db"), false, BackupOptions{}); err == nil {
		t.Error("Restore from a file that is not a store succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed restore left its directory: %v", err)
	}

	// Into a new directory.
	dst := filepath.Join(dir, "dst", "store.db")
	if _, err := Restore(ctx, backup, dst, false, BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	version := func(path string) int64 {
		t.Helper()
		s := open(t, path, Options{})
		defer closeStore(t, s)
		h, err := s.Load(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		return h.Version
	}
	if v := version(dst); v != 1 {
		t.Errorf("restored version %d, want 1", v)
	}

	// Over a store that moved on: refused without force, and with force
	// while a server has it open.
	d := open(t, dst, Options{})
	if err := d.Append(ctx, "a", 1, []store.Step{{JSON: []byte(`{}`), ClientID: []byte("1")}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(ctx, backup, dst, false, BackupOptions{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Restore over a store: %v, want ErrExist", err)
	}
	if _, err := Restore(ctx, backup, dst, true, BackupOptions{}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("Restore over an open store: %v, want in use", err)
	}
	closeStore(t, d)
	if v := version(dst); v != 2 {
		t.Errorf("refused restores changed the store: version %d, want 2", v)
	}
	if _, err := Restore(ctx, backup, dst, true, BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := version(dst); v != 1 {
		t.Errorf("restored version %d, want 1", v)
	}
}
