package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
)

// A serverKind is one authority under load.
type serverKind struct {
	Name, About string
	// pmauthority reports whether this is one of pmauthority's rows (and
	// so gets ratios to node's).
	pmauthority bool
	// command returns the command line serving on addr; data is a fresh
	// empty folder for its store.
	command func(cfg *runConfig, addr, data string) []string
	// gcPath is the path of its POST that collects the garbage, if it has
	// one.
	gcPath string
	// ceiling marks the go-ceiling server, a measuring instrument rather
	// than an authority: it applies no step, so the editors load does
	// not check the documents' text and the memory scenario is not run
	// against it; the report gives the other rows as multiples of it.
	ceiling bool
	// commit: it has commit mode (POST /docs/ID/commits), and --metrics-addr.
	commit bool
}

// nodeName is the baseline every pmauthority row is compared with;
// ceilingName the server that shows what net/http alone reaches.
const (
	nodeName    = "node"
	ceilingName = "go-ceiling"
)

var serverKinds = []serverKind{
	{"pma-sqlite-full", "pmauthority serve --store sqlite --sync full: every acknowledged step is on disk (fsync)", true,
		func(cfg *runConfig, addr, data string) []string {
			return append([]string{cfg.Bin, "serve", "--addr", addr, "--store", "sqlite", "--data", data, "--sync", "full"}, benchproc.UnlimitedConns(cfg.Bin)...)
		}, "", false, true},
	{"pma-sqlite-normal", "pmauthority serve --store sqlite --sync normal: WAL without fsync on every commit (a power loss may lose the last commits, a crash of the process none)", true,
		func(cfg *runConfig, addr, data string) []string {
			return append([]string{cfg.Bin, "serve", "--addr", addr, "--store", "sqlite", "--data", data, "--sync", "normal"}, benchproc.UnlimitedConns(cfg.Bin)...)
		}, "", false, true},
	{"pma-memory", "pmauthority serve --store memory: nothing durable, as the node authority", true,
		func(cfg *runConfig, addr, _ string) []string {
			return append([]string{cfg.Bin, "serve", "--addr", addr, "--store", "memory"}, benchproc.UnlimitedConns(cfg.Bin)...)
		}, "", false, true},
	{nodeName, "bench/noderef/authority.mjs: node:http, documents in memory as the ProseMirror demo server keeps them, prosemirror ESM build (started with --expose-gc for the memory scenario's second reading)", false,
		func(cfg *runConfig, addr, _ string) []string {
			host, port, _ := net.SplitHostPort(addr)
			return []string{cfg.Node, "--expose-gc", filepath.Join(cfg.Root, "bench/noderef/authority.mjs"), "--host", host, "--port", port, "--gc-route"}
		}, "/debug/gc", false, false},
	{ceilingName, "bench/collab/ceiling: Go net/http with the same routes and JSON and an authority's bookkeeping (version, the accepted steps' JSON and client ids, 409 on a stale version, long polls woken on publish) but none of its work (no document model, no step decoded or applied, nothing durable): about the most an authority on net/http over HTTP/1.1 reaches with this load here. The editors load checks only its versions (it has no text); the memory scenario is not run against it", false,
		func(cfg *runConfig, addr, _ string) []string {
			return []string{cfg.Ceiling, "-addr", addr}
		}, "", true, false},
}

// A scenario is one load, run against every server.
type scenario struct {
	Name string
	// about says what it is, for the report.
	about func(cfg *runConfig) string
	// args are the flags of `collabbench load` (besides addr, pid and the
	// times).
	args func(cfg *runConfig) []string
	// timed: the load has a warm-up and a measured duration.
	timed bool
	// editors: it is an editors load (run in every mode).
	editors bool
}

// editorsScenario returns the editors scenario of docs documents with
// editors editors each.
func editorsScenario(name, prefix string, docs, editors int) scenario {
	about := fmt.Sprintf("%d documents, %d editors each", docs, editors)
	if docs == 1 {
		about = fmt.Sprintf("1 document, %d editors", editors)
	}
	return scenario{name, func(*runConfig) string { return about }, func(*runConfig) []string {
		return []string{"-scenario", scenarioEditors, "-docs", strconv.Itoa(docs), "-editors", strconv.Itoa(editors), "-prefix", prefix}
	}, true, true}
}

