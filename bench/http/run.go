package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
	"github.com/pmauthority/pmauthority/bench/internal/stats"
	"github.com/pmauthority/pmauthority/internal/tracedoc"
)

// A serverKind is one of the implementations under load.
type serverKind struct {
	// Name is the name in the tables.
	Name string
	// About says what it is, for the report.
	About string
	// command returns the command line that serves on addr, with text as
	// the default schema.
	command func(cfg *runConfig, addr string, c *payloadCase) []string
}

// pmauthorityName and nodeHTTPName are the servers compared most.
const (
	pmauthorityName = "pmauthority"
	nodeHTTPName    = "node:http"
	expressName     = "express"
	ceilingName     = "ceiling"
)

var servers = []serverKind{
	{pmauthorityName, "pmauthority serve (Go, this repository)", func(cfg *runConfig, addr string, _ *payloadCase) []string {
		return append([]string{cfg.Bin, "serve", "--addr", addr, "--default-schema", "text"}, benchproc.UnlimitedConns(cfg.Bin)...)
	}},
	{nodeHTTPName, "bench/noderef/http-server.mjs: plain node:http, prosemirror ESM build", func(cfg *runConfig, addr string, _ *payloadCase) []string {
		return []string{cfg.Node, filepath.Join(cfg.Root, "bench/noderef/http-server.mjs"), "--addr", addr, "--schema", "text"}
	}},
	{expressName, "bench/noderef/express-server.mjs: express + body-parser as prosemirror-v8-perf had it, prosemirror ESM build", func(cfg *runConfig, addr string, _ *payloadCase) []string {
		return []string{cfg.Node, filepath.Join(cfg.Root, "bench/noderef/express-server.mjs"), "--addr", addr, "--schema", "text"}
	}},
	{ceilingName, "httpbench ceiling: Go net/http answering the expected bytes without doing any work", func(cfg *runConfig, addr string, c *payloadCase) []string {
		return []string{cfg.Self, "ceiling", "-addr", addr, "-answer", c.ExpectFile, "-content-type", c.ContentType}
	}},
}

// runConfig is the configuration of a whole run.
type runConfig struct {
	Root, Bin, Self, Node, Traces string
	OutDir, Report                string
	// Profile is the CPU profile file of the pmauthority+pprof server.
	Profile string
	Quick   bool
	// Warmup is each server's load before the first round; Duration the
	// time each server is measured, in Rounds rounds, each preceded by
	// Settle (new connections) that is not measured.
	Warmup, Duration, Settle time.Duration
	Rounds                   int
	Servers, Payloads        []string
	Conns                    []int
	Placements               []string
	Notes                    []string
	// LeftOut says which servers could not be measured, and why.
	LeftOut []string
	// LoadAvg is /proc/loadavg at the start and at the end of the run: the
	// machine is shared, and this says how busy it was.
	LoadAvg [2]string
}

// payloadCase is a payload with its expected answer, computed once by
// node:http and checked against the others before any load.
type payloadCase struct {
	Payload
	BodyFile    string `json:"bodyFile"`
	ExpectFile  string `json:"expectFile"`
	AnswerBytes int    `json:"answerBytes"`
	ContentType string `json:"contentType"`
	// Skip says why the payload is not measured (answers differ).
	Skip string `json:"skip,omitempty"`
	// Checked is, per server, what the answer check found.
	Checked map[string]answerCheck `json:"checked"`
}

// answerCheck is what checkAnswers found for one server and payload.
type answerCheck struct {
	// OK: the answer is node:http's byte for byte (node:http's own is OK
	// when it is a 200).
	OK   bool   `json:"ok"`
	Note string `json:"note"`
}

