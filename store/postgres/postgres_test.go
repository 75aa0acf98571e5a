package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmauthority/pmauthority/internal/pgtest"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func open(t testing.TB, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, Options{MaxConns: 8, StatementTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, pgtest.URL(t)) })
	t.Logf("PostgreSQL started in %v", pgtest.Started())
}

// TestOpenConcurrent opens several stores on a new database at once: the
// migrations run once and every store works.
func TestOpenConcurrent(t *testing.T) {
	url := pgtest.URL(t)
	const n = 6
	stores := make([]*Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = Open(context.Background(), url, Options{}) })
	}
	wg.Wait()
	ctx := context.Background()
	for i, s := range stores {
		if errs[i] != nil {
			t.Fatalf("Open %d: %v", i, errs[i])
		}
		defer s.Close()
		if err := s.Create(ctx, fmt.Sprint("d", i), "basic", []byte(`{}`), nil); err != nil {
			t.Errorf("Create on store %d: %v", i, err)
		}
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows, maxv int
	if err := conn.QueryRow(ctx, "SELECT count(*), max(version) FROM pma_migrations").Scan(&rows, &maxv); err != nil {
		t.Fatal(err)
	}
	if rows != len(migrations) || maxv != len(migrations) {
		t.Errorf("pma_migrations has %d rows up to %d, want %d", rows, maxv, len(migrations))
	}
	// A database whose schema is newer than the program's is refused.
	if _, err := conn.Exec(ctx, "INSERT INTO pma_migrations (version) VALUES ($1)", len(migrations)+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, url, Options{}); err == nil || !strings.Contains(err.Error(), "newer than this program") {
		t.Errorf("Open on a newer schema: %v", err)
	}
}

