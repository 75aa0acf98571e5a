// Package pgtest gives tests a throwaway PostgreSQL: one cluster per test
// binary, started at the first URL call in a temporary directory, reached
// through a private unix socket only (no TCP port), and stopped and
// removed when the binary's tests are over. Each URL call creates a new
// database in it, so that tests do not see each other's tables or
// notifications.
//
// A test binary that uses it runs its tests through Main:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// The PostgreSQL server binaries (initdb, pg_ctl) are looked for in
// $PMA_POSTGRES_BIN, then in Debian's /usr/lib/postgresql/N/bin (the
// highest N), then on $PATH. When they are missing the tests that need
// them are skipped, unless PMA_REQUIRE_POSTGRES=1, which fails them. When
// the tests run as root, the cluster runs as the user postgres (initdb
// refuses root), through runuser. The cluster is made for speed, not
// durability: fsync is off.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// port names the socket file; with no TCP listener any number will do.
const port = 5432

// RequireEnv is the variable that, set to 1, makes a missing PostgreSQL
// fail the tests instead of skipping them.
const RequireEnv = "PMA_REQUIRE_POSTGRES"

var (
	inMain  atomic.Bool
	once    sync.Once
	cluster *server
	startErr,
	missing error // missing: the binaries are not installed
	dbs atomic.Int64
)

// server is a running cluster.
type server struct {
	dir     string // the temporary directory: data/ and the socket
	bin     string // the directory of initdb and pg_ctl
	asUser  string // the user to run them as, "" for this process's
	started time.Duration
	reaper  *os.Process

	mu   sync.Mutex // held by Stop and Start
	down bool       // stopped by Stop
}

