// Command clusterbench measures pmauthority on PostgreSQL side by side
// with its SQLite and memory stores and the node authority, and three
// nodes on one database, in one run. bench/cluster.sh starts a throwaway
// PostgreSQL (fsync on), builds everything and runs it:
//
//	clusterbench --bin PMAUTHORITY --collabbench CB --wsbench WB \
//	    --pg-url postgres://…/postgres --pg-pid PID --pg-test POSTGRES.TEST --sqlite-test SQLITE.TEST
//
// Each round runs, in a rotating order, the editors loads of collabbench
// (1 document × 8 editors, 100 documents × 2 editors) against one fresh
// server of each kind, then three pmauthority nodes on one fresh
// database (the same loads spread over the three, and 1,000 WebSocket
// editors of one document over the three, 10 of them typing, with
// wsbench), and one node on PostgreSQL under the same WebSocket load.
// Then the store benchmarks: store/postgres's BenchmarkNotifyLock and
// BenchmarkAppend, store/sqlite's BenchmarkAppend/FULL. It prints a
// Markdown report of the medians and writes it to --out. Only loopback
// traffic (and PostgreSQL's unix socket); every load is bounded in time.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
)

// config is a run's configuration.
type config struct {
	root, bin, collab, ws, node, psql string
	before                            string // another pmauthority binary for the three nodes' editors loads
	pgURL                             string // of the database postgres: databases are made from it
	pgPID                             int
	pgTest, sqliteTest                string
	rounds                            int
	warmup, duration                  time.Duration
	fanEditors, fanTypers             int
	fanWarmup, fanDuration            time.Duration
	storeRounds                       int
	outDir, report                    string
	quick                             bool
}

func main() {
	cfg := &config{}
	flag.StringVar(&cfg.bin, "bin", "", "pmauthority `binary`")
	flag.StringVar(&cfg.collab, "collabbench", "", "collabbench `binary` (bench/collab)")
	flag.StringVar(&cfg.ws, "wsbench", "", "wsbench `binary` (bench/ws)")
	flag.StringVar(&cfg.node, "node", "node", "node `binary`")
	flag.StringVar(&cfg.before, "before", "", "another pmauthority `binary` (e.g. of the commit before a change) whose three nodes run the editors loads in each round too")
	flag.StringVar(&cfg.psql, "psql", "psql", "psql `binary`")
	flag.StringVar(&cfg.pgURL, "pg-url", "", "postgres:// `URL` of the database postgres of a cluster this may make databases in")
	flag.IntVar(&cfg.pgPID, "pg-pid", 0, "the cluster's postmaster `pid`, for its CPU time")
	flag.StringVar(&cfg.pgTest, "pg-test", "", "store/postgres test `binary` (go test -c), for its benchmarks (empty: not run)")
	flag.StringVar(&cfg.sqliteTest, "sqlite-test", "", "store/sqlite test `binary`, for BenchmarkAppend/FULL (empty: not run)")
	flag.BoolVar(&cfg.quick, "quick", false, "one short round, to check that it works")
	flag.StringVar(&cfg.report, "out", "", "also write the report to this `file`")
	rounds := flag.Int("rounds", 0, "`rounds` of the loads (default 3, quick 1)")
	flag.Parse()
	if cfg.bin == "" || cfg.collab == "" || cfg.ws == "" || cfg.pgURL == "" || cfg.pgPID <= 0 {
		fmt.Fprintln(os.Stderr, "clusterbench: need --bin, --collabbench, --wsbench, --pg-url and --pg-pid (bench/cluster.sh passes them)")
		os.Exit(2)
	}
	cfg.rounds, cfg.warmup, cfg.duration = 3, time.Second, 5*time.Second
	cfg.fanEditors, cfg.fanTypers, cfg.fanWarmup, cfg.fanDuration = 1000, 10, 3*time.Second, 10*time.Second
	cfg.storeRounds = 3
	if cfg.quick {
		cfg.rounds, cfg.duration = 1, 2*time.Second
		cfg.fanEditors, cfg.fanWarmup, cfg.fanDuration = 200, time.Second, 3*time.Second
		cfg.storeRounds = 1
	}
	if *rounds > 0 {
		cfg.rounds = *rounds
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "clusterbench:", err)
		os.Exit(1)
	}
}

// A kind is one single-server setup of the side-by-side comparison.
type kind struct {
	name, about string
	// postgres: the server uses a fresh database and the database's CPU
	// is measured.
	postgres bool
	command  func(cfg *config, addr, data, dbURL string) []string
}

