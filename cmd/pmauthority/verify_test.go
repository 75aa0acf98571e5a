package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, to damage a store

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/pgtest"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/postgres"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

// runCmd runs the command line args, returning its exit code, stdout and
// stderr.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// writeDocs writes through an Authority over st the document "d" (25
// insertions of "ab") and "ok" (5), each with a comment, then closes
// st. The Authority saves its snapshots every 10 steps and at Close; it
// is closed after every 10th step and opened again, so that they are at
// exactly 10, 20 and the end.
func writeDocs(t *testing.T, st store.Store) {
	t.Helper()
	ctx := context.Background()
	reg, err := schemas.NewRegistry(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	open := func() *collab.Authority {
		a, err := collab.New(collab.Config{Store: st, Schemas: reg.Lookup, DefaultSchema: "basic", AutoCreate: true, SnapshotEvery: 10})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := open()
	for _, doc := range []struct {
		id string
		n  int
	}{{"d", 25}, {"ok", 5}} {
		if _, err := a.Get(ctx, doc.id, ""); err != nil {
			t.Fatal(err)
		}
		for v := range doc.n {
			sub := collab.Submission{Version: int64(v), ClientID: collab.ClientID("1"),
				Steps: [][]byte{[]byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"ab"}]}}`)}}
			if v == 3 {
				sub.Comments = []collab.CommentEvent{{Type: "create", ID: 1, From: 1, To: 5, Text: "note"}}
			}
			if _, err := a.Submit(ctx, doc.id, "", sub); err != nil {
				t.Fatal(err)
			}
			if (v+1)%10 == 0 {
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				a = open()
			}
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// damages are the ways the verify tests damage document "d", as SQL for
// each store's tables, with the problem verify must report.
var damages = []struct {
	name             string
	sqlite, postgres []string
	want             string
}{
	{"Healthy", nil, nil, ""},
	{"SnapshotAltered",
		[]string{`UPDATE snapshots SET doc = CAST(replace(CAST(doc AS TEXT), 'abab', 'abxb') AS BLOB) WHERE doc_id = 'd' AND version = 25`},
		[]string{`UPDATE pma_docs SET snap_doc = convert_to(replace(convert_from(snap_doc, 'UTF8'), 'abab', 'abxb'), 'UTF8') WHERE id = 'd'`},
		`doc "d" version 25: snapshot: not the document that the steps before it make`},
	{"SnapshotInvalid",
		[]string{`UPDATE snapshots SET doc = CAST('{"type":"doc","content":[{"type":"nope"}]}' AS BLOB) WHERE doc_id = 'd' AND version = 25`},
		[]string{`UPDATE pma_docs SET snap_doc = convert_to('{"type":"doc","content":[{"type":"nope"}]}', 'UTF8') WHERE id = 'd'`},
		`doc "d" version 25: snapshot: not a document of schema "basic"`},
	{"OlderSnapshotAltered",
		[]string{`UPDATE snapshots SET doc = CAST(replace(CAST(doc AS TEXT), 'abab', 'abxb') AS BLOB) WHERE doc_id = 'd' AND version = 10`},
		[]string{`UPDATE pma_snapshots SET doc = convert_to(replace(convert_from(doc, 'UTF8'), 'abab', 'abxb'), 'UTF8') WHERE doc_id = 'd' AND version = 10`},
		`doc "d" version 10: snapshot: not the document that the steps before it make`},
	{"StepMissing",
		[]string{`DELETE FROM steps WHERE doc_id = 'd' AND version = 12`, `DELETE FROM log WHERE doc_id = 'd' AND version = 12`},
		[]string{`DELETE FROM pma_steps WHERE doc_id = 'd' AND version = 12`},
		`doc "d" version 12: step missing`},
	{"LastStepMissing",
		[]string{`DELETE FROM steps WHERE doc_id = 'd' AND version = 25`, `DELETE FROM log WHERE doc_id = 'd' AND version = 25`},
		[]string{`DELETE FROM pma_steps WHERE doc_id = 'd' AND version = 25`},
		`doc "d" version 25: step missing`},
	{"StepDoesNotApply",
		[]string{`UPDATE steps SET json = CAST('{"stepType":"replace","from":999,"to":999}' AS BLOB) WHERE doc_id = 'd' AND version = 7`,
			`UPDATE log SET json = CAST('{"stepType":"replace","from":999,"to":999}' AS BLOB) WHERE doc_id = 'd' AND version = 7`},
		[]string{`UPDATE pma_steps SET json = convert_to('{"stepType":"replace","from":999,"to":999}', 'UTF8') WHERE doc_id = 'd' AND version = 7`},
		`doc "d" version 7: step does not apply`},
}

// checkVerify runs verify with args and checks its exit code and output
// for a store damaged (or not) as want says.
func checkVerify(t *testing.T, want string, args ...string) {
	t.Helper()
	code, stdout, stderr := runCmd(t, append([]string{"verify"}, args...)...)
	if !strings.HasPrefix(stdout, "verified 2 documents: ") {
		t.Errorf("summary: %s", stdout)
	}
	if want == "" {
		if code != 0 || !strings.Contains(stdout, "\nOK\n") {
			t.Errorf("verify of a healthy store: exit %d\n%s%s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, "verified 2 documents: 30 steps (30 replayed on snapshots), 6 snapshots (4 compared with the replay), 2 comments") {
			t.Errorf("summary: %s", stdout)
		}
		return
	}
	if code != 1 || !strings.Contains(stdout, "\n  "+want) {
		t.Errorf("exit %d, want 1 and a line %s:\n%s%s", code, want, stdout, stderr)
	}
	if strings.Contains(stdout, `doc "ok"`) {
		t.Errorf("a problem reported for the intact document:\n%s", stdout)
	}
}

// sqliteDocs writes the documents of writeDocs into the SQLite store of
// a new data directory, and returns the directory and the store's
// database, opened without the store.
func sqliteDocs(t *testing.T) (string, *sql.DB) {
	t.Helper()
	data := t.TempDir()
	path := filepath.Join(data, "pmauthority.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeDocs(t, st)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	return data, db
}

// TestVerifySQLite damages the rows of a SQLite store written by an
// Authority and checks that verify reports each damage.
func TestVerifySQLite(t *testing.T) {
	for _, tt := range damages {
		t.Run(tt.name, func(t *testing.T) {
			data, db := sqliteDocs(t)
			for _, q := range tt.sqlite {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			checkVerify(t, tt.want, "--data", data)
		})
	}
}

// TestVerifyPostgres damages the rows of a PostgreSQL store written by an
// Authority and checks that verify reports each damage.
func TestVerifyPostgres(t *testing.T) {
	ctx := context.Background()
	for _, tt := range damages {
		t.Run(tt.name, func(t *testing.T) {
			url := pgtest.URL(t)
			st, err := postgres.Open(ctx, url, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			writeDocs(t, st)
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range tt.postgres {
				// The ids are bytea: compare them as text.
				q = strings.ReplaceAll(q, "id = 'd'", "id = convert_to('d', 'UTF8')")
				if _, err := conn.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			conn.Close(ctx)
			checkVerify(t, tt.want, "--store", "postgres", "--postgres-url", url)
		})
	}
}

func TestVerifyFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--data", filepath.Join(t.TempDir(), "none")}, 1, "no store in --data"},
		{[]string{"--store", "memory"}, 2, "--store must be sqlite or postgres"},
		{[]string{"--max-problems", "0"}, 2, "--max-problems must be positive"},
		{[]string{"--store", "postgres", "--postgres-url", ""}, 2, "needs the database's URL"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
	} {
		t.Setenv(postgresURLEnv, "")
		code, _, stderr := runCmd(t, append([]string{"verify"}, tt.args...)...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("verify %q: exit %d, %s; want %d, %s", tt.args, code, stderr, tt.code, tt.want)
		}
	}
}

// TestVerifyMaxProblems checks that verify lists at most --max-problems
// problems and counts them all.
func TestVerifyMaxProblems(t *testing.T) {
	data, db := sqliteDocs(t)
	defer db.Close()
	for _, table := range []string{"steps", "log"} {
		q := fmt.Sprintf(`UPDATE %s SET json = CAST('{"stepType":"nope"}' AS BLOB) WHERE version > 10`, table)
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, _ := runCmd(t, "verify", "--data", data, "--max-problems", "3")
	if code != 1 || strings.Count(stdout, "\n  doc ") != 3 || !strings.Contains(stdout, "problems in 1 documents, the first 3:") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}