// caseResult is one measured cell: a server under one load, measured
// in rounds. Its figures are medians over the rounds.
type caseResult struct {
	Placement string `json:"placement"`
	Payload   string `json:"payload"`
	Conns     int    `json:"conns"`
	Server    string `json:"server"`
	// Rounds are the measurements, one per round.
	Rounds []*roundResult `json:"rounds,omitempty"`
	// ReqPerSec, P50, P90, P99, CPUPerReq and OthersCPU are the medians of
	// the rounds' figures; Max is the largest latency of all rounds.
	ReqPerSec float64 `json:"reqPerSec"`
	P50       float64 `json:"p50"`
	P90       float64 `json:"p90"`
	P99       float64 `json:"p99"`
	Max       float64 `json:"max"`
	CPUPerReq float64 `json:"cpuPerReq"`
	OthersCPU float64 `json:"othersCPU"`
	// Errors, Non200 and Mismatches add up the rounds'.
	Errors     int    `json:"errors"`
	Non200     int    `json:"non200"`
	Mismatches int    `json:"mismatches"`
	FirstError string `json:"firstError,omitempty"`
	// PeakRSS is the server process's VmHWM in bytes after all rounds
	// (one fresh process per cell).
	PeakRSS int64 `json:"peakRSS"`
	// Err says why the cell was not measured.
	Err string `json:"error,omitempty"`
}

// roundResult is one load of one server.
type roundResult struct {
	Load *LoadResult `json:"load"`
	// CPUPerReq is the server's CPU time (user and system, all threads)
	// during the load divided by the answers of the load, in seconds:
	// what a request costs, much less sensitive to the machine's other
	// load than the rate.
	CPUPerReq float64 `json:"cpuPerReq"`
	// OthersCPU is the CPU used by everything but the server and the load
	// generator during the load, in cores (0 to 2 here): how busy the
	// shared machine was.
	OthersCPU float64 `json:"othersCPU"`
}

// summarize sets r's figures from its rounds.
func (r *caseResult) summarize() {
	pick := func(f func(*roundResult) float64) float64 {
		var xs []float64
		for _, rr := range r.Rounds {
			xs = append(xs, f(rr))
		}
		return stats.Median(xs)
	}
	r.ReqPerSec = pick(func(rr *roundResult) float64 { return rr.Load.MeanReqPerSec })
	r.P50 = pick(func(rr *roundResult) float64 { return rr.Load.P50 })
	r.P90 = pick(func(rr *roundResult) float64 { return rr.Load.P90 })
	r.P99 = pick(func(rr *roundResult) float64 { return rr.Load.P99 })
	r.CPUPerReq = pick(func(rr *roundResult) float64 { return rr.CPUPerReq })
	r.OthersCPU = pick(func(rr *roundResult) float64 { return rr.OthersCPU })
	for _, rr := range r.Rounds {
		l := rr.Load
		r.Max = max(r.Max, l.Max)
		r.Errors += l.Errors
		r.Non200 += l.Non200
		r.Mismatches += l.Mismatches
		if r.FirstError == "" {
			r.FirstError = l.FirstError
		}
	}
}

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	cfg := &runConfig{}
	quick := fs.Bool("quick", false, "short loads, to check that everything works (about 3 minutes)")
	bin := fs.String("bin", "", "pmauthority `binary` (default ROOT/bench/out/http/pmauthority)")
	warmup := fs.Duration("warmup", 0, "each server's warm-up load, before the rounds (default 1.5s, quick 300ms)")
	duration := fs.Duration("duration", 0, "measured time of each server in each cell, over all rounds (default 8s, quick 500ms)")
	rounds := fs.Int("rounds", 0, "rounds: the servers of a cell are loaded in turn, this many times (default 4, quick 1)")
	serverList := fs.String("servers", "pmauthority,node:http,express,ceiling", "servers to measure")
	payloadList := fs.String("payloads", "seed,small,50KB,1MB", "payloads to measure")
	connList := fs.String("conns", "1,32", "concurrencies (connections)")
	placementList := fs.String("placements", "pinned,unpinned", "placements")
	fs.StringVar(&cfg.Traces, "traces", "", "traces `folder` (default $PMA_TRACES or ../shared/traces beside the repository)")
	fs.StringVar(&cfg.Node, "node", "node", "node `binary`")
	fs.StringVar(&cfg.Report, "report", "", "markdown report `file` (default ROOT/bench/out/http-latest.md)")
	fs.Parse(args)

	root, err := benchproc.RepoRoot()
	if err != nil {
		return err
	}
	cfg.Root = root
	cfg.Quick = *quick
	cfg.OutDir = filepath.Join(root, "bench/out/http")
	cfg.Bin = *bin
	if cfg.Bin == "" {
		cfg.Bin = filepath.Join(cfg.OutDir, "pmauthority")
	}
	if cfg.Report == "" {
		cfg.Report = filepath.Join(root, "bench/out/http-latest.md")
	}
	if cfg.Self, err = os.Executable(); err != nil {
		return err
	}
	cfg.Traces = tracesDir(cfg.Traces)
	cfg.Warmup, cfg.Duration, cfg.Rounds, cfg.Settle = 1500*time.Millisecond, 8*time.Second, 4, 200*time.Millisecond
	if cfg.Quick {
		cfg.Warmup, cfg.Duration, cfg.Rounds, cfg.Settle = 300*time.Millisecond, 500*time.Millisecond, 1, 100*time.Millisecond
	}
	if *warmup > 0 {
		cfg.Warmup = *warmup
	}
	if *duration > 0 {
		cfg.Duration = *duration
	}
	if *rounds > 0 {
		cfg.Rounds = *rounds
	}
	cfg.Servers = benchproc.SplitList(*serverList)
	cfg.Payloads = benchproc.SplitList(*payloadList)
	cfg.Placements = benchproc.SplitList(*placementList)
	for _, s := range benchproc.SplitList(*connList) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("bad concurrency %q", s)
		}
		cfg.Conns = append(cfg.Conns, n)
	}
	for _, name := range cfg.Servers {
		if findServer(name) == nil {
			return fmt.Errorf("unknown server %q", name)
		}
	}
	var unpinned bool
	if cfg.Placements, unpinned, err = benchproc.CheckPlacements(cfg.Placements); err != nil {
		return err
	}
	if unpinned {
		cfg.Notes = append(cfg.Notes, "taskset (util-linux) not found: pinned placement skipped, unpinned only")
	}
	if len(cfg.Placements) == 0 {
		return fmt.Errorf("no placement to run")
	}
	return run(cfg)
}

