package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

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

// TestReaped runs a test binary that starts a cluster and exits without
// Main's cleanup, as a test timeout does: the cluster is stopped and its
// directory removed all the same.
func TestReaped(t *testing.T) {
	if os.Getenv("PGTEST_LEAK") == "1" {
		URL(t)
		fmt.Println("dir", cluster.dir)
		os.Exit(0)
	}
	URL(t) // skips or fails as the other tests when PostgreSQL is missing
	cmd := exec.Command(os.Args[0], "-test.run=^TestReaped$")
	cmd.Env = append(os.Environ(), "PGTEST_LEAK=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the leaking binary: %v\n%s", err, out)
	}
	_, dir, ok := strings.Cut(strings.TrimSpace(string(out)), "dir ")
	if !ok || !strings.HasPrefix(dir, os.TempDir()) {
		t.Fatalf("the leaking binary said %q", out)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still there a minute after its binary ended", dir)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// No postmaster runs on it any more.
	if out, err := exec.Command("pgrep", "-f", "postgres -D "+dir).Output(); err == nil {
		t.Errorf("a postmaster still runs on %s: %s", dir, out)
	}
}

// TestStopStart checks that Stop ends the connections and refuses new
// ones, and that Start brings the cluster back on its socket with its
// data.
func TestStopStart(t *testing.T) {
	ctx := context.Background()
	u := URL(t)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	Stop(t)
	defer func() {
		if Stopped() {
			Start(t)
		}
	}()
	if !Stopped() {
		t.Error("Stopped after Stop: false")
	}
	if _, err := conn.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("a connection of the stopped cluster still answers")
	}
	if c, err := pgx.Connect(ctx, u); err == nil {
		c.Close(ctx)
		t.Error("the stopped cluster takes connections")
	}
	Start(t)
	if Stopped() {
		t.Error("Stopped after Start: true")
	}
	conn2, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("after Start: %v", err)
	}
	defer conn2.Close(ctx)
	var x int
	if err := conn2.QueryRow(ctx, "SELECT x FROM kept").Scan(&x); err != nil || x != 7 {
		t.Errorf("after Start: the table holds %d (%v), want 7", x, err)
	}
}
