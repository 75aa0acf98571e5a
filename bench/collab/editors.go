package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// editorsOptions describes a load of editors typing into documents.
type editorsOptions struct {
	Addr string
	// Addrs, when not empty, are several servers of one cluster (one
	// database) instead of Addr: the editors are spread over them in
	// turn (a document's editors on different servers), and the final
	// check asks the first.
	Addrs []string
	// Token, when not empty, is sent as a bearer token with every request.
	Token string
	// Docs documents (named Prefix0, Prefix1, …), each with Editors
	// editors.
	Docs, Editors int
	Prefix        string
	// MaxText: see typist.
	MaxText int64
	Seed    uint64
	// Warmup is how long the load runs before it is measured, Duration
	// how long it is measured.
	Warmup, Duration time.Duration
	// PID is the server's process id, to measure its CPU time (0: not
	// measured).
	PID int
	// PIDs are the process ids of the servers of Addrs; their CPU times
	// are added up.
	PIDs []int
	// DBPID, when not 0, is a database's main process (PostgreSQL's
	// postmaster): the CPU time of it and its children is measured too.
	DBPID int
	// NoTextCheck leaves out the final check of each document's text,
	// for a server that applies no step (the go-ceiling server); the
	// versions are still checked.
	NoTextCheck bool
	// Mode is how the editors submit: modeClassic (POST events, 409,
	// catch up, POST again) or modeCommit (POST commits, rebased by the
	// server).
	Mode string
	// MetricsAddr, when not empty, is the server's --metrics-addr: its
	// store's group commits are read from GET /metrics at the start and
	// the end of the measured time.
	MetricsAddr string
}

// The editors' modes.
const (
	modeClassic = "classic"
	modeCommit  = "commit"
)

// editorsResult is what an editors load measured. Rates are per second
// of measured time; a request belongs to the measured time when its
// answer arrives in it.
type editorsResult struct {
	Docs     int     `json:"docs"`
	Editors  int     `json:"editorsPerDoc"`
	Duration float64 `json:"duration"`
	// Submits counts the POSTs answered 200 or 409; Accepted the 200s,
	// Conflicts the 409s; Steps the steps of the accepted ones.
	Submits   int `json:"submits"`
	Accepted  int `json:"accepted"`
	Conflicts int `json:"conflicts"`
	Steps     int `json:"steps"`
	// Catchups counts the GET events after a 409.
	Catchups int `json:"catchups"`
	// Mode is the editors' mode; in commit mode Submits and Accepted
	// count the commits answered (every answer is a 200), Steps the steps
	// the server kept and Dropped those it dropped.
	Mode          string  `json:"mode,omitempty"`
	Dropped       int     `json:"dropped,omitempty"`
	StepsPerSec   float64 `json:"stepsPerSec"`
	SubmitsPerSec float64 `json:"submitsPerSec"`
	ConflictRate  float64 `json:"conflictRate"`
	// Submit is the time of one POST (sent to answered, 200 or 409);
	// Accept the time from the first POST of a batch of steps to its
	// acceptance, 409s and catch-ups included.
	Submit latencies `json:"submit"`
	Accept latencies `json:"accept"`
	// PerEditor is how the accepted steps and the accept latency spread
	// over the editors.
	PerEditor perEditor `json:"perEditor"`
	// Store is what the server's metrics say of its store's writes over
	// the measured time (nil: not measured).
	Store *storeWrites `json:"store,omitempty"`
	CPU   cpuUse       `json:"cpu"`
	// CPUPerStep is the server's CPU time per accepted step, in seconds;
	// DBCPUPerStep the database's (when measured).
	CPUPerStep   float64 `json:"cpuPerStep"`
	DBCPUPerStep float64 `json:"dbCPUPerStep,omitempty"`
	// FinalVersions adds up the documents' versions at the end; it must be
	// the steps accepted over the whole load (warm-up included).
	FinalVersions int64 `json:"finalVersions"`
	errorCount
}

// perEditor is the spread of the load over its editors (over the
// measured time).
type perEditor struct {
	// FewestSteps and MostSteps are the fewest and most steps an editor
	// had accepted; Fairness FewestSteps / MostSteps (1: even).
	FewestSteps int     `json:"fewestSteps"`
	MostSteps   int     `json:"mostSteps"`
	Fairness    float64 `json:"fairness"`
	// WorstP50 and WorstP99 are the highest of the editors' own accept
	// p50 and p99.
	WorstP50 float64 `json:"worstP50"`
	WorstP99 float64 `json:"worstP99"`
}