// run runs the benchmark cfg describes and writes its report.
func run(cfg *runConfig) error {
	started := time.Now()
	cfg.LoadAvg[0] = benchproc.LoadAvg()
	if err := os.MkdirAll(filepath.Join(cfg.OutDir, "logs"), 0o755); err != nil {
		return err
	}
	all, err := Payloads(cfg.Traces)
	if err != nil {
		return err
	}
	var cases []*payloadCase
	for _, p := range all {
		if !slices.Contains(cfg.Payloads, p.Name) {
			continue
		}
		c := &payloadCase{Payload: p, Checked: map[string]answerCheck{},
			BodyFile:   filepath.Join(cfg.OutDir, p.Name+".request.json"),
			ExpectFile: filepath.Join(cfg.OutDir, p.Name+".expected.json")}
		if err := os.WriteFile(c.BodyFile, p.Body, 0o644); err != nil {
			return err
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		return fmt.Errorf("no payload to run")
	}

	benchproc.Logf("checking that every server gives node:http's answer to every payload")
	if err := checkAnswers(cfg, cases); err != nil {
		return err
	}

	var results []*caseResult
	total := len(cfg.Placements) * len(cases) * len(cfg.Conns)
	done := 0
	for _, plName := range cfg.Placements {
		pl := benchproc.FindPlacement(plName)
		for _, c := range cases {
			for _, conns := range cfg.Conns {
				done++
				benchproc.Logf("[%d/%d] %s %s c=%d", done, total, pl.Name, c.Name, conns)
				group := measureGroup(cfg, pl, c, conns)
				for _, r := range group {
					if r.Err != "" {
						benchproc.Logf("    %-12s error: %s", r.Server, r.Err)
					} else {
						benchproc.Logf("    %-12s %8s req/s  p50 %-9s p99 %-9s CPU/req %-9s peak RSS %-8s others' CPU %.2f  errors %d",
							r.Server, fmtRate(r.ReqPerSec), fmtDur(r.P50), fmtDur(r.P99), fmtDur(r.CPUPerReq), fmtBytes(r.PeakRSS), r.OthersCPU, r.Errors)
					}
				}
				results = append(results, group...)
			}
		}
	}

	raw, err := json.MarshalIndent(struct {
		Cases   []*payloadCase `json:"payloads"`
		Results []*caseResult  `json:"results"`
	}{cases, results}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.OutDir, "results.json"), raw, 0o644); err != nil {
		return err
	}
	cfg.LoadAvg[1] = benchproc.LoadAvg()
	var report bytes.Buffer
	writeReport(&report, cfg, cases, results, time.Since(started))
	if err := os.WriteFile(cfg.Report, report.Bytes(), 0o644); err != nil {
		return err
	}
	os.Stdout.Write(report.Bytes())
	benchproc.Logf("report written to %s (raw results in %s)", cfg.Report, filepath.Join(cfg.OutDir, "results.json"))
	for _, c := range cases {
		if c.Skip != "" {
			return fmt.Errorf("payload %s not measured: %s", c.Name, c.Skip)
		}
	}
	if len(cfg.LeftOut) > 0 {
		return fmt.Errorf("not measured: %s", strings.Join(cfg.LeftOut, "; "))
	}
	return nil
}