var kinds = []kind{
	{"pma-postgres", "`pmauthority serve --store postgres` on a fresh database of the throwaway cluster (fsync on, synchronous_commit on)", true,
		func(cfg *config, addr, _, dbURL string) []string {
			return pma(cfg, addr, "--store", "postgres", "--postgres-url", dbURL)
		}},
	{"pma-sqlite-full", "`pmauthority serve --store sqlite --sync full` (every acknowledged step fsynced), fresh data folder", false,
		func(cfg *config, addr, data, _ string) []string {
			return pma(cfg, addr, "--store", "sqlite", "--data", data, "--sync", "full")
		}},
	{"pma-memory", "`pmauthority serve --store memory`: nothing durable", false,
		func(cfg *config, addr, _, _ string) []string { return pma(cfg, addr, "--store", "memory") }},
	{"node", "bench/noderef/authority.mjs: the node authority, documents in memory, nothing durable", false,
		func(cfg *config, addr, _, _ string) []string {
			host, port, _ := net.SplitHostPort(addr)
			return []string{cfg.node, filepath.Join(cfg.root, "bench/noderef/authority.mjs"), "--host", host, "--port", port}
		}},
}

// pma returns a pmauthority serve command line on addr.
func pma(cfg *config, addr string, args ...string) []string {
	out := append([]string{cfg.bin, "serve", "--addr", addr}, args...)
	return append(out, benchproc.UnlimitedConns(cfg.bin)...)
}

// A load is one collabbench editors scenario.
type load struct {
	name          string
	docs, editors int
	prefix        string
}

var loads = []load{
	{"1doc-8ed", 1, 8, "one-"},
	{"100docs-2ed", 100, 2, "many-"},
}

// editorsResult is the part of collabbench load's answer read here.
type editorsResult struct {
	StepsPerSec   float64 `json:"stepsPerSec"`
	SubmitsPerSec float64 `json:"submitsPerSec"`
	Accepted      int     `json:"accepted"`
	Duration      float64 `json:"duration"`
	ConflictRate  float64 `json:"conflictRate"`
	Submit        struct {
		P50 float64 `json:"p50"`
		P99 float64 `json:"p99"`
	} `json:"submit"`
	CPU struct {
		Server float64 `json:"serverCPU"`
		DB     float64 `json:"dbCPU"`
		Others float64 `json:"othersCores"`
	} `json:"cpu"`
	CPUPerStep   float64 `json:"cpuPerStep"`
	DBCPUPerStep float64 `json:"dbCPUPerStep"`
	Errors       int     `json:"errors"`
	FirstError   string  `json:"firstError"`
	// Commits is the database's write transactions per second over the
	// whole load (warm-up included), when on PostgreSQL.
	Commits float64 `json:"-"`
}

// fanoutResult is the part of wsbench fanout's answer read here.
type fanoutResult struct {
	Steps, Deliveries, Expected            int
	P50, P90, P99, Max                     float64
	Nodes, CrossDeliveries                 int
	CrossP50, CrossP90, CrossP99, CrossMax float64
	CPU                                    float64
	Errors                                 int
	LastErr                                string
	Conflict                               int
}

// results are a run's measurements, by setup and load.
type results struct {
	single map[string][]*editorsResult // kind/load
	three  map[string][]*editorsResult // load
	fan    map[string][]*fanoutResult  // "1", "3"
	bench  map[string][]map[string]float64
	failed []string
}