// TestConflictAcrossStores appends at one version from two stores on one
// database: exactly one wins, and the loser changed nothing.
func TestConflictAcrossStores(t *testing.T) {
	url := pgtest.URL(t)
	a, b := open(t, url), open(t, url)
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	if err := a.Create(ctx, "d", "basic", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	step := func(tag string) []store.Step { return []store.Step{{JSON: []byte(tag), ClientID: []byte(`1`)}} }
	if err := a.Append(ctx, "d", 0, step(`"a"`), []byte(`"ma"`)); err != nil {
		t.Fatal(err)
	}
	if err := b.Append(ctx, "d", 0, step(`"b"`), []byte(`"mb"`)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second append at 0 from another store: %v, want ErrConflict", err)
	}
	h, err := b.Load(ctx, "d")
	if err != nil || h.Version != 1 || h.MetaSeq != 1 {
		t.Fatalf("head %+v, %v", h, err)
	}
	steps, err := b.Steps(ctx, "d", 0, 5)
	if err != nil || len(steps) != 1 || string(steps[0].JSON) != `"a"` {
		t.Errorf("steps %+v, %v", steps, err)
	}
}

// TestRaceAcrossStores lets two stores on one database race to append
// at the version each last read, many times: exactly one wins each
// version, and the log holds the winners' steps only.
func TestRaceAcrossStores(t *testing.T) {
	url := pgtest.URL(t)
	stores := []*Store{open(t, url), open(t, url)}
	for _, s := range stores {
		defer s.Close()
	}
	ctx := context.Background()
	if err := stores[0].Create(ctx, "d", "basic", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	const workers, tries = 4, 250 // per store
	var (
		mu        sync.Mutex
		winner    = map[int64]string{}
		conflicts int
		wg        sync.WaitGroup
	)
	for si, s := range stores {
		for w := range workers {
			wg.Go(func() {
				for i := range tries {
					h, err := s.Load(ctx, "d")
					if err != nil {
						t.Error(err)
						return
					}
					json := fmt.Sprintf(`{"s":%d,"w":%d,"i":%d}`, si, w, i)
					err = s.AppendIf(ctx, "d", h.Version, []store.Step{{JSON: []byte(json)}}, h.MetaSeq, []byte(json))
					mu.Lock()
					switch {
					case err == nil:
						if prev, ok := winner[h.Version]; ok {
							t.Errorf("two appends at %d succeeded: %s and %s", h.Version, prev, json)
						}
						winner[h.Version] = json
					case errors.Is(err, store.ErrConflict):
						conflicts++
					default:
						t.Error(err)
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	h, err := stores[1].Load(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != int64(len(winner)) || h.MetaSeq != h.Version || int(h.Version)+conflicts != 2*workers*tries {
		t.Errorf("version %d, metadata %d, %d winners, %d conflicts, %d tries", h.Version, h.MetaSeq, len(winner), conflicts, 2*workers*tries)
	}
	steps, err := stores[0].Steps(ctx, "d", 0, h.Version)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if want := winner[st.Version-1]; string(st.JSON) != want {
			t.Fatalf("step %d = %s, want the winner's %s", st.Version, st.JSON, want)
		}
	}
	t.Logf("%d versions won, %d conflicts", h.Version, conflicts)
}

// TestOpenErrors checks the errors of a malformed URL and of a database
// that cannot be reached: clear, and without the password.
func TestOpenErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, url := range []string{
		"postgres://user:s3cretpw@host:notaport/db",
		"host=/x port=abc password=s3cretpw",
		"postgres://user:s3cretpw@/db?host=/nonexistent-dir&connect_timeout=5",
	} {
		_, err := Open(ctx, url, Options{})
		if err == nil {
			t.Errorf("Open(%s) succeeded", url)
			continue
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("Open's error shows the password: %v", err)
		}
		if !strings.HasPrefix(err.Error(), "postgres: ") {
			t.Errorf("Open's error %q does not say it is the postgres store's", err)
		}
	}
	if _, err := Open(ctx, pgtest.URL(t), Options{MaxConns: -1}); err == nil {
		t.Error("Open with a negative pool size succeeded")
	}
}

// TestStatementTimeout checks that the Store's statements run with the
// configured statement_timeout.
func TestStatementTimeout(t *testing.T) {
	s, err := Open(context.Background(), pgtest.URL(t), Options{StatementTimeout: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got, app string
	if err := s.pool.QueryRow(context.Background(), "SELECT current_setting('statement_timeout'), current_setting('application_name')").Scan(&got, &app); err != nil || got != "1500ms" || app != "pmauthority" {
		t.Errorf("statement_timeout %q, application_name %q (%v), want 1500ms and pmauthority", got, app, err)
	}
}

func TestCheck(t *testing.T) {
	s := open(t, pgtest.URL(t))
	if err := s.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	s.Close()
	if err := s.Check(); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Check after Close: %v, want ErrClosed", err)
	}
}

func TestPayload(t *testing.T) {
	for _, n := range []store.Notice{
		{ID: "a", Version: 0},
		{ID: "a b\x00ü/+", Version: 12, MetaOnly: true},
		{ID: "x", Version: -1},
		{ID: strings.Repeat("y", 5000), Version: 1 << 40},
	} {
		if got := parsePayload(payload(n.ID, n.Version, n.MetaOnly)); got != n {
			t.Errorf("payload of %+v read as %+v", n, got)
		}
	}
	long := strings.Repeat("z", 8000)
	if p := payload(long, 1, false); len(p) > maxPayload || parsePayload(p) != (store.Notice{}) {
		t.Errorf("payload of a long id: %d bytes, read as %+v, want a check of everything", len(p), parsePayload(p))
	}
	for _, p := range []string{"", "1 s", "x s YQ", "1 q YQ", "1 s !!", "1 s "} {
		if got := parsePayload(p); got != (store.Notice{}) {
			t.Errorf("parsePayload(%q) = %+v, want a check of everything", p, got)
		}
	}
}

// TestMigrateFromOne opens a database at migration 1 (one snapshot per
// document, in its row) that holds a document: the migrations after it
// run, the document reads back, and it keeps older snapshots and takes
// checkpoints from then on.
func TestMigrateFromOne(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		`CREATE TABLE pma_migrations (version int PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())`,
		migrations[0],
		`INSERT INTO pma_migrations (version) VALUES (1)`,
		`INSERT INTO pma_docs (id, schema_name, version, oldest, meta, snap_version, snap_doc, updated)
			VALUES ('\x64', '\x6261736963', 2, 1, '\x7b7d', 1, '\x7b2276223a317d', 1)`,
		`INSERT INTO pma_steps VALUES ('\x64', 2, '\x7b7d', '\x31', '', 1)`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s := open(t, url)
	defer s.Close()
	var maxv int
	if err := conn.QueryRow(ctx, "SELECT max(version) FROM pma_migrations").Scan(&maxv); err != nil || maxv != len(migrations) {
		t.Fatalf("migrated to %d, %v; want %d", maxv, err, len(migrations))
	}
	h, err := s.Load(ctx, "d")
	if err != nil || h.Version != 2 || h.Oldest != 1 || h.Snapshot.Version != 1 || string(h.Snapshot.Doc) != `{"v":1}` {
		t.Fatalf("Load after the migration: %+v, %v", h, err)
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

// TestMigrateCommit starts from a database at schema version 3 (steps
// without commit records): after the migration the old step reads back
// with a nil Commit, and a step appended after it keeps its own.
func TestMigrateCommit(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	qs := []string{`CREATE TABLE pma_migrations (version int PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())`}
	qs = append(qs, migrations[:3]...)
	qs = append(qs,
		`INSERT INTO pma_migrations (version) VALUES (1), (2), (3)`,
		`INSERT INTO pma_docs (id, schema_name, version, oldest, meta, snap_version, snap_doc, updated)
			VALUES ('\x64', '\x6261736963', 1, 0, '\x7b7d', 0, '\x7b7d', 1)`,
		`INSERT INTO pma_steps VALUES ('\x64', 1, '\x7b7d', '\x31', '', 1)`,
	)
	for _, q := range qs {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s := open(t, url)
	defer s.Close()
	var maxv int
	if err := conn.QueryRow(ctx, "SELECT max(version) FROM pma_migrations").Scan(&maxv); err != nil || maxv != len(migrations) {
		t.Fatalf("migrated to %d, %v; want %d", maxv, err, len(migrations))
	}
	rec := []byte(`{"ref":"r1","n":1,"dropped":[]}`)
	if err := s.Append(ctx, "d", 1, []store.Step{{JSON: []byte(`{}`), ClientID: []byte("2"), Commit: rec}}, nil); err != nil {
		t.Fatal(err)
	}
	steps, err := s.Steps(ctx, "d", 0, 2)
	if err != nil || len(steps) != 2 || steps[0].Commit != nil || string(steps[1].Commit) != string(rec) {
		t.Fatalf("steps after the migration: %+v, %v", steps, err)
	}
	want := int64(len(`{}`)*4 + 2*len("1") + len(rec)) // meta, snapshot, two steps
	if n, err := s.Size(ctx, "d"); err != nil || n != want {
		t.Errorf("Size = %d, %v; want %d", n, err, want)
	}
}