// checkAnswers asks node:http for the answer to every payload (the
// expected answer, computed once), then checks that pmauthority and
// express give it byte for byte. A payload whose answers differ is
// skipped, with the reason.
func checkAnswers(cfg *runConfig, cases []*payloadCase) error {
	order := []string{nodeHTTPName}
	for _, name := range cfg.Servers {
		if name != nodeHTTPName && name != ceilingName {
			order = append(order, name)
		}
	}
	answers := map[string]map[string][]byte{}
	var failed []string
	for _, name := range order {
		s := findServer(name)
		answers[name] = map[string][]byte{}
		err := withServer(cfg, nil, s, cases[0], "check-"+strings.ReplaceAll(name, ":", "-"), func(addr string) error {
			for _, c := range cases {
				status, ct, body, err := post(addr, c.Body)
				if err != nil {
					return err
				}
				answers[name][c.Name] = body
				switch {
				case status != http.StatusOK:
					c.Checked[name] = answerCheck{false, fmt.Sprintf("status %d: %.300s", status, body)}
				case name == nodeHTTPName:
					c.Checked[name] = answerCheck{true, fmt.Sprintf("expected answer: %d bytes, %s", len(body), ct)}
					c.ContentType = ct
				case bytes.Equal(body, answers[nodeHTTPName][c.Name]):
					c.Checked[name] = answerCheck{true, "identical to node:http's, " + ct}
					if name == pmauthorityName {
						c.ContentType = ct // the ceiling sends pmauthority's headers
					}
				default:
					c.Checked[name] = answerCheck{false, "differs from node:http's answer"}
				}
			}
			return nil
		})
		if err != nil {
			if name == nodeHTTPName {
				return fmt.Errorf("node:http: %w", err)
			}
			note := fmt.Sprintf("%s left out: %v", name, err)
			benchproc.Logf("%s", note)
			cfg.Notes = append(cfg.Notes, note)
			failed = append(failed, name)
			cfg.LeftOut = append(cfg.LeftOut, note)
		}
	}
	left := func(s string) bool { return slices.Contains(failed, s) }
	cfg.Servers = slices.DeleteFunc(cfg.Servers, left)
	order = slices.DeleteFunc(order, left)
	for _, c := range cases {
		if c.ContentType == "" {
			c.ContentType = "application/json; charset=utf-8"
		}
		for _, name := range order {
			if check := c.Checked[name]; !check.OK {
				c.Skip = fmt.Sprintf("%s: %s", name, check.Note)
				if body, ok := answers[name][c.Name]; ok {
					file := filepath.Join(cfg.OutDir, c.Name+"."+strings.ReplaceAll(name, ":", "-")+".answer.json")
					os.WriteFile(file, body, 0o644)
					c.Skip += " (answer in " + file + ")"
				}
				break
			}
		}
		benchproc.Logf("  %s: request %d bytes; %s", c.Name, len(c.Body), strings.Join(checkedList(c, order), "; "))
		expect := answers[nodeHTTPName][c.Name]
		c.AnswerBytes = len(expect)
		if err := os.WriteFile(c.ExpectFile, expect, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func checkedList(c *payloadCase, order []string) []string {
	var out []string
	for _, name := range order {
		out = append(out, name+" "+c.Checked[name].Note)
	}
	return out
}

// measureGroup measures every server with one payload, concurrency and
// placement. It starts them all (each a fresh process), checks each one's
// answer and warms each up; then, in each of cfg.Rounds rounds, it loads
// every server in turn for cfg.Duration/cfg.Rounds, the order rotating
// from round to round, so that slow changes in the load of the shared
// machine hit all servers alike. Then it reads their peak RSS and stops
// them.
func measureGroup(cfg *runConfig, pl *benchproc.Placement, c *payloadCase, conns int) []*caseResult {
	var results, live []*caseResult
	expect, readErr := os.ReadFile(c.ExpectFile)
	for _, name := range cfg.Servers {
		r := &caseResult{Placement: pl.Name, Payload: c.Name, Conns: conns, Server: name}
		results = append(results, r)
		switch {
		case c.Skip != "":
			r.Err = "not measured: " + c.Skip
		case readErr != nil:
			r.Err = readErr.Error()
		}
	}
	// The servers start (and stop) all at once: node takes a while.
	procs := make([]*benchproc.Server, len(results))
	var wg sync.WaitGroup
	for i, r := range results {
		if r.Err != "" {
			continue
		}
		wg.Go(func() {
			tag := fmt.Sprintf("%s-%s-c%d-%s", pl.Name, c.Name, conns, strings.ReplaceAll(r.Server, ":", "-"))
			p, err := startServer(cfg, pl, findServer(r.Server), c, tag)
			if err != nil {
				r.Err = err.Error()
			}
			procs[i] = p
		})
	}
	wg.Wait()
	defer func() {
		var wg sync.WaitGroup
		for _, p := range procs {
			if p != nil {
				wg.Go(func() { p.Stop(stopGrace) })
			}
		}
		wg.Wait()
	}()
	proc := map[*caseResult]*benchproc.Server{}
	for i, r := range results {
		if r.Err != "" {
			continue
		}
		p := procs[i]
		proc[r] = p
		status, _, body, err := post(p.Addr, c.Body)
		if err == nil && (status != http.StatusOK || !bytes.Equal(body, expect)) {
			err = fmt.Errorf("answer differs from the expected one (status %d): %.300s", status, body)
		}
		if err == nil {
			_, err = loadOnce(cfg, pl, p, c, conns, 0, cfg.Warmup)
		}
		if err != nil {
			r.Err = err.Error()
			continue
		}
		live = append(live, r)
	}
	per := cfg.Duration / time.Duration(cfg.Rounds)
	for round := range cfg.Rounds {
		for i := range live {
			r := live[(i+round)%len(live)]
			if r.Err != "" {
				continue
			}
			rr, err := loadOnce(cfg, pl, proc[r], c, conns, cfg.Settle, per)
			if err != nil {
				r.Err = err.Error()
				continue
			}
			r.Rounds = append(r.Rounds, rr)
		}
	}
	for _, r := range live {
		if r.Err != "" {
			continue
		}
		r.summarize()
		var err error
		if r.PeakRSS, err = benchproc.ProcStatus(proc[r].Pid(), "VmHWM"); err != nil {
			r.Err = err.Error()
		}
	}
	return results
}

// loadOnce runs the load generator against p once (with pl's CPU
// placement) and measures the CPU the server and the rest of the machine
// used meanwhile.
func loadOnce(cfg *runConfig, pl *benchproc.Placement, p *benchproc.Server, c *payloadCase, conns int, warmup, duration time.Duration) (*roundResult, error) {
	args := append(append([]string{}, pl.Load...), cfg.Self, "load",
		"-addr", p.Addr, "-body", c.BodyFile, "-expect", c.ExpectFile,
		"-c", strconv.Itoa(conns), "-warmup", warmup.String(), "-duration", duration.String())
	cmd := exec.Command(args[0], args[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	busy0, srv0 := machineBusy(), processCPU(p.Pid())
	start := time.Now()
	if err := benchproc.Start(cmd); err != nil {
		return nil, err
	}
	err := cmd.Wait()
	benchproc.Forget(cmd)
	wall := time.Since(start).Seconds()
	busy, srv := machineBusy()-busy0, processCPU(p.Pid())-srv0
	if err != nil {
		return nil, fmt.Errorf("load generator: %v: %s", err, stderr.Bytes())
	}
	rr := &roundResult{Load: &LoadResult{}}
	if err := json.Unmarshal(stdout.Bytes(), rr.Load); err != nil {
		return nil, fmt.Errorf("load generator: %w", err)
	}
	if rr.Load.All > 0 {
		rr.CPUPerReq = srv / float64(rr.Load.All)
	}
	loadgen := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	rr.OthersCPU = min(max(0, (busy-srv-loadgen)/wall), float64(runtime.NumCPU()))
	return rr, nil
}

// stopGrace is how long a server may take to stop after SIGTERM.
const stopGrace = 5 * time.Second

// startServer starts s on a free loopback port (with pl's CPU placement,
// if any; its output goes to OutDir/logs/tag.log) and waits until it
// accepts connections.
func startServer(cfg *runConfig, pl *benchproc.Placement, s *serverKind, c *payloadCase, tag string) (*benchproc.Server, error) {
	port, err := benchproc.FreePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := s.command(cfg, addr, c)
	if pl != nil {
		args = append(append([]string{}, pl.Server...), args...)
	}
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

// withServer starts s, calls f with its address, and stops it.
func withServer(cfg *runConfig, pl *benchproc.Placement, s *serverKind, c *payloadCase, tag string, f func(addr string) error) error {
	p, err := startServer(cfg, pl, s, c, tag)
	if err != nil {
		return err
	}
	defer p.Stop(stopGrace)
	return f(p.Addr)
}

// waitReady waits until p accepts connections, exits or the timeout
// passes.
func waitReady(p *benchproc.Server, timeout time.Duration) error {
	addr := p.Addr
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if done, err := p.Exited(); done {
			return fmt.Errorf("exited: %v", err)
		}
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("not listening on %s after %s", addr, timeout)
}

// post sends body to addr once and returns the answer's status,
// Content-Type and body.
func post(addr string, body []byte) (status int, contentType string, answer []byte, err error) {
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Post("http://"+addr+"/", "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	answer, err = io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), answer, err
}

// clockTick is the unit of the CPU times in /proc (USER_HZ, 100 on Linux).
const clockTick = 0.01

// machineBusy returns the CPU time all CPUs have spent not idle since
// boot, in seconds (-1 if unknown).
func machineBusy() float64 {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return -1
	}
	var busy float64
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseFloat(v, 64)
		busy += n
	}
	return busy * clockTick
}

// processCPU returns the user and system CPU time of process pid (all its
// threads) in seconds (0 if unknown).
func processCPU(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14 and stime 15.
	i := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) * clockTick
}

// tracesDir returns dir, or by default the traces folder beside the
// repository.
func tracesDir(dir string) string {
	if dir != "" {
		return dir
	}
	root, err := benchproc.RepoRoot()
	if err != nil {
		root = "."
	}
	return tracedoc.Dir(root)
}

func findServer(name string) *serverKind {
	for i := range servers {
		if servers[i].Name == name {
			return &servers[i]
		}
	}
	return nil
}