func run(cfg *config) error {
	var err error
	if cfg.root, err = benchproc.RepoRoot(); err != nil {
		return err
	}
	cfg.outDir = filepath.Join(cfg.root, "bench/out/cluster")
	if err := os.MkdirAll(filepath.Join(cfg.outDir, "logs"), 0o755); err != nil {
		return err
	}
	started := time.Now()
	loadStart := benchproc.LoadAvg()
	res := &results{single: map[string][]*editorsResult{}, three: map[string][]*editorsResult{},
		fan: map[string][]*fanoutResult{}, bench: map[string][]map[string]float64{}}
	for round := range cfg.rounds {
		for _, l := range loads {
			order := slices.Clone(kinds)
			k := round % len(order)
			order = append(order[k:], order[:k]...)
			for _, kd := range order {
				r, err := single(cfg, kd, l, round)
				tag := fmt.Sprintf("round %d %s %s", round+1, l.name, kd.name)
				if err != nil {
					res.failed = append(res.failed, tag+": "+err.Error())
					benchproc.Logf("%s: error: %v", tag, err)
					continue
				}
				benchproc.Logf("%s: %.0f steps/s, submit p50 %s p99 %s, CPU/step %s (+ db %s), others %.2f, errors %d %s",
					tag, r.StepsPerSec, ms(r.Submit.P50), ms(r.Submit.P99), us(r.CPUPerStep), us(r.DBCPUPerStep), r.CPU.Others, r.Errors, r.FirstError)
				res.single[kd.name+"/"+l.name] = append(res.single[kd.name+"/"+l.name], r)
			}
		}
		// The --before binary's three nodes run before this tree's in odd
		// rounds and after them in even ones.
		before := func() {
			if cfg.before == "" {
				return
			}
			if err := threeEditors(cfg, res, round, cfg.before, "before/"); err != nil {
				res.failed = append(res.failed, fmt.Sprintf("round %d three nodes (before): %v", round+1, err))
				benchproc.Logf("round %d three nodes (before): error: %v", round+1, err)
			}
		}
		if round%2 == 0 {
			before()
		}
		if err := three(cfg, res, round); err != nil {
			res.failed = append(res.failed, fmt.Sprintf("round %d three nodes: %v", round+1, err))
			benchproc.Logf("round %d three nodes: error: %v", round+1, err)
		}
		if round%2 == 1 {
			before()
		}
		if err := fanOne(cfg, res, round); err != nil {
			res.failed = append(res.failed, fmt.Sprintf("round %d fanout on one node: %v", round+1, err))
			benchproc.Logf("round %d fanout on one node: error: %v", round+1, err)
		}
	}
	storeBenches(cfg, res)
	var sb strings.Builder
	report(&sb, cfg, res, time.Since(started), loadStart)
	fmt.Print(sb.String())
	if cfg.report != "" {
		if err := os.WriteFile(cfg.report, []byte(sb.String()), 0o644); err != nil {
			return err
		}
	}
	if len(res.failed) > 0 {
		return fmt.Errorf("%d measures failed:\n%s", len(res.failed), strings.Join(res.failed, "\n"))
	}
	return nil
}

