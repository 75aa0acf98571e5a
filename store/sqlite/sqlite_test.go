package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/storetest"
)

func TestStore(t *testing.T) {
	for _, mode := range []Sync{SyncFull, SyncNormal} {
		t.Run(mode.String(), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store {
				// A directory that does not exist yet: Open creates it.
				return open(t, filepath.Join(t.TempDir(), "sub", "dir", "store.db"), Options{Sync: mode})
			})
		})
	}
}

func open(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// closeStore closes s and fails the test when that fails.
func closeStore(t testing.TB, s *Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReopen checks that everything survives closing and reopening.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	s := open(t, path, Options{})
	steps := []store.Step{
		{JSON: []byte(`{"a":1}`), ClientID: []byte(`1`), Time: time.Unix(100, 5)},
		{JSON: []byte(`{"a":2}`), ClientID: []byte(`"x"`), Time: time.Unix(200, 6)},
		{JSON: []byte(`{"a":3}`), ClientID: nil, Time: time.Unix(300, 7)},
	}
	if err := s.Create(ctx, "d", "basic", []byte(`{"doc":0}`), []byte(`m0`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "d", 0, steps, []byte(`m3`)); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSnapshot(ctx, "d", store.Snapshot{Version: 2, Doc: []byte(`{"doc":2}`), Meta: []byte(`m2`), MetaSeq: 1}, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, "e", "other", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	wantList, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)

	s = open(t, path, Options{Sync: SyncNormal})
	defer closeStore(t, s)
	h, err := s.Load(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	if h.Schema != "basic" || h.Version != 3 || string(h.Meta) != "m2" || h.MetaVersion != 2 || h.MetaBase != 1 ||
		h.MetaSeq != 1 || h.Oldest != 0 || h.Snapshot.Version != 2 || string(h.Snapshot.Doc) != `{"doc":2}` {
		t.Errorf("reopened head %+v", h)
	}
	got, err := s.Steps(ctx, "d", 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range got {
		want := steps[i+1]
		if st.Version != int64(i+2) || !bytes.Equal(st.JSON, want.JSON) || !bytes.Equal(st.ClientID, want.ClientID) || !st.Time.Equal(want.Time) {
			t.Errorf("reopened step %d = %+v, want %+v", i+2, st, want)
		}
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(list) != fmt.Sprint(wantList) {
		t.Errorf("reopened List = %v, want %v", list, wantList)
	}
}

// TestSnapshotsKept checks that a document keeps its snapshots from the
// oldest kept step on, and only those.
func TestSnapshotsKept(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "store.db"), Options{})
	defer closeStore(t, s)
	for _, id := range []string{"a", "b"} {
		if err := s.Create(ctx, id, "basic", []byte(`{}`), nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, id, 0, make([]store.Step, 9), nil); err != nil {
			t.Fatal(err)
		}
	}
	kept := func(id, want string) {
		t.Helper()
		var got string
		if err := s.rdb.QueryRow("SELECT coalesce(group_concat(version, ' '), '') FROM (SELECT version FROM snapshots WHERE doc_id = ? ORDER BY version)", id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s keeps the snapshots at %q, want %q", id, got, want)
		}
	}
	for v := range int64(6) {
		if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: v, Doc: []byte(`{}`)}, -1); err != nil {
			t.Fatal(err)
		}
	}
	kept("a", "0 1 2 3 4 5")
	kept("b", "0")
	snap := func(v, keep int64) {
		t.Helper()
		if err := s.SaveSnapshot(ctx, "a", store.Snapshot{Version: v, Doc: []byte(`{}`), Meta: []byte(`{}`)}, keep); err != nil {
			t.Fatal(err)
		}
	}
	snap(6, 4) // prunes up to 5, the previous snapshot
	kept("a", "5 6")
	snap(6, 3) // prunes up to the snapshot at 6
	kept("a", "6")
	snap(8, 3) // keeps 7 to 9: the snapshot at 6 is their base
	kept("a", "6 8")
	snap(9, 2) // the bound 7 has no snapshot: pruning stops at 6
	kept("a", "6 8 9")
	snap(9, 0)
	kept("a", "9")
	kept("b", "0")
}

// TestBatch runs batches of operations through the writer's commit
// directly (the writer goroutine is idle meanwhile) and checks that a
// failing operation fails alone unless it leaves the transaction in doubt.
func TestBatch(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "store.db"), Options{})
	defer closeStore(t, s)
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if err := s.Create(ctx, id, "basic", []byte(`{}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	step := []store.Step{{JSON: []byte(`{}`)}}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	run := func(ops ...*op) []error {
		t.Helper()
		errs := make([]error, len(ops))
		inWriter(s, func(w *writer) { w.commit(ops, errs) })
		return errs
	}
	mk := func(ctx context.Context, run func(w *writer) error) *op { return &op{ctx: ctx, run: run} }
	versions := func() string {
		t.Helper()
		list, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, d := range list {
			fmt.Fprintf(&b, "%s%d ", d.ID, d.Version)
		}
		return b.String()
	}

	commits := s.w.commits.Load()
	errs := run(
		mk(ctx, s.appendOp("a", 0, step, -1, nil)),
		mk(ctx, s.appendOp("b", 7, step, -1, nil)),       // conflict
		mk(cancelled, s.appendOp("c", 0, step, -1, nil)), // cancelled while queued
		mk(ctx, s.appendOp("missing", 0, step, -1, nil)),
		mk(ctx, s.appendOp("d", 0, step, -1, nil)),
	)
	if errs[0] != nil || !errors.Is(errs[1], store.ErrConflict) || !errors.Is(errs[2], context.Canceled) ||
		!errors.Is(errs[3], store.ErrNotFound) || errs[4] != nil {
		t.Errorf("mixed batch: %v", errs)
	}
	if got := versions(); got != "a1 b0 c0 d1 e0 " {
		t.Errorf("after mixed batch: %s", got)
	}
	if n := s.w.commits.Load() - commits; n != 1 {
		t.Errorf("mixed batch took %d commits", n)
	}

	// A trigger makes the INSERT of the second step fail after the
	// document's version was advanced: the savepoint undoes both.
	if err := execWriter(s, `CREATE TEMP TRIGGER refuse BEFORE INSERT ON main.log
		WHEN NEW.doc_id = 'e' AND NEW.version = 2 BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
		t.Fatal(err)
	}
	errs = run(mk(ctx, s.appendOp("e", 0, make([]store.Step, 3), -1, nil)), mk(ctx, s.appendOp("a", 1, step, -1, nil)))
	if errs[0] == nil || errs[1] != nil {
		t.Errorf("batch with a constraint failure: %v", errs)
	}
	if got := versions(); got != "a2 b0 c0 d1 e0 " {
		t.Errorf("after batch with a constraint failure: %s", got)
	}
	if err := execWriter(s, "DROP TRIGGER temp.refuse"); err != nil {
		t.Fatal(err)
	}

	// Appends leave their steps pending until the end of the batch: a
	// Delete in the same batch deletes them too, and the document created
	// again has only its own.
	errs = run(
		mk(ctx, s.appendOp("e", 0, step, -1, nil)),
		mk(ctx, deleteOp("e")),
		mk(ctx, s.createOp("e", "basic", []byte(`{}`), nil)),
		mk(ctx, s.appendOp("e", 2, []store.Step{{JSON: []byte(`"again"`)}}, -1, nil)),
	)
	for i, err := range errs {
		if err != nil {
			t.Errorf("batch with a delete: op %d: %v", i, err)
		}
	}
	for _, when := range []string{"before", "after"} {
		if got, err := s.Steps(ctx, "e", 2, 5); err != nil || len(got) != 1 || string(got[0].JSON) != `"again"` {
			t.Errorf("%s a fold: steps of the document created again: %v, %v", when, got, err)
		}
		inWriter(s, func(w *writer) {
			if err := w.fold(); err != nil {
				t.Fatal(err)
			}
		})
	}
	if got := versions(); got != "a2 b0 c0 d1 e3 " {
		t.Errorf("after batch with a delete: %s", got)
	}

	// An unexpected error rolls back the whole batch.
	boom := errors.New("disk on fire")
	errs = run(
		mk(ctx, s.appendOp("a", 2, step, -1, nil)),
		mk(ctx, func(w *writer) error {
			if err := s.appendOp("b", 0, step, -1, nil)(w); err != nil {
				return err
			}
			return boom
		}),
		mk(ctx, s.appendOp("c", 0, step, -1, nil)),
	)
	for i, err := range errs {
		if !errors.Is(err, boom) {
			t.Errorf("batch with an unexpected error: op %d: %v", i, err)
		}
	}
	if got := versions(); got != "a2 b0 c0 d1 e3 " {
		t.Errorf("after batch with an unexpected error: %s", got)
	}

	// A failing COMMIT (here: a deferred foreign key) fails every
	// operation, and nothing of the batch is kept.
	if err := execWriter(s, `PRAGMA foreign_keys = ON;
		CREATE TABLE fk (doc_id TEXT REFERENCES docs (id) DEFERRABLE INITIALLY DEFERRED)`); err != nil {
		t.Fatal(err)
	}
	commits = s.w.commits.Load()
	errs = run(
		mk(ctx, s.appendOp("a", 2, step, -1, nil)),
		mk(ctx, func(w *writer) error {
			_, err := w.conn.ExecContext(ctx, "INSERT INTO fk VALUES ('nowhere')")
			return err
		}),
	)
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "commit") {
			t.Errorf("batch with a failing commit: op %d: %v", i, err)
		}
	}
	if n := s.w.commits.Load() - commits; n != 0 {
		t.Errorf("failed batch counted %d commits", n)
	}
	if got := versions(); got != "a2 b0 c0 d1 e3 " {
		t.Errorf("after a failing commit: %s", got)
	}
	// The writer goes on.
	if err := s.Append(ctx, "a", 2, step, nil); err != nil {
		t.Fatal(err)
	}
	if got := versions(); got != "a3 b0 c0 d1 e3 " {
		t.Errorf("after the next append: %s", got)
	}
}