var scenarios = []scenario{
	editorsScenario("1doc-8ed", "one-", 1, 8),
	editorsScenario("1doc-32ed", "one-", 1, 32),
	editorsScenario("1doc-128ed", "one-", 1, 128),
	editorsScenario("100docs-2ed", "many-", 100, 2),
	{"fanout", func(cfg *runConfig) string {
		return fmt.Sprintf("%d long-polling readers of one document, each polling again as soon as it has an answer; 1 writer submitting one step 10 times a second; delivery latency is from the writer sending its POST to a reader receiving the step", cfg.Readers)
	}, func(cfg *runConfig) []string {
		return []string{"-scenario", scenarioFanout, "-readers", strconv.Itoa(cfg.Readers), "-rate", "10", "-prefix", "fan-"}
	}, true, false},
	{"memory", func(cfg *runConfig) string {
		return fmt.Sprintf("documents of 2,000 letters (20 steps of 100, one POST each) made through the API, %d to warm the server up, then %d more between two readings of the server's RSS (VmRSS, each after 2 s idle)", cfg.MemDocs, cfg.MemDocs)
	}, func(cfg *runConfig) []string {
		n := strconv.Itoa(cfg.MemDocs)
		return []string{"-scenario", scenarioMemory, "-docs", n, "-warm", n, "-steps", "20", "-text", "100", "-prefix", "mem-"}
	}, false, false},
}

// runConfig is the configuration of a whole run.
type runConfig struct {
	Root, Bin, Node, Self string
	OutDir, Report        string
	Quick                 bool
	Warmup, Duration      time.Duration
	Rounds                int
	Readers, MemDocs      int
	Servers, Scenarios    []string
	// Modes are the editors' modes (modeClassic, modeCommit); the
	// editors scenarios run in each against the servers that have it,
	// the other scenarios in classic mode only.
	Modes      []string
	Placements []string
	Notes      []string
	LoadAvg    [2]string
	// Commit is the repository's commit when the run started.
	Commit string
	// Ceiling is the go-ceiling server's binary.
	Ceiling string
}