// single measures load l against a fresh server of kind kd.
func single(cfg *config, kd kind, l load, round int) (*editorsResult, error) {
	tag := fmt.Sprintf("%s-%s-%d", kd.name, l.name, round+1)
	data, err := os.MkdirTemp(cfg.outDir, "data-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(data)
	var dbURL string
	if kd.postgres {
		if dbURL, err = freshDB(cfg, "single"); err != nil {
			return nil, err
		}
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s, err := start(cfg, kd.command(cfg, addr, data, dbURL), addr, tag)
	if err != nil {
		return nil, err
	}
	defer s.Stop(20 * time.Second)
	args := []string{"-addr", addr, "-pid", strconv.Itoa(s.Pid())}
	if kd.postgres {
		args = append(args, "-db-pid", strconv.Itoa(cfg.pgPID))
	}
	return editors(cfg, l, round, args, kd.postgres)
}

// editors runs collabbench's editors load l with the server flags args.
func editors(cfg *config, l load, round int, args []string, postgres bool) (*editorsResult, error) {
	args = append([]string{"load", "-scenario", "editors", "-docs", strconv.Itoa(l.docs), "-editors", strconv.Itoa(l.editors),
		"-prefix", l.prefix, "-seed", strconv.Itoa(round + 1), "-warmup", cfg.warmup.String(), "-duration", cfg.duration.String()}, args...)
	var x0 int64
	if postgres {
		x0 = xid(cfg)
	}
	t0 := time.Now()
	out, err := runJSON(cfg.collab, args...)
	if err != nil {
		return nil, err
	}
	var ans struct{ Editors *editorsResult }
	if err := json.Unmarshal(out, &ans); err != nil || ans.Editors == nil {
		return nil, fmt.Errorf("collabbench answered %.200q: %v", out, err)
	}
	if postgres {
		if x1 := xid(cfg); x0 > 0 && x1 > x0 {
			ans.Editors.Commits = float64(x1-x0) / time.Since(t0).Seconds()
		}
	}
	return ans.Editors, nil
}

// startThree starts three nodes of bin on one fresh database; stop
// stops them.
func startThree(cfg *config, bin, tag string) (addrs, pids []string, stop func(), err error) {
	dbURL, err := freshDB(cfg, "three")
	if err != nil {
		return nil, nil, nil, err
	}
	var servers []*benchproc.Server
	stop = func() {
		for _, s := range servers {
			s.Stop(20 * time.Second)
		}
	}
	c := *cfg
	c.bin = bin
	for i := range 3 {
		addr, err := freeAddr()
		if err != nil {
			stop()
			return nil, nil, nil, err
		}
		s, err := start(cfg, pma(&c, addr, "--store", "postgres", "--postgres-url", dbURL), addr, fmt.Sprintf("%s-node%d", tag, i+1))
		if err != nil {
			stop()
			return nil, nil, nil, err
		}
		servers = append(servers, s)
		addrs, pids = append(addrs, addr), append(pids, strconv.Itoa(s.Pid()))
	}
	return addrs, pids, stop, nil
}

// editorsOnThree runs the editors loads over the three nodes addrs,
// keeping the results under key+load.
func editorsOnThree(cfg *config, res *results, round int, addrs, pids []string, key string) error {
	for _, l := range loads {
		r, err := editors(cfg, l, round, []string{"-addrs", strings.Join(addrs, ","), "-pids", strings.Join(pids, ","),
			"-db-pid", strconv.Itoa(cfg.pgPID)}, true)
		if err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
		benchproc.Logf("round %d three nodes %s%s: %.0f steps/s, submit p50 %s p99 %s, CPU/step %s (+ db %s), errors %d %s",
			round+1, key, l.name, r.StepsPerSec, ms(r.Submit.P50), ms(r.Submit.P99), us(r.CPUPerStep), us(r.DBCPUPerStep), r.Errors, r.FirstError)
		res.three[key+l.name] = append(res.three[key+l.name], r)
	}
	return nil
}

// threeEditors measures the editors loads on three nodes of bin.
func threeEditors(cfg *config, res *results, round int, bin, key string) error {
	addrs, pids, stop, err := startThree(cfg, bin, fmt.Sprintf("three-%s%d", strings.TrimSuffix(key, "/"), round+1))
	if err != nil {
		return err
	}
	defer stop()
	return editorsOnThree(cfg, res, round, addrs, pids, key)
}

// three measures three nodes on one fresh database: the editors loads
// spread over them, then the WebSocket fan-out.
func three(cfg *config, res *results, round int) error {
	addrs, pids, stop, err := startThree(cfg, cfg.bin, fmt.Sprintf("three-%d", round+1))
	if err != nil {
		return err
	}
	defer stop()
	if err := editorsOnThree(cfg, res, round, addrs, pids, ""); err != nil {
		return err
	}
	f, err := fanout(cfg, addrs, pids, round)
	if err != nil {
		return fmt.Errorf("fanout: %w", err)
	}
	res.fan["3"] = append(res.fan["3"], f)
	return nil
}

// fanOne measures the WebSocket fan-out on one node on PostgreSQL.
func fanOne(cfg *config, res *results, round int) error {
	dbURL, err := freshDB(cfg, "one")
	if err != nil {
		return err
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	s, err := start(cfg, pma(cfg, addr, "--store", "postgres", "--postgres-url", dbURL), addr, fmt.Sprintf("fan-one-%d", round+1))
	if err != nil {
		return err
	}
	defer s.Stop(20 * time.Second)
	f, err := fanout(cfg, []string{addr}, []string{strconv.Itoa(s.Pid())}, round)
	if err != nil {
		return err
	}
	res.fan["1"] = append(res.fan["1"], f)
	return nil
}

// fanout runs wsbench fanout against the running servers addrs.
func fanout(cfg *config, addrs, pids []string, round int) (*fanoutResult, error) {
	out, err := runJSON(cfg.ws, "fanout", "--addrs", strings.Join(addrs, ","), "--pids", strings.Join(pids, ","),
		"--doc", fmt.Sprintf("fan-%d", round+1), "--editors", strconv.Itoa(cfg.fanEditors), "--typers", strconv.Itoa(cfg.fanTypers),
		"--rate", "5", "--warmup", cfg.fanWarmup.String(), "--duration", cfg.fanDuration.String())
	if err != nil {
		return nil, err
	}
	var f fanoutResult
	if err := json.Unmarshal(out, &f); err != nil {
		return nil, fmt.Errorf("wsbench answered %.200q: %v", out, err)
	}
	benchproc.Logf("round %d fanout on %d node(s): %d/%d delivered, p50 %.1f ms p99 %.1f ms; other nodes' editors: %d, p50 %.1f ms p99 %.1f ms; servers %.2f cores; errors %d %s",
		round+1, len(addrs), f.Deliveries, f.Expected, f.P50, f.P99, f.CrossDeliveries, f.CrossP50, f.CrossP99, f.CPU, f.Errors, f.LastErr)
	if f.Deliveries != f.Expected {
		return &f, fmt.Errorf("%d of %d receipts", f.Deliveries, f.Expected)
	}
	return &f, nil
}

// runJSON runs a load generator and returns its standard output.
func runJSON(bin string, args ...string) ([]byte, error) {
	cmd := exec.Command(bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := benchproc.Start(cmd); err != nil {
		return nil, err
	}
	err := cmd.Wait()
	benchproc.Forget(cmd)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %s", filepath.Base(bin), err, benchproc.LastLines(errOut.Bytes(), 3))
	}
	return out.Bytes(), nil
}

// start starts a server on addr and waits until it answers GET /docs.
func start(cfg *config, argv []string, addr, tag string) (*benchproc.Server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = cfg.root
	s, err := benchproc.StartServer(cmd, addr, filepath.Join(cfg.outDir, "logs", tag+".log"))
	if err != nil {
		return nil, err
	}
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if done, err := s.Exited(); done {
			return nil, fmt.Errorf("%s exited: %v: %s", tag, err, s.LogTail(5))
		}
		resp, err := client.Get("http://" + addr + "/docs")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s, nil
			}
		}
	}
	s.Stop(5 * time.Second)
	return nil, fmt.Errorf("%s not answering on %s: %s", tag, addr, s.LogTail(5))
}