// storeWrites is what the store's group-commit metrics
// (pmauthority_store_commit_batch_size) moved by over the measured time.
type storeWrites struct {
	// Transactions counts the store's group commits (one fsync each with
	// --sync full), Ops the operations they carried (a document's append
	// is one, whatever number of commits it holds).
	Transactions float64 `json:"transactions"`
	Ops          float64 `json:"ops"`
	// AcceptedPerOp and AcceptedPerTransaction divide the accepted
	// submissions (commits) by them.
	AcceptedPerOp          float64 `json:"acceptedPerOp"`
	AcceptedPerTransaction float64 `json:"acceptedPerTransaction"`
}

// editor is one simulated editor and what it measured.
type editor struct {
	opt     *editorsOptions
	doc     string
	addr    string
	t       *typist
	c       *conn
	version int64
	comment int64
	// counts over the measured time
	submits, accepted, conflicts, steps, catchups int
	submit, accept                                []time.Duration
	dropped                                       int
	// allSteps counts the steps accepted over the whole load,
	// allInserts those of them that insert a letter (commit mode).
	allSteps, allInserts int64
	errorCount
}

// runEditors runs the load opt describes.
func runEditors(opt editorsOptions) (*editorsResult, error) {
	if opt.Docs < 1 || opt.Editors < 1 || opt.Duration <= 0 {
		return nil, fmt.Errorf("need documents, editors and a duration")
	}
	if opt.Mode == "" {
		opt.Mode = modeClassic
	}
	if opt.Mode != modeClassic && opt.Mode != modeCommit {
		return nil, fmt.Errorf("unknown mode %q (want %s or %s)", opt.Mode, modeClassic, modeCommit)
	}
	addrs := opt.Addrs
	if len(addrs) == 0 {
		addrs = []string{opt.Addr}
	}
	pids := opt.PIDs
	if len(pids) == 0 {
		pids = []int{opt.PID}
	}
	var editors []*editor
	defer func() {
		for _, e := range editors {
			if e.c != nil {
				e.c.Close()
			}
		}
	}()
	for d := range opt.Docs {
		for i := range opt.Editors {
			addr := addrs[(d*opt.Editors+i)%len(addrs)]
			c, err := dialConn(addr, opt.Token)
			if err != nil {
				return nil, err
			}
			e := &editor{opt: &opt, doc: fmt.Sprintf("%s%d", opt.Prefix, d), addr: addr, c: c,
				t: newTypist(opt.Seed+uint64(d*opt.Editors+i), opt.MaxText)}
			editors = append(editors, e)
			st, err := getDoc(c, e.doc)
			if err != nil {
				return nil, err
			}
			e.version, e.comment = *st.Version, *st.CommentVersion
		}
	}
	start := time.Now()
	w := window{from: start.Add(opt.Warmup), end: start.Add(opt.Warmup + opt.Duration)}
	hardStop := w.end.Add(10 * time.Second)
	var wg sync.WaitGroup
	for _, e := range editors {
		if opt.Mode == modeCommit {
			wg.Go(func() { e.runCommit(w, hardStop) })
		} else {
			wg.Go(func() { e.run(w, hardStop) })
		}
	}
	time.Sleep(time.Until(w.from))
	meter := startCPU(opt.DBPID, pids)
	var before map[string]float64
	var metricsErr error
	if opt.MetricsAddr != "" {
		before, metricsErr = scrapeMetrics(opt.MetricsAddr)
	}
	time.Sleep(time.Until(w.end))
	cpu := meter.stop()
	var after map[string]float64
	if opt.MetricsAddr != "" && metricsErr == nil {
		after, metricsErr = scrapeMetrics(opt.MetricsAddr)
	}
	wg.Wait()

	r := &editorsResult{Docs: opt.Docs, Editors: opt.Editors, Duration: opt.Duration.Seconds(), CPU: cpu, Mode: opt.Mode}
	if metricsErr != nil {
		r.add(fmt.Errorf("metrics: %w", metricsErr))
	}
	var submit, accept []time.Duration
	perDoc, inserts := map[string]int64{}, map[string]int64{}
	r.PerEditor.FewestSteps = -1
	for _, e := range editors {
		if r.PerEditor.FewestSteps < 0 || e.steps < r.PerEditor.FewestSteps {
			r.PerEditor.FewestSteps = e.steps
		}
		r.PerEditor.MostSteps = max(r.PerEditor.MostSteps, e.steps)
		own := summarize(e.accept)
		r.PerEditor.WorstP50 = max(r.PerEditor.WorstP50, own.P50)
		r.PerEditor.WorstP99 = max(r.PerEditor.WorstP99, own.P99)
		r.Dropped += e.dropped
		inserts[e.doc] += e.allInserts
		r.Submits += e.submits
		r.Accepted += e.accepted
		r.Conflicts += e.conflicts
		r.Steps += e.steps
		r.Catchups += e.catchups
		submit = append(submit, e.submit...)
		accept = append(accept, e.accept...)
		perDoc[e.doc] += e.allSteps
		r.merge(e.errorCount)
	}
	r.StepsPerSec = float64(r.Steps) / r.Duration
	r.SubmitsPerSec = float64(r.Submits) / r.Duration
	if r.Submits > 0 {
		r.ConflictRate = float64(r.Conflicts) / float64(r.Submits)
	}
	r.Submit = summarize(submit)
	r.Accept = summarize(accept)
	if r.PerEditor.MostSteps > 0 {
		r.PerEditor.Fairness = float64(r.PerEditor.FewestSteps) / float64(r.PerEditor.MostSteps)
	}
	// A store that reports no group commit (the memory store's
	// histogram stays empty) gives no figures.
	if n, ok := after[metricBatch+"_count"]; ok && n > before[metricBatch+"_count"] {
		sw := &storeWrites{Transactions: n - before[metricBatch+"_count"], Ops: after[metricBatch+"_sum"] - before[metricBatch+"_sum"]}
		if sw.Ops > 0 {
			sw.AcceptedPerOp = float64(r.Accepted) / sw.Ops
		}
		if sw.Transactions > 0 {
			sw.AcceptedPerTransaction = float64(r.Accepted) / sw.Transactions
		}
		r.Store = sw
	}
	if cpu.Server >= 0 && r.Steps > 0 {
		r.CPUPerStep = cpu.Server / float64(r.Steps)
	}
	if opt.DBPID > 0 && r.Steps > 0 {
		r.DBCPUPerStep = cpu.DB / float64(r.Steps)
	}
	// Every document must be at the version its accepted steps make, with
	// the text they typed.
	c, err := dialConn(addrs[0], opt.Token)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	for d := range opt.Docs {
		id := fmt.Sprintf("%s%d", opt.Prefix, d)
		st, err := getDoc(c, id)
		// In a cluster the first server learns of the other servers'
		// last commits by a notice, a moment after their answers.
		for deadline := time.Now().Add(2 * time.Second); err == nil && len(addrs) > 1 && *st.Version < perDoc[id] && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
			st, err = getDoc(c, id)
		}
		if err != nil {
			r.add(fmt.Errorf("final check: %w", err))
			continue
		}
		r.FinalVersions += *st.Version
		if *st.Version != perDoc[id] {
			r.add(fmt.Errorf("final check: %s is at version %d, the editors had %d steps accepted", id, *st.Version, perDoc[id]))
		}
		want := wantText(*st.Version, opt.MaxText)
		if opt.Mode == modeCommit {
			want = inserts[id] // every kept step inserts a letter or replaces one
		}
		if n := int64(len(st.firstText())); n != want && !opt.NoTextCheck {
			r.add(fmt.Errorf("final check: %s has %d letters in its first paragraph, want %d", id, n, want))
		}
	}
	return r, nil
}

