package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/store/storetest"
)

// inWriter runs f with the writer to itself, between batches.
func inWriter(s *Store, f func(w *writer)) {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	f(s.w)
}

// fold folds the log and fails the test when that fails.
func fold(t testing.TB, s *Store) {
	t.Helper()
	inWriter(s, func(w *writer) {
		if err := w.fold(); err != nil {
			t.Error(err)
		}
	})
}

// setFold sets the writer's fold thresholds (rows; bytes as well).
func setFold(s *Store, rows int64) {
	inWriter(s, func(w *writer) { w.foldRows, w.foldBytes = rows, rows })
}

// logRows returns the number of rows in the step log.
func logRows(t testing.TB, s *Store) int64 {
	t.Helper()
	var n int64
	if err := s.rdb.QueryRow("SELECT count(*) FROM log").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStoreFolding runs the shared suite with a writer that folds the log
// after every batch, so that steps are read from the steps table, and with
// one that never folds, so that they are read from the log.
func TestStoreFolding(t *testing.T) {
	for _, tt := range []struct {
		name string
		rows int64
	}{{"EveryBatch", 1}, {"Never", math.MaxInt64}} {
		t.Run(tt.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store {
				s := open(t, filepath.Join(t.TempDir(), "store.db"), Options{Sync: SyncNormal})
				setFold(s, tt.rows)
				return s
			})
		})
	}
}