// freeAddr returns a free loopback address.
func freeAddr() (string, error) {
	port, err := benchproc.FreePort()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}

// freshDB drops and makes the database name and returns its URL.
func freshDB(cfg *config, name string) (string, error) {
	name = "bench_" + name
	if err := psql(cfg, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)", "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	u, err := url.Parse(cfg.pgURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// psql runs SQL commands on the database postgres.
func psql(cfg *config, cmds ...string) error {
	args := []string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", cfg.pgURL}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	if out, err := exec.Command(cfg.psql, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("psql: %v: %s", err, out)
	}
	return nil
}

// xid returns the cluster's next transaction id, 0 when it cannot: the
// ids taken between two calls are the write transactions committed (or
// rolled back) meanwhile.
func xid(cfg *config) int64 {
	out, err := exec.Command(cfg.psql, "-X", "-q", "-A", "-t", "-d", cfg.pgURL, "-c", "SELECT pg_current_xact_id()").Output()
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	return n
}

// storeBenches runs the store benchmarks, fsync on: store/postgres on
// the throwaway cluster, store/sqlite in a temporary folder.
func storeBenches(cfg *config, res *results) {
	n := strconv.Itoa(cfg.storeRounds)
	type bench struct {
		bin, pattern, benchtime string
		env                     []string
	}
	var benches []bench
	if cfg.pgTest != "" {
		benches = append(benches,
			bench{cfg.pgTest, "^Benchmark(NotifyLock|InFlight)$", "3000x", []string{"PMA_BENCH_POSTGRES_URL=" + cfg.pgURL}},
			bench{cfg.pgTest, "^BenchmarkAppend$", "400x", []string{"PMA_BENCH_POSTGRES_URL=" + cfg.pgURL}})
	}
	if cfg.sqliteTest != "" {
		benches = append(benches, bench{cfg.sqliteTest, "^BenchmarkAppend$/^FULL$", "2000x", nil})
	}
	if cfg.quick {
		for i := range benches {
			benches[i].benchtime = "200x"
		}
	}
	for _, b := range benches {
		benchproc.Logf("store benchmark %s %s", filepath.Base(b.bin), b.pattern)
		cmd := exec.Command(b.bin, "-test.run", "^$", "-test.bench", b.pattern, "-test.count", n, "-test.benchtime", b.benchtime)
		cmd.Env = append(os.Environ(), b.env...)
		cmd.Dir = filepath.Dir(b.bin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			res.failed = append(res.failed, fmt.Sprintf("%s %s: %v: %s", filepath.Base(b.bin), b.pattern, err, benchproc.LastLines(out, 5)))
			continue
		}
		prefix := strings.TrimSuffix(filepath.Base(b.bin), ".test") + "."
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			name, m, ok := parseBench(sc.Text())
			if ok {
				res.bench[prefix+name] = append(res.bench[prefix+name], m)
				benchproc.Logf("  %s", sc.Text())
			}
		}
	}
}

// parseBench parses a line of go test -bench output: the benchmark's
// name without the -GOMAXPROCS suffix and its metrics by unit.
func parseBench(line string) (string, map[string]float64, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
		return "", nil, false
	}
	name := f[0]
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			name = name[:i]
		}
	}
	m := map[string]float64{}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return "", nil, false
		}
		m[f[i+1]] = v
	}
	return name, m, true
}

func ms(s float64) string { return fmt.Sprintf("%.2f ms", s*1000) }
func us(s float64) string { return fmt.Sprintf("%.0f µs", s*1e6) }