// run submits until w ends: a POST at the known version with 1-3 steps;
// on 409 a GET of the events since that version (answered at once: the
// version is behind), then the POST again at the new version.
func (e *editor) run(w window, hardStop time.Time) {
	e.c.nc.SetDeadline(hardStop)
	path := "/docs/" + e.doc + "/events"
	for {
		n := 1 + e.t.rng.IntN(3)
		first := time.Now()
		for {
			t0 := time.Now()
			if !t0.Before(w.end) {
				return
			}
			status, body, err := e.c.do("POST", path, e.t.submission(e.version, n))
			t1 := time.Now()
			in := w.has(t1)
			if err != nil {
				if in {
					e.add(err)
				}
				if !e.reconnect(hardStop) {
					return
				}
				break
			}
			if in && (status == 200 || status == 409) {
				e.submits++
				e.submit = append(e.submit, t1.Sub(t0))
			}
			if status == 200 {
				var a submitAnswer
				if err := json.Unmarshal(body, &a); err != nil || a.Version == nil {
					e.fail(in, fmt.Errorf("POST answer %.200s: %v", body, err))
					break
				}
				if *a.Version != e.version+int64(n) {
					e.fail(in, fmt.Errorf("POST of %d steps at version %d answered version %d", n, e.version, *a.Version))
				}
				e.version = *a.Version
				e.allSteps += int64(n)
				if in {
					e.accepted++
					e.steps += n
					e.accept = append(e.accept, t1.Sub(first))
				}
				break
			}
			if status != 409 {
				e.fail(in, fmt.Errorf("POST: status %d: %.200s", status, body))
				break
			}
			if in {
				e.conflicts++
			}
			if !e.catchUp(w) {
				break
			}
		}
	}
}

