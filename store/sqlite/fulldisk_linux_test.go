package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pmauthority/pmauthority/store"
)

// smallFS mounts a tmpfs of size bytes on a new temporary directory for
// the test, or skips the test when it cannot mount (not root, or no
// permission to mount in this container).
func smallFS(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs of %s for a full disk (needs root, as in CI): %v", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk appends steps of 64 KB to the document id until the store
// refuses for a full disk, then takes what space is left with a file,
// and returns the version reached.
func fillDisk(t *testing.T, s *Store, dir, id string) int64 {
	t.Helper()
	ctx := context.Background()
	step := store.Step{JSON: []byte(`{"text":"` + strings.Repeat("f", 64<<10) + `"}`), ClientID: []byte(`1`)}
	// A document made again under an id starts after the deleted one.
	h, err := s.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	v := h.Version
	for ; ; v++ {
		err := s.Append(ctx, id, v, []store.Step{step}, nil)
		if err != nil {
			if !strings.Contains(err.Error(), "full") {
				t.Fatalf("Append at %d: %v, want a full disk", v, err)
			}
			break
		}
		if v > 10_000 {
			t.Fatal("the disk never filled")
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, "filler"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	return v
}

// roomAgain checks that after a Delete on the full disk at dir the store
// at path gave room back to the file system, and allocated its reserve
// again.
func roomAgain(t *testing.T, dir, path string) {
	t.Helper()
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	_, err := os.Stat(path + "-reserve")
	if free := int64(fs.Bavail) * fs.Bsize; err != nil || free < 1<<20 {
		t.Errorf("after the Delete: %d bytes free, the reserve: %v", free, err)
	}
}

// TestDeleteOnFullDisk fills a small file system with one document's
// steps: Delete of the document still succeeds, with the room of the
// reserve (Options.Reserve), where a delete needing room in the
// write-ahead log would fail like every other write; the file shrinks,
// giving the room back to the file system, the store takes writes again
// and the reserve is allocated again, for the next time.
func TestDeleteOnFullDisk(t *testing.T) {
	ctx := context.Background()
	dir := smallFS(t, "16m")
	path := filepath.Join(dir, "store.db")
	s := open(t, path, Options{Reserve: 6 << 20})
	defer closeStore(t, s)
	if _, err := os.Stat(path + "-reserve"); err != nil {
		t.Fatalf("no reserve: %v", err)
	}
	for _, id := range []string{"big", "small"} {
		if err := s.Create(ctx, id, "basic", []byte(`{"type":"doc"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	v := fillDisk(t, s, dir, "big")
	if err := s.Create(ctx, "more", "basic", []byte(`{"type":"doc","text":"`+strings.Repeat("m", 100_000)+`"}`), nil); err == nil {
		t.Fatal("Create succeeded on the full disk")
	}
	if err := s.Delete(ctx, "big"); err != nil {
		t.Fatalf("Delete of a document of %d steps on the full disk: %v", v, err)
	}
	roomAgain(t, dir, path)
	if _, err := s.Load(ctx, "big"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Load after the Delete: %v", err)
	}
	// What it held is free for the others.
	if err := s.Append(ctx, "small", 0, []store.Step{{JSON: []byte(`{"text":"` + strings.Repeat("s", 200_000) + `"}`), ClientID: []byte(`2`)}}, nil); err != nil {
		t.Fatalf("Append after the Delete: %v", err)
	}
	if h, err := s.Load(ctx, "small"); err != nil || h.Version != 1 {
		t.Fatalf("Load(small) = %+v, %v", h, err)
	}
	// Full again: the reserve makes room for a Delete again.
	if err := s.Create(ctx, "big", "basic", []byte(`{"type":"doc"}`), nil); err != nil {
		t.Fatal(err)
	}
	fillDisk(t, s, dir, "big")
	if err := s.Delete(ctx, "big"); err != nil {
		t.Fatalf("a second Delete on the full disk: %v", err)
	}
	roomAgain(t, dir, path)
	if err := s.Append(ctx, "small", 1, []store.Step{{JSON: []byte(`{"text":"` + strings.Repeat("s", 200_000) + `"}`), ClientID: []byte(`2`)}}, nil); err != nil {
		t.Fatalf("Append after the second Delete: %v", err)
	}
}