// cell is one server under one scenario in one placement and round.
type cell struct {
	Placement string `json:"placement"`
	Scenario  string `json:"scenario"`
	Server    string `json:"server"`
	// Mode is the editors' mode ("": classic).
	Mode   string      `json:"mode,omitempty"`
	Round  int         `json:"round"`
	Result *loadResult `json:"result,omitempty"`
	// PeakRSS is the server's VmHWM at the end of the load.
	PeakRSS int64  `json:"peakRSS"`
	Err     string `json:"error,omitempty"`
}

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	cfg := &runConfig{}
	fs.BoolVar(&cfg.Quick, "quick", false, "one round of 3-second loads, to check that everything works")
	bin := fs.String("bin", "", "pmauthority `binary` (default ROOT/bench/out/collab/pmauthority)")
	fs.StringVar(&cfg.Node, "node", "node", "node `binary`")
	fs.StringVar(&cfg.Ceiling, "ceiling-bin", "", "go-ceiling server `binary` (default ROOT/bench/out/collab/collabceiling)")
	fs.DurationVar(&cfg.Warmup, "warmup", time.Second, "load before each measured time")
	duration := fs.Duration("duration", 0, "measured time of each load (default 10s, quick 3s)")
	rounds := fs.Int("rounds", 0, "rounds: every scenario against every server, the servers' order rotating (default 3, quick 1)")
	fs.IntVar(&cfg.Readers, "readers", 1000, "fanout: long-polling readers")
	fs.IntVar(&cfg.MemDocs, "mem-docs", 10000, "memory: documents (10,000: with 1,000 the RSS growth was within the noise of node's heap)")
	serverList := fs.String("servers", "pma-sqlite-full,pma-sqlite-normal,pma-memory,node,go-ceiling", "servers to measure")
	scenarioList := fs.String("scenarios", "1doc-8ed,100docs-2ed,fanout,memory", "scenarios to run")
	modeList := fs.String("modes", modeClassic, "editors' modes: classic, commit (commit mode against pmauthority only)")
	placementList := fs.String("placements", "pinned,unpinned", "placements")
	fs.StringVar(&cfg.Report, "report", "", "markdown report `file` (default ROOT/bench/out/collab-latest.md)")
	fs.Parse(args)

	root, err := benchproc.RepoRoot()
	if err != nil {
		return err
	}
	cfg.Root = root
	cfg.OutDir = filepath.Join(root, "bench/out/collab")
	cfg.Bin = *bin
	if cfg.Bin == "" {
		cfg.Bin = filepath.Join(cfg.OutDir, "pmauthority")
	}
	if cfg.Ceiling == "" {
		cfg.Ceiling = filepath.Join(cfg.OutDir, "collabceiling")
	}
	if cfg.Report == "" {
		cfg.Report = filepath.Join(root, "bench/out/collab-latest.md")
	}
	if cfg.Self, err = os.Executable(); err != nil {
		return err
	}
	cfg.Duration, cfg.Rounds = 10*time.Second, 3
	if cfg.Quick {
		cfg.Duration, cfg.Rounds = 3*time.Second, 1
	}
	if *duration > 0 {
		cfg.Duration = *duration
	}
	if *rounds > 0 {
		cfg.Rounds = *rounds
	}
	cfg.Servers, cfg.Scenarios, cfg.Placements = benchproc.SplitList(*serverList), benchproc.SplitList(*scenarioList), benchproc.SplitList(*placementList)
	for _, s := range cfg.Servers {
		if findServer(s) == nil {
			return fmt.Errorf("unknown server %q", s)
		}
	}
	if slices.Contains(cfg.Servers, ceilingName) {
		if _, err := os.Stat(cfg.Ceiling); err != nil {
			return fmt.Errorf("%s: %v (build it in bench/ with go build -o %s ./collab/ceiling, as run.sh does)", ceilingName, err, cfg.Ceiling)
		}
	}
	for _, s := range cfg.Scenarios {
		if findScenario(s) == nil {
			return fmt.Errorf("unknown scenario %q", s)
		}
	}
	cfg.Modes = benchproc.SplitList(*modeList)
	for _, m := range cfg.Modes {
		if m != modeClassic && m != modeCommit {
			return fmt.Errorf("unknown mode %q (want %s or %s)", m, modeClassic, modeCommit)
		}
	}
	var unpinned bool
	if cfg.Placements, unpinned, err = benchproc.CheckPlacements(cfg.Placements); err != nil {
		return err
	}
	if unpinned {
		cfg.Notes = append(cfg.Notes, "taskset (util-linux) not found: unpinned only")
	}
	if len(cfg.Placements) == 0 || len(cfg.Servers) == 0 || len(cfg.Scenarios) == 0 || len(cfg.Modes) == 0 {
		return fmt.Errorf("nothing to run")
	}
	return run(cfg)
}