// TestCloseDrains closes the store while appends are queued: each append
// either is acknowledged and durable, or fails with ErrClosed and is not.
func TestCloseDrains(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	s := open(t, path, Options{})
	const docs = 16
	acked := make([]int64, docs)
	var wg sync.WaitGroup
	for d := range docs {
		id := fmt.Sprint("d", d)
		if err := s.Create(ctx, id, "basic", []byte(`{}`), nil); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for v := int64(0); ; v++ {
				err := s.Append(ctx, id, v, []store.Step{{JSON: fmt.Appendf(nil, `{"v":%d}`, v+1)}}, nil)
				if errors.Is(err, store.ErrClosed) {
					return
				} else if err != nil {
					t.Error(err)
					return
				}
				acked[d] = v + 1
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	closeStore(t, s)
	wg.Wait()
	s = open(t, path, Options{})
	defer closeStore(t, s)
	total := int64(0)
	for d := range docs {
		h, err := s.Load(ctx, fmt.Sprint("d", d))
		if err != nil {
			t.Fatal(err)
		}
		if h.Version != acked[d] {
			t.Errorf("d%d: version %d after reopening, %d acknowledged", d, h.Version, acked[d])
		}
		total += acked[d]
	}
	if total == 0 {
		t.Error("no append was acknowledged before Close")
	}
}

// TestGroupCommit checks that concurrent appends share commits, also on
// one CPU (GOMAXPROCS=1), where the appenders and the writer take turns on
// one thread, and with SyncNormal, whose commits are too short for the
// runtime to hand the CPU to the appenders while the writer syncs.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		for _, mode := range []Sync{SyncFull, SyncNormal} {
			t.Run(fmt.Sprintf("%v/GOMAXPROCS=%d", mode, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				s := open(t, filepath.Join(t.TempDir(), "store.db"), Options{Sync: mode})
				defer closeStore(t, s)
				// The serial creates leave the writer after 65 batches of
				// one operation, where it has stopped yielding before each
				// batch (see writeLoop): group commit must come back.
				const docs, rounds = 65, 10
				for d := range docs {
					if err := s.Create(ctx, fmt.Sprint("d", d), "basic", []byte(`{}`), nil); err != nil {
						t.Fatal(err)
					}
				}
				commits := s.w.commits.Load()
				var wg sync.WaitGroup
				for d := range docs {
					wg.Go(func() {
						for v := range int64(rounds) {
							if err := s.Append(ctx, fmt.Sprint("d", d), v, []store.Step{{JSON: []byte(`{}`)}}, nil); err != nil {
								t.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				n := s.w.commits.Load() - commits
				t.Logf("%d appends in %d commits", docs*rounds, n)
				if n > docs*rounds/4 {
					t.Errorf("%d appends took %d commits, want at most a quarter as many", docs*rounds, n)
				}
			})
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, sqlText string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		db, err := sql.Open("sqlite", dsn(path))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(sqlText); err != nil {
			t.Fatal(err)
		}
		return path
	}
	newer := filepath.Join(dir, "newer.db")
	closeStore(t, open(t, newer, Options{}))
	write("newer.db", "PRAGMA user_version = 99")
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("not a database "), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path string
		opts Options
		want string
	}{
		{newer, Options{}, fmt.Sprintf("schema version 99, newer than the %d this pmauthority knows", schemaVersion)},
		{write("foreign.db", "CREATE TABLE t (x)"), Options{}, "not a pmauthority store"},
		{garbage, Options{}, "garbage.db"},
		{filepath.Join(blocker, "store.db"), Options{}, "not a directory"},
		{filepath.Join(dir, "ok.db"), Options{Sync: 7}, "unknown Sync(7)"},
	} {
		s, err := Open(tt.path, tt.opts)
		if err == nil {
			s.Close()
			t.Errorf("Open(%s) succeeded", tt.path)
		} else if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%s): %v, want %q", tt.path, err, tt.want)
		}
	}
}

// TestPathChars checks that a path is used as is, characters that SQLite
// URIs give meaning to included.
func TestPathChars(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a?b#c%20d&_pragma=x.db")
	closeStore(t, open(t, path, Options{}))
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	closeStore(t, open(t, path, Options{}))
}

// execWriter runs q on the writer's connection, between batches.
func execWriter(s *Store, q string) (err error) {
	inWriter(s, func(w *writer) { _, err = w.conn.ExecContext(context.Background(), q) })
	return err
}

// TestMigrateMeta opens a file of layout 2, where docs.meta was replaced
// whole at every Append and referred to the latest version: it becomes
// the metadata base at that version, and entries follow it.
func TestMigrateMeta(t *testing.T) {
	ctx := context.Background()
	path := oldFile(t, 2,
		`INSERT INTO docs VALUES ('d', 'basic', 2, 1, CAST('{"comments":[]}' AS BLOB), 1, 1)`,
		`INSERT INTO snapshots VALUES ('d', 1, CAST('{"doc":1}' AS BLOB), 1)`,
		`INSERT INTO steps VALUES ('d', 2, CAST('{"s":2}' AS BLOB), CAST('1' AS BLOB), 1)`,
	)

	s := open(t, path, Options{})
	h, err := s.Load(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	if string(h.Meta) != `{"comments":[]}` || h.MetaVersion != 2 || h.MetaBase != 0 || h.MetaSeq != 0 || h.Version != 2 || h.Oldest != 1 {
		t.Fatalf("migrated head %+v", h)
	}
	if err := s.Append(ctx, "d", 2, nil, []byte("e1")); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	s = open(t, path, Options{})
	defer closeStore(t, s)
	entries, err := s.MetaEntries(ctx, "d", 0, 1)
	if err != nil || len(entries) != 1 || entries[0].Seq != 1 || entries[0].Version != 2 || string(entries[0].JSON) != "e1" {
		t.Fatalf("entries after the migration: %+v, %v", entries, err)
	}
	var version int64
	if err := s.rdb.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != schemaVersion {
		t.Errorf("user_version %d, %v; want %d", version, err, schemaVersion)
	}
}

// TestAppendLeavesMetaBase checks that an Append does not rewrite the
// metadata base: after a snapshot with a base of 1 MB, 20 Appends of a
// small step write a few pages each to the write-ahead log, not the base
// again each time.
func TestAppendLeavesMetaBase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path, Options{})
	defer closeStore(t, s)
	if err := s.Create(ctx, "d", "basic", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	base := bytes.Repeat([]byte("m"), 1<<20)
	if err := s.SaveSnapshot(ctx, "d", store.Snapshot{Version: 0, Doc: []byte(`{}`), Meta: base}, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.rdb.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	for v := range int64(20) {
		if err := s.Append(ctx, "d", v, []store.Step{{JSON: []byte(`{"s":1}`)}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 1<<20 {
		t.Errorf("20 Appends of one small step wrote %d bytes to the write-ahead log", fi.Size())
	}
	if h, err := s.Load(ctx, "d"); err != nil || !bytes.Equal(h.Meta, base) || h.Version != 20 {
		t.Errorf("head: version %d, %d bytes of metadata base, %v", h.Version, len(h.Meta), err)
	}
}

// TestMigrateAuthor opens a file of layout 3 (steps without authors, one
// of them still in the log): its steps read back with no author, and
// steps appended after the migration keep theirs, in the log and once
// folded into the steps table.
func TestMigrateAuthor(t *testing.T) {
	ctx := context.Background()
	path := oldFile(t, 3,
		`INSERT INTO docs (id, schema, version, oldest, created, updated) VALUES ('d', 'basic', 2, 0, 1, 1)`,
		`INSERT INTO snapshots VALUES ('d', 0, CAST('{"doc":0}' AS BLOB), 1)`,
		`INSERT INTO steps VALUES ('d', 1, CAST('{"s":1}' AS BLOB), CAST('1' AS BLOB), 1)`,
		`INSERT INTO log (doc_id, version, json, client_id, time) VALUES ('d', 2, CAST('{"s":2}' AS BLOB), CAST('1' AS BLOB), 1)`,
	)

	s := open(t, path, Options{})
	steps, err := s.Steps(ctx, "d", 0, 2)
	if err != nil || len(steps) != 2 || steps[0].Author != "" || steps[1].Author != "" || string(steps[1].JSON) != `{"s":2}` {
		t.Fatalf("steps of the old layout: %+v, %v", steps, err)
	}
	added := []store.Step{{JSON: []byte(`{"s":3}`), ClientID: []byte("2"), Author: "alice"}, {JSON: []byte(`{"s":4}`), ClientID: []byte("2")}}
	if err := s.Append(ctx, "d", 2, added, nil); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		steps, err := s.Steps(ctx, "d", 0, 4)
		if err != nil || len(steps) != 4 {
			t.Fatalf("%s: %d steps, %v", when, len(steps), err)
		}
		for i, want := range []string{"", "", "alice", ""} {
			if steps[i].Author != want {
				t.Errorf("%s: step %d author %q, want %q", when, i+1, steps[i].Author, want)
			}
		}
	}
	check("in the log")
	fold(t, s)
	check("folded")
	closeStore(t, s)
	s = open(t, path, Options{})
	defer closeStore(t, s)
	check("reopened")
}

// TestMigrateCommit opens a file of layout 6 (steps without commit
// records, one of them still in the log): its steps read back with a nil
// Commit, and steps appended after the migration keep theirs, in the log,
// once folded into the steps table, and after a reopen.
func TestMigrateCommit(t *testing.T) {
	ctx := context.Background()
	path := oldFile(t, 6,
		`INSERT INTO docs (id, schema, version, oldest, created, updated) VALUES ('d', 'basic', 2, 0, 1, 1)`,
		`INSERT INTO meta_bases VALUES ('d', 0, 0, CAST('{}' AS BLOB))`,
		`INSERT INTO snapshots VALUES ('d', 0, CAST('{"doc":0}' AS BLOB), 1)`,
		`INSERT INTO steps VALUES ('d', 1, CAST('{"s":1}' AS BLOB), CAST('1' AS BLOB), 1, 'alice')`,
		`INSERT INTO log (doc_id, version, json, client_id, time, author) VALUES ('d', 2, CAST('{"s":2}' AS BLOB), CAST('1' AS BLOB), 1, NULL)`,
	)

	s := open(t, path, Options{})
	var version int64
	if err := s.rdb.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != schemaVersion {
		t.Fatalf("user_version %d, %v; want %d", version, err, schemaVersion)
	}
	steps, err := s.Steps(ctx, "d", 0, 2)
	if err != nil || len(steps) != 2 || steps[0].Commit != nil || steps[1].Commit != nil ||
		steps[0].Author != "alice" || string(steps[1].JSON) != `{"s":2}` {
		t.Fatalf("steps of the old layout: %+v, %v", steps, err)
	}
	rec := []byte(`{"ref":"r1","n":2,"dropped":[1]}`)
	added := []store.Step{{JSON: []byte(`{"s":3}`), ClientID: []byte("2"), Commit: rec}, {JSON: []byte(`{"s":4}`), ClientID: []byte("2")}}
	if err := s.Append(ctx, "d", 2, added, nil); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		steps, err := s.Steps(ctx, "d", 0, 4)
		if err != nil || len(steps) != 4 {
			t.Fatalf("%s: %d steps, %v", when, len(steps), err)
		}
		for i, want := range [][]byte{nil, nil, rec, nil} {
			if !bytes.Equal(steps[i].Commit, want) || (steps[i].Commit == nil) != (want == nil) {
				t.Errorf("%s: step %d commit %q, want %q", when, i+1, steps[i].Commit, want)
			}
		}
		size := int64(len(`{}`) + len(`{"doc":0}`) + 4*len(`{"s":1}1`) + len("alice") + len(rec))
		if n, err := s.Size(ctx, "d"); err != nil || n != size {
			t.Errorf("%s: Size %d, %v; want %d", when, n, err, size)
		}
	}
	check("in the log")
	fold(t, s)
	check("folded")
	closeStore(t, s)
	s = open(t, path, Options{})
	defer closeStore(t, s)
	check("reopened")
}

// TestMigrateCheckpoints opens a file of layout 4 (no checkpoints, one
// snapshot per document): the document reads back, and it keeps older
// snapshots and takes checkpoints from then on.
func TestMigrateCheckpoints(t *testing.T) {
	ctx := context.Background()
	path := oldFile(t, 4,
		`INSERT INTO docs (id, schema, version, oldest, created, updated) VALUES ('d', 'basic', 2, 1, 1, 1)`,
		`INSERT INTO meta_bases VALUES ('d', 1, 0, CAST('{}' AS BLOB))`,
		`INSERT INTO snapshots VALUES ('d', 1, CAST('{"v":1}' AS BLOB), 1)`,
		`INSERT INTO steps VALUES ('d', 2, CAST('{"s":2}' AS BLOB), CAST('1' AS BLOB), 1, NULL)`,
	)

	s := open(t, path, Options{})
	defer closeStore(t, s)
	var version int64
	if err := s.rdb.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != schemaVersion {
		t.Fatalf("user_version %d, %v; want %d", version, err, schemaVersion)
	}
	h, err := s.Load(ctx, "d")
	if err != nil || h.Version != 2 || h.Oldest != 1 || h.Snapshot.Version != 1 {
		t.Fatalf("Load after the upgrade: %+v, %v", h, err)
	}
	if err := s.SaveSnapshot(ctx, "d", store.Snapshot{Version: 2, Doc: []byte(`{"v":2}`)}, -1); err != nil {
		t.Fatal(err)
	}
	if err := s.AddCheckpoint(ctx, "d", store.Checkpoint{Name: "c", Version: 2, Doc: []byte(`{"v":2}`)}); err != nil {
		t.Fatal(err)
	}
	if snap, err := s.SnapshotAt(ctx, "d", 1); err != nil || string(snap.Doc) != `{"v":1}` {
		t.Errorf("SnapshotAt(1) = %+v, %v: the older snapshot is kept", snap, err)
	}
	if list, err := s.Checkpoints(ctx, "d"); err != nil || len(list) != 1 {
		t.Errorf("Checkpoints = %v, %v", list, err)
	}
}

// oldFile writes a store file of layout version n (its first n layouts)
// holding rows (INSERT statements), and returns its path.
func oldFile(t *testing.T, n int, rows ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range append(append(slices.Clone(layouts[:n]), rows...),
		fmt.Sprintf("PRAGMA application_id = %d", applicationID),
		fmt.Sprintf("PRAGMA user_version = %d", n),
	) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return path
}