// Main runs the tests of m and then stops and removes the cluster, if one
// was started, returning the exit code for os.Exit.
func Main(m *testing.M) int {
	inMain.Store(true)
	code := m.Run()
	if cluster != nil {
		if err := cluster.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// URL returns the URL of a new, empty database in the binary's cluster,
// starting the cluster at the first call. It skips t when PostgreSQL is
// not installed (fails it when PMA_REQUIRE_POSTGRES=1) and fails t when
// the cluster cannot be started or the database created.
func URL(t testing.TB) string {
	t.Helper()
	if !inMain.Load() {
		t.Fatal("pgtest: the test binary must run its tests through pgtest.Main (func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) })")
	}
	once.Do(func() { cluster, startErr = start() })
	if missing != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("pgtest: %v (%s=1 requires it)", missing, RequireEnv)
		}
		t.Skipf("pgtest: %v; skipping (install Debian's postgresql, or set %s=1 to fail instead)", missing, RequireEnv)
	}
	if startErr != nil {
		t.Fatalf("pgtest: %v", startErr)
	}
	name := fmt.Sprintf("test%d", dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, cluster.url("postgres"))
	if err != nil {
		t.Fatalf("pgtest: connecting to the cluster: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" STRATEGY FILE_COPY"); err != nil {
		t.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	return cluster.url(name)
}

// Started returns how long the cluster took to start (initdb and the
// server's start), or 0 when it was not started.
func Started() time.Duration {
	if cluster == nil {
		return 0
	}
	return cluster.started
}

// url returns the URL of the database db.
func (s *server) url(db string) string {
	q := url.Values{"host": {s.dir}, "port": {strconv.Itoa(port)}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// start makes and starts a cluster.
func start() (*server, error) {
	t0 := time.Now()
	bin, err := findBin()
	if err != nil {
		missing = err
		return nil, err
	}
	s := &server{bin: bin}
	if os.Geteuid() == 0 {
		s.asUser = "postgres"
	}
	// A short path: the socket's path must fit in about 100 bytes.
	s.dir, err = os.MkdirTemp("", "pgtest")
	if err != nil {
		return nil, err
	}
	if s.asUser != "" {
		u, err := user.Lookup(s.asUser)
		if err != nil {
			os.RemoveAll(s.dir)
			return nil, fmt.Errorf("running as root, and no user %s to run PostgreSQL as: %v", s.asUser, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(s.dir, uid, gid); err != nil {
			os.RemoveAll(s.dir)
			return nil, err
		}
	}
	data := filepath.Join(s.dir, "data")
	if err := s.run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"); err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	if err := s.startServer(); err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	s.started = time.Since(t0)
	s.reap()
	return s, nil
}

// startServer starts the server of the cluster made in s.dir.
func (s *server) startServer() error {
	opts := fmt.Sprintf("-c listen_addresses='' -k %s -p %d -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=32MB", s.dir, port)
	if err := s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-o", opts, "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("%v\n%s", err, log)
	}
	return nil
}

// Stop stops the binary's cluster, keeping its data, as an operator
// restarting PostgreSQL does: a fast shutdown, which ends every
// connection (of every database of the cluster: tests that stop it must
// not run in parallel with others that use it). Until Start, connection
// attempts fail at once (the socket is gone). It fails t when no cluster
// runs, or when it cannot be stopped.
func Stop(t testing.TB) {
	t.Helper()
	if cluster == nil {
		t.Fatal("pgtest: Stop without a cluster (call URL first)")
	}
	cluster.mu.Lock()
	defer cluster.mu.Unlock()
	if cluster.down {
		t.Fatal("pgtest: Stop: the cluster is stopped already")
	}
	if err := cluster.run("pg_ctl", "-D", filepath.Join(cluster.dir, "data"), "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
		t.Fatalf("pgtest: stopping the cluster: %v", err)
	}
	cluster.down = true
}

// Start starts the cluster that Stop stopped again, on its data and its
// socket, and waits until it accepts connections. It fails t when the
// cluster is not stopped, or does not start. A test that calls Stop
// should defer Start behind a check of Stopped, so that the tests after
// it find the cluster running.
func Start(t testing.TB) {
	t.Helper()
	if cluster == nil {
		t.Fatal("pgtest: Start without a cluster (call URL first)")
	}
	cluster.mu.Lock()
	defer cluster.mu.Unlock()
	if !cluster.down {
		t.Fatal("pgtest: Start: the cluster runs")
	}
	if err := cluster.startServer(); err != nil {
		t.Fatalf("pgtest: starting the cluster again: %v", err)
	}
	cluster.down = false
}

// Stopped reports whether Stop stopped the cluster (and Start did not
// start it again).
func Stopped() bool {
	if cluster == nil {
		return false
	}
	cluster.mu.Lock()
	defer cluster.mu.Unlock()
	return cluster.down
}

// reap starts a watchdog that stops the cluster and removes its directory
// once this process is gone, should it end without Main's cleanup (a
// test timeout's panic, a kill). Main's cleanup ends it.
func (s *server) reap() {
	stop := shellQuote(filepath.Join(s.bin, "pg_ctl")) + " -D " + shellQuote(filepath.Join(s.dir, "data")) + " -m immediate -w stop"
	if s.asUser != "" {
		stop = "runuser -u " + s.asUser + " -- " + stop
	}
	script := fmt.Sprintf("while [ -d /proc/%d ]; do sleep 1; done; %s >/dev/null 2>&1; rm -rf %s", os.Getpid(), stop, shellQuote(s.dir))
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // not in the test's process group
	if err := cmd.Start(); err == nil {
		s.reaper = cmd.Process
	}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// stop stops the cluster (unless Stop did) and removes its directory.
func (s *server) stop() error {
	var err error
	s.mu.Lock()
	if !s.down {
		err = s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
	}
	s.mu.Unlock()
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	if s.reaper != nil {
		syscall.Kill(-s.reaper.Pid, syscall.SIGKILL) // its group: sh and its sleep
		s.reaper.Wait()
	}
	return err
}

// run runs one of the PostgreSQL binaries, as s.asUser when set.
func (s *server) run(name string, args ...string) error {
	path := filepath.Join(s.bin, name)
	var cmd *exec.Cmd
	if s.asUser != "" {
		cmd = exec.Command("runuser", append([]string{"-u", s.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = s.dir
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %v\n%s", name, err, out.Bytes())
	}
	return nil
}

// findBin returns the directory holding initdb and pg_ctl.
func findBin() (string, error) {
	has := func(dir string) bool {
		for _, name := range []string{"initdb", "pg_ctl"} {
			if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if dir := os.Getenv("PMA_POSTGRES_BIN"); dir != "" {
		if !has(dir) {
			return "", fmt.Errorf("PostgreSQL not found: no initdb and pg_ctl in PMA_POSTGRES_BIN=%s", dir)
		}
		return dir, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		na, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		nb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return nb - na
	})
	for _, dir := range dirs {
		if has(dir) {
			return dir, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil && has(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL not found: no initdb and pg_ctl in PMA_POSTGRES_BIN, /usr/lib/postgresql/*/bin or $PATH")
}