// runCommit commits until w ends, one commit in flight: a POST of 1-3
// steps at the editor's version under a fresh ref, which the server
// rebases over the steps since; the answer's version is the editor's
// next (everything up to it is the server's). After a broken connection
// the same commit is sent again under its ref, which the server answers
// as it did the first time if it had applied it.
func (e *editor) runCommit(w window, hardStop time.Time) {
	e.c.nc.SetDeadline(hardStop)
	path := "/docs/" + e.doc + "/commits"
	for {
		n := 1 + e.t.rng.IntN(3)
		body := e.t.commit(e.version, n)
		first := time.Now()
		for {
			t0 := time.Now()
			if !t0.Before(w.end) {
				return
			}
			status, answer, err := e.c.do("POST", path, body)
			t1 := time.Now()
			in := w.has(t1)
			if err != nil {
				e.fail(in, err)
				if !e.reconnect(hardStop) {
					return
				}
				continue
			}
			if status != 200 {
				e.fail(in, fmt.Errorf("POST commit: status %d: %.200s", status, answer))
				break
			}
			var a commitAnswer
			err = json.Unmarshal(answer, &a)
			var ins int64
			if err == nil {
				ins, err = a.check(e.version, n)
			}
			if err != nil {
				e.fail(in, fmt.Errorf("commit answer %.200s: %v", answer, err))
				break
			}
			e.version = *a.Version
			e.allSteps += int64(len(a.Steps))
			e.allInserts += ins
			if in {
				e.submits++
				e.submit = append(e.submit, t1.Sub(t0))
				e.accepted++
				e.steps += len(a.Steps)
				e.dropped += len(a.Dropped)
				e.accept = append(e.accept, t1.Sub(first))
			}
			break
		}
	}
}

// metricBatch is the histogram of the store's group commits.
const metricBatch = "pmauthority_store_commit_batch_size"

// scrapeMetrics reads the samples without labels of GET /metrics at
// addr (Prometheus's text format), by name.
func scrapeMetrics(addr string) (map[string]float64, error) {
	c, err := dialConn(addr, "")
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.nc.SetDeadline(time.Now().Add(5 * time.Second))
	status, body, err := c.do("GET", "/metrics", nil)
	if err != nil {
		return nil, err
	}
	if status != 200 {
		return nil, fmt.Errorf("GET /metrics: status %d: %.200s", status, body)
	}
	out := map[string]float64{}
	for line := range strings.Lines(string(body)) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out, nil
}

// catchUp fetches the events after the editor's version; false when that
// failed.
func (e *editor) catchUp(w window) bool {
	status, body, err := e.c.do("GET", eventsPath(e.doc, e.version, e.comment), nil)
	in := w.has(time.Now())
	if in {
		e.catchups++
	}
	if err != nil {
		e.fail(in, err)
		return e.reconnect(w.end.Add(10 * time.Second))
	}
	var a eventsAnswer
	switch {
	case status != 200:
		err = fmt.Errorf("GET events: status %d: %.200s", status, body)
	default:
		if err = json.Unmarshal(body, &a); err == nil {
			err = a.check(e.version)
		}
	}
	if err != nil {
		e.fail(in, err)
		return false
	}
	e.version, e.comment = *a.Version, *a.CommentVersion
	return true
}

// fail counts err when it happened in the measured time.
func (e *editor) fail(in bool, err error) {
	if in {
		e.add(err)
	}
}

// reconnect replaces a broken connection; false when it cannot.
func (e *editor) reconnect(hardStop time.Time) bool {
	e.c.Close()
	e.c = nil
	for time.Now().Before(hardStop) {
		c, err := dialConn(e.addr, e.opt.Token)
		if err == nil {
			c.nc.SetDeadline(hardStop)
			e.c = c
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}