// run runs every scenario against every server, writes the report and
// the raw results, and prints the report.
func run(cfg *runConfig) error {
	started := time.Now()
	cfg.LoadAvg[0] = benchproc.LoadAvg()
	cfg.Commit = "?"
	if out, err := exec.Command("git", "-C", cfg.Root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		cfg.Commit = strings.TrimSpace(string(out))
	}
	for _, dir := range []string{"logs", "data"} {
		if err := os.MkdirAll(filepath.Join(cfg.OutDir, dir), 0o755); err != nil {
			return err
		}
	}
	var cells []*cell
	total := 0
	for _, sc := range cfg.Scenarios {
		for _, mode := range cfg.Modes {
			for _, s := range cfg.Servers {
				if runsIn(findServer(s), findScenario(sc), mode) {
					total += len(cfg.Placements) * cfg.Rounds
				}
			}
		}
	}
	for _, plName := range cfg.Placements {
		pl := benchproc.FindPlacement(plName)
		for round := range cfg.Rounds {
			for _, scName := range cfg.Scenarios {
				sc := findScenario(scName)
				// Rotate the servers' order every round, so that a change in
				// the shared machine's load does not always hit the same one.
				order := slices.Clone(cfg.Servers)
				k := round % len(order)
				order = append(order[k:], order[:k]...)
				for _, mode := range cfg.Modes {
					for _, name := range order {
						if !runsIn(findServer(name), sc, mode) {
							continue
						}
						c := measure(cfg, pl, sc, findServer(name), mode, round)
						cells = append(cells, c)
						benchproc.Logf("[%d/%d] %s round %d %s %s %s: %s", len(cells), total, pl.Name, round+1, sc.Name, name, mode, c.line())
					}
				}
			}
		}
	}
	cfg.LoadAvg[1] = benchproc.LoadAvg()
	raw, err := json.MarshalIndent(cells, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.OutDir, "results.json"), raw, 0o644); err != nil {
		return err
	}
	var report bytes.Buffer
	writeReport(&report, cfg, cells, time.Since(started))
	if err := os.WriteFile(cfg.Report, report.Bytes(), 0o644); err != nil {
		return err
	}
	os.Stdout.Write(report.Bytes())
	benchproc.Logf("report written to %s (raw results in %s)", cfg.Report, filepath.Join(cfg.OutDir, "results.json"))
	var failed []string
	for _, c := range cells {
		if c.Err != "" {
			failed = append(failed, fmt.Sprintf("%s %s %s: %s", c.Placement, c.Scenario, c.Server, c.Err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d loads failed:\n%s", len(failed), strings.Join(failed, "\n"))
	}
	return nil
}

// measure starts a fresh server, runs the scenario against it with the
// load generator in a child process (placed as pl says) and stops it.
func measure(cfg *runConfig, pl *benchproc.Placement, sc *scenario, s *serverKind, mode string, round int) *cell {
	c := &cell{Placement: pl.Name, Scenario: sc.Name, Server: s.Name, Round: round + 1}
	tag := fmt.Sprintf("%s-%s-%s-%d", pl.Name, sc.Name, s.Name, round+1)
	if sc.editors && mode != modeClassic {
		c.Mode = mode
		tag = fmt.Sprintf("%s-%s-%s-%s-%d", pl.Name, sc.Name, s.Name, mode, round+1)
	}
	data, err := os.MkdirTemp(filepath.Join(cfg.OutDir, "data"), tag+"-")
	if err != nil {
		c.Err = err.Error()
		return c
	}
	defer os.RemoveAll(data)
	// pmauthority's editors loads read its store's group commits from
	// its metrics.
	var metricsAddr string
	var extra []string
	if s.commit && sc.editors {
		port, err := benchproc.FreePort()
		if err != nil {
			c.Err = err.Error()
			return c
		}
		metricsAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		extra = []string{"--metrics-addr", metricsAddr}
	}
	p, err := startServer(cfg, pl, s, data, tag, extra...)
	if err != nil {
		c.Err = err.Error()
		return c
	}
	defer p.Stop(stopGrace)
	args := append(slices.Clone(pl.Load), cfg.Self, "load", "-addr", p.Addr, "-pid", strconv.Itoa(p.Pid()),
		"-seed", strconv.Itoa(round+1))
	args = append(args, sc.args(cfg)...)
	if sc.editors {
		args = append(args, "-mode", mode)
		if metricsAddr != "" {
			args = append(args, "-metrics", metricsAddr)
		}
	}
	if sc.Name == scenarioMemory && s.gcPath != "" {
		args = append(args, "-gc-path", s.gcPath)
	}
	if s.ceiling {
		args = append(args, "-no-text-check") // read by the editors load only
	}
	if sc.timed {
		args = append(args, "-warmup", cfg.Warmup.String(), "-duration", cfg.Duration.String())
	}
	cmd := exec.Command(args[0], args[1:]...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := benchproc.Start(cmd); err != nil {
		c.Err = err.Error()
		return c
	}
	err = cmd.Wait()
	benchproc.Forget(cmd)
	if err != nil {
		c.Err = fmt.Sprintf("load: %v: %s", err, benchproc.LastLines(errOut.Bytes(), 3))
		return c
	}
	c.Result = &loadResult{}
	if err := json.Unmarshal(out.Bytes(), c.Result); err != nil {
		c.Err = fmt.Sprintf("load answered %q: %v", benchproc.LastLines(out.Bytes(), 3), err)
		c.Result = nil
		return c
	}
	c.PeakRSS, _ = benchproc.ProcStatus(p.Pid(), "VmHWM")
	return c
}

// line summarizes a cell for the progress log.
func (c *cell) line() string {
	switch {
	case c.Err != "":
		return "error: " + c.Err
	case c.Result.Editors != nil:
		e := c.Result.Editors
		store := ""
		if e.Store != nil {
			store = fmt.Sprintf(", %.2f accepted per store op", e.Store.AcceptedPerOp)
		}
		return fmt.Sprintf("%s steps/s, %s submits/s, 409 %.0f%%, dropped %d, submit p50 %s p99 %s, accept p99 %s, fewest/most %d/%d%s, CPU/step %s, others %.2f, errors %d %s",
			fmtRate(e.StepsPerSec), fmtRate(e.SubmitsPerSec), 100*e.ConflictRate, e.Dropped, fmtDur(e.Submit.P50), fmtDur(e.Submit.P99),
			fmtDur(e.Accept.P99), e.PerEditor.FewestSteps, e.PerEditor.MostSteps, store, fmtDur(e.CPUPerStep), e.CPU.Others, e.Errors, e.FirstError)
	case c.Result.Fanout != nil:
		f := c.Result.Fanout
		return fmt.Sprintf("%d/%d delivered, p50 %s p99 %s, writer p99 %s, others %.2f, errors %d %s",
			f.Deliveries, f.Expected, fmtDur(f.Delivery.P50), fmtDur(f.Delivery.P99), fmtDur(f.Submit.P99), f.CPU.Others, f.Errors, f.FirstError)
	case c.Result.Memory != nil:
		m := c.Result.Memory
		gc := ""
		if m.PerDocGC != 0 {
			gc = fmt.Sprintf(" (after a GC: %s -> %s: %s)", fmtBytes(float64(m.RSSBeforeGC)), fmtBytes(float64(m.RSSAfterGC)), fmtBytes(m.PerDocGC))
		}
		return fmt.Sprintf("RSS %s -> %s: %s per document%s, errors %d %s",
			fmtBytes(float64(m.RSSBefore)), fmtBytes(float64(m.RSSAfter)), fmtBytes(m.PerDoc), gc, m.Errors, m.FirstError)
	}
	return "no result"
}

// stopGrace is how long a server may take to stop after SIGTERM.
const stopGrace = 10 * time.Second

// startServer starts s on a free loopback port, placed as pl says, its
// output in OutDir/logs/tag.log, and waits until it answers GET /docs.
func startServer(cfg *runConfig, pl *benchproc.Placement, s *serverKind, data, tag string, extra ...string) (*benchproc.Server, error) {
	port, err := benchproc.FreePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := append(slices.Clone(pl.Server), s.command(cfg, addr, data)...)
	args = append(args, extra...)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = cfg.Root
	p, err := benchproc.StartServer(cmd, addr, filepath.Join(cfg.OutDir, "logs", tag+".log"))
	if err != nil {
		return nil, err
	}
	if err := waitReady(p, 30*time.Second); err != nil {
		p.Stop(stopGrace)
		return nil, fmt.Errorf("%s did not start: %v: %s", s.Name, err, p.LogTail(5))
	}
	return p, nil
}

// waitReady waits until the server answers GET /docs with a 200.
func waitReady(p *benchproc.Server, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if done, err := p.Exited(); done {
			return fmt.Errorf("exited: %v", err)
		}
		c, err := dialConn(p.Addr, "")
		if err == nil {
			c.nc.SetDeadline(time.Now().Add(5 * time.Second))
			var status int
			var body []byte
			status, body, err = c.do("GET", "/docs", nil)
			c.Close()
			if err == nil && status == 200 {
				return nil
			}
			if err == nil {
				err = fmt.Errorf("GET /docs: status %d: %.200s", status, body)
			}
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not answering on %s after %s: %v", p.Addr, timeout, last)
}

// runs reports whether the scenario is run against s: all are but the
// memory scenario against go-ceiling, which keeps no document worth
// measuring (only the steps' JSON).
func runs(s *serverKind, scenario string) bool {
	return !s.ceiling || scenario != scenarioMemory
}

// runsIn reports whether sc is run against s in mode: classic mode as
// runs says, commit mode for the editors scenarios against the servers
// that have it.
func runsIn(s *serverKind, sc *scenario, mode string) bool {
	if mode == modeClassic {
		return runs(s, sc.Name)
	}
	return sc.editors && s.commit
}

func findServer(name string) *serverKind {
	for i := range serverKinds {
		if serverKinds[i].Name == name {
			return &serverKinds[i]
		}
	}
	return nil
}

func findScenario(name string) *scenario {
	for i := range scenarios {
		if scenarios[i].Name == name {
			return &scenarios[i]
		}
	}
	return nil
}