// TestFoldModel applies random operations to the SQLite store, folding
// now and then, and to memstore, and checks after each that both agree:
// steps that moved from the log to the steps table, or were pruned or
// deleted while in the log, read the same as in memory.
func TestFoldModel(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	s := open(t, path, Options{Sync: SyncNormal})
	defer func() { closeStore(t, s) }()
	m := memstore.New()
	rng := rand.New(rand.NewPCG(1, 2))
	ids := []string{"a", "b", "c", "d", "e"}
	both := func(f func(st store.Store) error) {
		t.Helper()
		errS, errM := f(s), f(m)
		if (errS == nil) != (errM == nil) {
			t.Fatalf("sqlite: %v, memstore: %v", errS, errM)
		}
	}
	for _, id := range ids {
		both(func(st store.Store) error { return st.Create(ctx, id, "basic", []byte(`{}`), nil) })
	}
	versions := map[string]int64{}
	step := func(id string, v int64) store.Step {
		return store.Step{JSON: fmt.Appendf(nil, `{"%s":%d}`, id, v), ClientID: []byte(`1`), Time: time.Unix(0, v)}
	}
	for i := range 1000 {
		id := ids[rng.IntN(len(ids))]
		switch r := rng.IntN(100); {
		case r < 70:
			n := 1 + rng.IntN(4)
			steps := make([]store.Step, n)
			for j := range steps {
				steps[j] = step(id, versions[id]+1+int64(j))
			}
			both(func(st store.Store) error { return st.Append(ctx, id, versions[id], steps, nil) })
			versions[id] += int64(n)
		case r < 85:
			v := versions[id] - rng.Int64N(3)
			h, err := m.Load(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			v = max(v, h.Snapshot.Version)
			keep := rng.Int64N(8) - 1
			both(func(st store.Store) error {
				return st.SaveSnapshot(ctx, id, store.Snapshot{Version: v, Doc: fmt.Appendf(nil, `{"at":%d}`, v)}, keep)
			})
		case r < 88:
			both(func(st store.Store) error { return st.Delete(ctx, id) })
			both(func(st store.Store) error { return st.Create(ctx, id, "basic", []byte(`{"again":true}`), nil) })
			versions[id] = 0
		case r < 95:
			fold(t, s)
		case r < 96:
			closeStore(t, s)
			s = open(t, path, Options{Sync: SyncNormal})
			if n := logRows(t, s); n != 0 {
				t.Fatalf("%d rows in the log after reopening", n)
			}
		}
		for _, id := range ids {
			hs, errS := s.Load(ctx, id)
			hm, errM := m.Load(ctx, id)
			if errS != nil || errM != nil || fmt.Sprint(hs) != fmt.Sprint(hm) {
				t.Fatalf("op %d: %s: sqlite %+v %v, memstore %+v %v", i, id, hs, errS, hm, errM)
			}
			from := hs.Oldest + rng.Int64N(hs.Version-hs.Oldest+1)
			ss, errS := s.Steps(ctx, id, from, hs.Version)
			sm, errM := m.Steps(ctx, id, from, hs.Version)
			if errS != nil || errM != nil || len(ss) != len(sm) {
				t.Fatalf("op %d: %s: steps after %d: sqlite %d %v, memstore %d %v", i, id, from, len(ss), errS, len(sm), errM)
			}
			for j := range ss {
				if ss[j].Version != sm[j].Version || !bytes.Equal(ss[j].JSON, sm[j].JSON) || !ss[j].Time.Equal(sm[j].Time) {
					t.Fatalf("op %d: %s: step %d: sqlite %+v, memstore %+v", i, id, sm[j].Version, ss[j], sm[j])
				}
			}
			if from > 0 && from == hs.Oldest {
				if _, err := s.Steps(ctx, id, from-1, hs.Version); !errors.Is(err, store.ErrCompacted) {
					t.Fatalf("op %d: %s: steps after %d: %v, want ErrCompacted", i, id, from-1, err)
				}
			}
		}
	}
	// After a last fold, the steps table holds exactly the kept steps.
	fold(t, s)
	for _, id := range ids {
		h, _ := m.Load(ctx, id)
		var n, lo, hi int64
		err := s.rdb.QueryRow("SELECT count(*), coalesce(min(version), 0), coalesce(max(version), 0) FROM steps WHERE doc_id = ?", id).
			Scan(&n, &lo, &hi)
		if err != nil {
			t.Fatal(err)
		}
		if n != h.Version-h.Oldest || n > 0 && (lo != h.Oldest+1 || hi != h.Version) {
			t.Errorf("%s: %d step rows %d…%d, want %d…%d", id, n, lo, hi, h.Oldest+1, h.Version)
		}
	}
	if n := logRows(t, s); n != 0 {
		t.Errorf("%d rows in the log after a fold", n)
	}
}

// TestFoldFails checks that a fold that fails changes nothing: the steps
// stay in the log, where readers find them, and a later fold moves them.
func TestFoldFails(t *testing.T) {
	ctx := context.Background()
	s, _ := unfoldedStore(t)
	steps := mkSteps(10)
	for v := range int64(10) {
		if err := s.Append(ctx, "d", v, steps[v:v+1], nil); err != nil {
			t.Fatal(err)
		}
	}
	// The fold fails half-way, at step 6.
	inWriter(s, func(w *writer) {
		if _, err := w.conn.ExecContext(ctx, `CREATE TEMP TRIGGER refuse BEFORE INSERT ON main.steps
			WHEN NEW.version = 6 BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
			t.Error(err)
		}
	})
	folds := s.w.folds.Load()
	inWriter(s, func(w *writer) {
		if err := w.fold(); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("fold: %v, want the trigger's error", err)
		}
	})
	if n := s.w.folds.Load() - folds; n != 0 {
		t.Errorf("%d folds despite the trigger", n)
	}
	checkSteps := func(what string) {
		t.Helper()
		got, err := s.Steps(ctx, "d", 0, 10)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for i, st := range got {
			if st.Version != int64(i+1) || !bytes.Equal(st.JSON, steps[i].JSON) {
				t.Fatalf("%s: step %d is %d %s", what, i+1, st.Version, st.JSON)
			}
		}
		if len(got) != 10 {
			t.Fatalf("%s: %d steps", what, len(got))
		}
	}
	if n := logRows(t, s); n != 10 {
		t.Errorf("%d rows in the log after a failed fold, want 10", n)
	}
	checkSteps("after a failed fold")
	// The writer goes on, and so do folds once the cause is gone.
	if err := s.Append(ctx, "d", 10, nil, []byte(`m`)); err != nil {
		t.Fatal(err)
	}
	inWriter(s, func(w *writer) {
		if _, err := w.conn.ExecContext(ctx, "DROP TRIGGER temp.refuse"); err != nil {
			t.Fatal(err)
		}
	})
	fold(t, s)
	if n := logRows(t, s); n != 0 {
		t.Errorf("%d rows in the log after a fold", n)
	}
	checkSteps("after a fold")
	closeStore(t, s)
}

// mkSteps returns n steps with distinct JSON.
func mkSteps(n int) []store.Step {
	steps := make([]store.Step, n)
	for i := range steps {
		steps[i] = store.Step{JSON: fmt.Appendf(nil, `{"i":%d}`, i+1), ClientID: []byte(`7`)}
	}
	return steps
}

// TestOpenFolds checks that Open folds what a store left in the log.
func TestOpenFolds(t *testing.T) {
	ctx := context.Background()
	s, path := unfoldedStore(t)
	if err := s.Append(ctx, "d", 0, mkSteps(5), nil); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	s = open(t, path, Options{})
	defer closeStore(t, s)
	if n := logRows(t, s); n != 0 {
		t.Errorf("%d rows in the log after Open", n)
	}
	if got, err := s.Steps(ctx, "d", 0, 5); err != nil || len(got) != 5 {
		t.Errorf("Steps: %d, %v", len(got), err)
	}
}

// TestMigrate opens a store written with the first layout, which had no
// step log, and checks that it reads and writes as before.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(layouts[0] + fmt.Sprintf(`;
		PRAGMA application_id = %d; PRAGMA user_version = 1;
		INSERT INTO docs VALUES ('d', 'basic', 2, 0, CAST('m' AS BLOB), 1, 2);
		INSERT INTO steps VALUES ('d', 1, CAST('{"a":1}' AS BLOB), CAST('1' AS BLOB), 10),
			('d', 2, CAST('{"a":2}' AS BLOB), CAST('1' AS BLOB), 20);
		INSERT INTO snapshots VALUES ('d', 0, CAST('{}' AS BLOB), 1)`, applicationID))
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, path, Options{})
	defer closeStore(t, s)
	var version int64
	if err := s.rdb.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != schemaVersion {
		t.Fatalf("user_version %d, %v; want %d", version, err, schemaVersion)
	}
	h, err := s.Load(ctx, "d")
	if err != nil || h.Version != 2 || string(h.Meta) != "m" || string(h.Snapshot.Doc) != "{}" {
		t.Fatalf("Load: %+v, %v", h, err)
	}
	if err := s.Append(ctx, "d", 1, mkSteps(1), nil); !errors.Is(err, store.ErrConflict) {
		t.Errorf("Append at 1: %v, want ErrConflict", err)
	}
	if err := s.Append(ctx, "d", 2, mkSteps(1), nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.Steps(ctx, "d", 0, 3)
	if err != nil || len(got) != 3 || string(got[1].JSON) != `{"a":2}` || string(got[2].JSON) != `{"i":1}` {
		t.Fatalf("Steps: %v, %v", got, err)
	}
}

// TestWALBounded appends while readers keep read transactions open
// without pause, each started before the previous one ends, so that a
// checkpoint always finds a reader of an older state, and checks that the
// write-ahead log stays bounded all the same.
func TestWALBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in short mode")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store.db")
	s := open(t, path, Options{Sync: SyncNormal})
	defer closeStore(t, s)
	const limit = 1 << 20
	setFold(s, 256)
	inWriter(s, func(w *writer) {
		w.walLimit = limit
		if _, err := w.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA journal_size_limit = %d", limit)); err != nil {
			t.Error(err)
		}
	})
	const docs = 16
	for d := range docs {
		if err := s.Create(ctx, fmt.Sprint("d", d), "basic", []byte(`{}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	var readers, appenders sync.WaitGroup
	for r := range 2 {
		readers.Go(func() {
			time.Sleep(time.Duration(r) * 2 * time.Millisecond)
			for !stop.Load() {
				// A read as long as the Store's are short.
				s.readers.RLock()
				tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
				if err != nil {
					s.readers.RUnlock()
					t.Error(err)
					return
				}
				var n int64
				if err := tx.QueryRow("SELECT count(*) FROM docs").Scan(&n); err != nil {
					t.Error(err)
				}
				time.Sleep(4 * time.Millisecond)
				tx.Rollback()
				s.readers.RUnlock()
			}
		})
	}
	pad := strings.Repeat("x", 2000)
	for d := range docs {
		appenders.Go(func() {
			id := fmt.Sprint("d", d)
			for v := range int64(300) {
				err := s.Append(ctx, id, v, []store.Step{{JSON: fmt.Appendf(nil, `{"v":%d,"pad":%q}`, v, pad)}}, nil)
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	done, largest := make(chan struct{}), make(chan int64)
	go func() {
		var most int64
		for {
			if fi, err := os.Stat(path + "-wal"); err == nil {
				most = max(most, fi.Size())
			}
			select {
			case <-done:
				largest <- most
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	appenders.Wait()
	stop.Store(true)
	readers.Wait()
	close(done)
	most := <-largest
	// 16 × 300 steps of 2 KB are 10 MB: without RESTART checkpoints the log
	// would hold them all.
	t.Logf("largest write-ahead log: %d bytes", most)
	if bound := int64(limit + 4<<20); most > bound {
		t.Errorf("write-ahead log grew to %d bytes, want at most %d", most, bound)
	}
}

// unfoldedStore opens a store in a new file that never folds by itself,
// with the document "d", and returns it and its path.
func unfoldedStore(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.db")
	s := open(t, path, Options{})
	setFold(s, math.MaxInt64)
	if err := s.Create(context.Background(), "d", "basic", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	return s, path
}
