package pgtest

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestURL checks that each URL is a fresh database of its own that takes
// writes.
func TestURL(t *testing.T) {
	ctx := context.Background()
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatalf("two calls returned one URL %s", a)
	}
	t.Logf("the cluster started in %v", Started())
	for _, u := range []string{a, b} {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "CREATE TABLE t (x int)"); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		var db string
		if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil || !strings.Contains(u, "/"+db+"?") {
			t.Errorf("%s: connected to database %q (%v)", u, db, err)
		}
	}
}

// TestFindBinMissing checks that a PMA_POSTGRES_BIN without the binaries
// is an error naming it.
func TestFindBinMissing(t *testing.T) {
	t.Setenv("PMA_POSTGRES_BIN", t.TempDir())
	if _, err := findBin(); err == nil || !strings.Contains(err.Error(), "PMA_POSTGRES_BIN") {
		t.Errorf("findBin with an empty PMA_POSTGRES_BIN: %v", err)
	}
}
