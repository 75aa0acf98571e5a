package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
	"github.com/pmauthority/pmauthority/bench/internal/stats"
)

// summary is one server under one scenario in one placement: the
// medians of its rounds' figures.
type summary struct {
	rounds int
	errs   int
	first  string
	failed string // a round's error, when one failed
	// editors
	stepsPerSec, submitsPerSec, conflictRate float64
	submitP50, submitP99, acceptP99          float64
	acceptP50, droppedPerSec                 float64
	// per editor: fewest and most steps accepted, their ratio, the
	// highest of the editors' own accept p99
	fewest, most, fairness, worstP99 float64
	// store writes: accepted submissions per store op and per transaction
	perOp, perTxn      float64
	cpuPerStep, others float64
	// fanout
	delivered, expected         int
	deliveryP50, deliveryP99    float64
	deliveryMax, writerP99      float64
	serverCPUPerSec             float64
	rssBefore, rssAfter, perDoc float64
	perDocGC, heapPerDoc        float64
	peakRSS                     float64
}

// summarizeCells returns the summary of the cells of one placement, scenario
// and server in classic mode.
func summarizeCells(cells []*cell, pl, sc, server string) *summary {
	return summarizeMode(cells, pl, sc, server, modeClassic)
}

// modeOf returns the cell's editors' mode.
func (c *cell) modeOf() string {
	if c.Mode == "" {
		return modeClassic
	}
	return c.Mode
}

// summarizeMode returns the summary of the cells of one placement,
// scenario, server and mode.
func summarizeMode(cells []*cell, pl, sc, server, mode string) *summary {
	s := &summary{}
	var cols = map[string][]float64{}
	add := func(k string, v float64) { cols[k] = append(cols[k], v) }
	for _, c := range cells {
		if c.Placement != pl || c.Scenario != sc || c.Server != server || c.modeOf() != mode {
			continue
		}
		if c.Err != "" {
			s.failed = c.Err
			continue
		}
		s.rounds++
		add("peak", float64(c.PeakRSS))
		var ec errorCount
		switch r := c.Result; {
		case r.Editors != nil:
			e := r.Editors
			ec = e.errorCount
			add("steps", e.StepsPerSec)
			add("submits", e.SubmitsPerSec)
			add("conflicts", e.ConflictRate)
			add("p50", e.Submit.P50)
			add("p99", e.Submit.P99)
			add("accept99", e.Accept.P99)
			add("accept50", e.Accept.P50)
			add("dropped", float64(e.Dropped)/e.Duration)
			add("fewest", float64(e.PerEditor.FewestSteps))
			add("most", float64(e.PerEditor.MostSteps))
			add("fairness", e.PerEditor.Fairness)
			add("worst99", e.PerEditor.WorstP99)
			if e.Store != nil {
				add("perop", e.Store.AcceptedPerOp)
				add("pertxn", e.Store.AcceptedPerTransaction)
			}
			add("cpu", e.CPUPerStep)
			add("others", e.CPU.Others)
		case r.Fanout != nil:
			f := r.Fanout
			ec = f.errorCount
			s.delivered += f.Deliveries
			s.expected += f.Expected
			add("d50", f.Delivery.P50)
			add("d99", f.Delivery.P99)
			add("dmax", f.Delivery.Max)
			add("w99", f.Submit.P99)
			add("cpu", f.CPU.Server/f.Duration)
			add("others", f.CPU.Others)
		case r.Memory != nil:
			m := r.Memory
			ec = m.errorCount
			add("before", float64(m.RSSBefore))
			add("after", float64(m.RSSAfter))
			add("perdoc", m.PerDoc)
			if m.PerDocGC != 0 {
				add("perdocgc", m.PerDocGC)
				add("heap", m.HeapPerDocGC)
			}
		}
		s.errs += ec.Errors
		if s.first == "" {
			s.first = ec.FirstError
		}
	}
	m := func(k string) float64 { return stats.Median(cols[k]) }
	s.stepsPerSec, s.submitsPerSec, s.conflictRate = m("steps"), m("submits"), m("conflicts")
	s.submitP50, s.submitP99, s.acceptP99 = m("p50"), m("p99"), m("accept99")
	s.cpuPerStep, s.others = m("cpu"), m("others")
	s.acceptP50, s.droppedPerSec = m("accept50"), m("dropped")
	s.fewest, s.most, s.fairness, s.worstP99 = m("fewest"), m("most"), m("fairness"), m("worst99")
	s.perOp, s.perTxn = m("perop"), m("pertxn")
	s.deliveryP50, s.deliveryP99, s.deliveryMax, s.writerP99 = m("d50"), m("d99"), m("dmax"), m("w99")
	s.serverCPUPerSec = m("cpu")
	s.rssBefore, s.rssAfter, s.perDoc = m("before"), m("after"), m("perdoc")
	s.perDocGC, s.heapPerDoc = m("perdocgc"), m("heap")
	s.peakRSS = m("peak")
	return s
}

// errorsCell is the errors column of a summary.
func (s *summary) errorsCell() string {
	switch {
	case s.failed != "" && s.rounds == 0:
		return "FAILED: " + oneLine(s.failed)
	case s.failed != "":
		return fmt.Sprintf("%d; a round FAILED: %s", s.errs, oneLine(s.failed))
	case s.errs > 0:
		return fmt.Sprintf("%d (first: %s)", s.errs, oneLine(s.first))
	}
	return "0"
}

// writeReport writes the markdown report of a run.
func writeReport(w io.Writer, cfg *runConfig, cells []*cell, took time.Duration) {
	cmdline := "bash bench/collab/run.sh"
	if cfg.Quick {
		cmdline += " --quick"
	}
	fmt.Fprintf(w, "# Collab authority: pmauthority and node side by side\n\n")
	fmt.Fprintf(w, "- date: %s; command: `%s` (the run took %s)\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), cmdline, took.Round(time.Second))
	fmt.Fprintf(w, "- machine: %s; load average (1, 5, 15 min) %s at the start, %s at the end\n", machineFacts(cfg), cfg.LoadAvg[0], cfg.LoadAvg[1])
	fmt.Fprintf(w, "- every load runs against a fresh server process (a fresh, empty data folder for SQLite); %d rounds, in each every scenario against every server, the servers' order rotating; figures are medians over the rounds; timed loads: %s of warm-up, then %s measured\n",
		cfg.Rounds, cfg.Warmup, cfg.Duration)
	fmt.Fprintf(w, "- load generator: `collabbench load` (bench/collab), its own minimal keep-alive HTTP/1.1 client, one connection per editor or reader, on loopback\n")
	for _, n := range cfg.Notes {
		fmt.Fprintf(w, "- note: %s\n", n)
	}
	fmt.Fprintf(w, "\nServers:\n\n")
	for _, name := range cfg.Servers {
		fmt.Fprintf(w, "- **%s**: %s\n", name, findServer(name).About)
	}
	fmt.Fprintf(w, "\nScenarios:\n\n")
	for _, name := range cfg.Scenarios {
		fmt.Fprintf(w, "- **%s**: %s\n", name, findScenario(name).about(cfg))
	}

	has := func(sc string) bool { return slices.Contains(cfg.Scenarios, sc) }
	for _, plName := range cfg.Placements {
		pl := benchproc.FindPlacement(plName)
		fmt.Fprintf(w, "\n## %s: %s\n", pl.Name, pl.About)
		if slices.ContainsFunc(cfg.Scenarios, isEditors) && slices.Contains(cfg.Modes, modeClassic) {
			fmt.Fprintf(w, "\n| scenario | server | steps/s | submits/s | 409 rate | submit p50 | submit p99 | accept p99 | CPU/step | peak RSS | others' CPU | errors |\n")
			fmt.Fprintf(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
			for _, sc := range slices.DeleteFunc(slices.Clone(cfg.Scenarios), func(sc string) bool { return !isEditors(sc) }) {
				for _, server := range cfg.Servers {
					s := summarizeCells(cells, pl.Name, sc, server)
					fmt.Fprintf(w, "| %s | %s | %s | %s | %.1f %% | %s | %s | %s | %s | %s | %.2f | %s |\n", sc, server,
						fmtRate(s.stepsPerSec), fmtRate(s.submitsPerSec), 100*s.conflictRate, fmtDur(s.submitP50), fmtDur(s.submitP99),
						fmtDur(s.acceptP99), fmtDur(s.cpuPerStep), fmtBytes(s.peakRSS), s.others, s.errorsCell())
				}
			}
		}
		if has("fanout") {
			fmt.Fprintf(w, "\nFanout (%d readers, writer at 10/s):\n\n", cfg.Readers)
			fmt.Fprintf(w, "| server | delivered | delivery p50 | delivery p99 | delivery max | writer submit p99 | server CPU (of one core) | peak RSS | others' CPU | errors |\n")
			fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
			for _, server := range cfg.Servers {
				s := summarizeCells(cells, pl.Name, "fanout", server)
				fmt.Fprintf(w, "| %s | %d / %d | %s | %s | %s | %s | %.0f %% | %s | %.2f | %s |\n", server, s.delivered, s.expected,
					fmtDur(s.deliveryP50), fmtDur(s.deliveryP99), fmtDur(s.deliveryMax), fmtDur(s.writerP99),
					100*s.serverCPUPerSec, fmtBytes(s.peakRSS), s.others, s.errorsCell())
			}
		}
		if has("memory") {
			fmt.Fprintf(w, "\nMemory per loaded document (%d documents of 2,000 letters, after as many to warm up):\n\n", cfg.MemDocs)
			fmt.Fprintf(w, "| server | RSS before | RSS after | RSS per document | RSS per document, read after a forced GC | live heap per document after a GC | errors |\n|---|---:|---:|---:|---:|---:|---|\n")
			for _, server := range cfg.Servers {
				if !runs(findServer(server), scenarioMemory) {
					continue
				}
				s := summarizeCells(cells, pl.Name, "memory", server)
				gc, heap := "", ""
				if s.perDocGC != 0 {
					gc, heap = fmtBytes(s.perDocGC), fmtBytes(s.heapPerDoc)
				}
				fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", server, fmtBytes(s.rssBefore), fmtBytes(s.rssAfter), fmtBytes(s.perDoc), gc, heap, s.errorsCell())
			}
		}
		writeModes(w, cfg, cells, pl)
		writeRatios(w, cfg, cells, pl)
		writeCeiling(w, cfg, cells, pl)
	}
	writeTargets(w, cfg, cells)
}

// targetServer is the row the targets are about: pmauthority
// with its durable default store.
const targetServer = "pma-sqlite-full"

// writeTargets says, per placement, whether the targets are met:
// SQLite-durable pmauthority at 3× node's accepted steps/s or more with a
// lower submit p99, and less memory per loaded document than node.
func writeTargets(w io.Writer, cfg *runConfig, cells []*cell) {
	if !slices.Contains(cfg.Servers, targetServer) || !slices.Contains(cfg.Servers, nodeName) {
		return
	}
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	fmt.Fprintf(w, "\n## Targets (%s against node)\n\n", targetServer)
	for _, plName := range cfg.Placements {
		for _, sc := range []string{"1doc-8ed", "100docs-2ed"} {
			if !slices.Contains(cfg.Scenarios, sc) {
				continue
			}
			a, n := summarizeCells(cells, plName, sc, targetServer), summarizeCells(cells, plName, sc, nodeName)
			if a.rounds == 0 || n.rounds == 0 || n.stepsPerSec <= 0 || n.submitP99 <= 0 {
				continue
			}
			fmt.Fprintf(w, "- %s, %s: steps/s %.2f× node's (≥3×: %s); submit p99 %s against %s (lower: %s)", plName, sc,
				a.stepsPerSec/n.stepsPerSec, met(a.stepsPerSec >= 3*n.stepsPerSec),
				fmtDur(a.submitP99), fmtDur(n.submitP99), met(a.submitP99 < n.submitP99))
			if c := summarizeCells(cells, plName, sc, ceilingName); c.rounds > 0 {
				fmt.Fprintf(w, "; %s, doing none of the work, reaches %.2f× node's", ceilingName, c.stepsPerSec/n.stepsPerSec)
			}
			fmt.Fprintln(w)
		}
		if slices.Contains(cfg.Modes, modeCommit) {
			writeCommitTargets(w, cells, plName, met)
		}
		if slices.Contains(cfg.Scenarios, scenarioMemory) {
			a, n := summarizeCells(cells, plName, scenarioMemory, targetServer), summarizeCells(cells, plName, scenarioMemory, nodeName)
			if a.rounds > 0 && n.rounds > 0 {
				fmt.Fprintf(w, "- %s, memory per loaded document: %s against node's %s (below: %s)\n", plName,
					fmtBytes(a.perDoc), fmtBytes(n.perDoc), met(a.perDoc < n.perDoc))
			}
		}
	}
}

// isEditors reports whether the scenario named sc is an editors load.
func isEditors(sc string) bool {
	s := findScenario(sc)
	return s != nil && s.editors
}

// writeModes writes, when commit mode was measured, the editors
// scenarios in every mode side by side, with each row's steps/s as a
// multiple of node's (classic: node has no commit mode).
func writeModes(w io.Writer, cfg *runConfig, cells []*cell, pl *benchproc.Placement) {
	if !slices.Contains(cfg.Modes, modeCommit) {
		return
	}
	fmt.Fprintf(w, "\nEditors by mode (classic: POST events, 409, catch up; commit: POST commits, rebased by the server). submits/s are the commits answered in commit mode; accept is from a batch's first POST to its acceptance; per editor: the fewest and most steps an editor had accepted, their ratio, and the highest of the editors' own accept p99; per store op and per fsync: accepted submissions (commits) per operation and per transaction of the store's group commits, from its metrics (SQLite only: the memory store reports none):\n\n")
	fmt.Fprintf(w, "| scenario | server | mode | steps/s | ÷ node | submits/s | dropped/s | accept p50 | accept p99 | fewest / most | ratio | worst editor p99 | per store op | per fsync | errors |\n")
	fmt.Fprintf(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, sc := range cfg.Scenarios {
		if !isEditors(sc) {
			continue
		}
		n := summarizeCells(cells, pl.Name, sc, nodeName)
		for _, server := range cfg.Servers {
			for _, mode := range cfg.Modes {
				if !runsIn(findServer(server), findScenario(sc), mode) {
					continue
				}
				s := summarizeMode(cells, pl.Name, sc, server, mode)
				per := func(v float64) string {
					if v <= 0 {
						return "–"
					}
					return fmt.Sprintf("%.2f", v)
				}
				fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f / %.0f | %.2f | %s | %s | %s | %s |\n", sc, server, mode,
					fmtRate(s.stepsPerSec), ratio(s.stepsPerSec, n.stepsPerSec), fmtRate(s.submitsPerSec), fmtRate(s.droppedPerSec),
					fmtDur(s.acceptP50), fmtDur(s.acceptP99), s.fewest, s.most, s.fairness, fmtDur(s.worstP99),
					per(s.perOp), per(s.perTxn), s.errorsCell())
			}
		}
	}
}

// writeCommitTargets says whether the commit mode's targets are met in
// placement pl: durable pmauthority in commit mode at 3× node's steps/s
// or more with 8 editors on one document, an accept p99 no higher than
// node's with 100 documents × 2 editors, and with 128 editors on one
// document an accept p99 under 250 ms and the fewest steps an editor had
// accepted at least half of the most.
func writeCommitTargets(w io.Writer, cells []*cell, pl string, met func(bool) string) {
	c := func(sc string) *summary { return summarizeMode(cells, pl, sc, targetServer, modeCommit) }
	if a, n := c("1doc-8ed"), summarizeCells(cells, pl, "1doc-8ed", nodeName); a.rounds > 0 && n.rounds > 0 && n.stepsPerSec > 0 {
		fmt.Fprintf(w, "- %s, 1doc-8ed, commit mode: steps/s %.2f× node's (≥3×: %s)\n", pl, a.stepsPerSec/n.stepsPerSec, met(a.stepsPerSec >= 3*n.stepsPerSec))
	}
	if a, n := c("100docs-2ed"), summarizeCells(cells, pl, "100docs-2ed", nodeName); a.rounds > 0 && n.rounds > 0 && n.acceptP99 > 0 {
		fmt.Fprintf(w, "- %s, 100docs-2ed, commit mode: accept p99 %s against node's %s (≤: %s)\n", pl, fmtDur(a.acceptP99), fmtDur(n.acceptP99), met(a.acceptP99 <= n.acceptP99))
	}
	if a := c("1doc-128ed"); a.rounds > 0 {
		fmt.Fprintf(w, "- %s, 1doc-128ed, commit mode: accept p99 %s (< 250 ms: %s), fewest / most steps per editor %.2f (≥ 0.5: %s)\n", pl,
			fmtDur(a.acceptP99), met(a.acceptP99 > 0 && a.acceptP99 < 0.25), a.fairness, met(a.fairness >= 0.5))
	}
}

// writeRatios writes the table of each pmauthority row's ratios to node's.
func writeRatios(w io.Writer, cfg *runConfig, cells []*cell, pl *benchproc.Placement) {
	if !slices.Contains(cfg.Servers, nodeName) {
		return
	}
	fmt.Fprintf(w, "\nRatios, pmauthority ÷ node (steps/s: higher is better; p99, CPU and memory: lower is better):\n\n")
	fmt.Fprintf(w, "| server | 1doc-8ed steps/s | 1doc-8ed p99 | 100docs-2ed steps/s | 100docs-2ed p99 | CPU/step (1doc, 100docs) | fanout delivery p99 | memory per document (÷ node after GC) |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|\n")
	n1, n100 := summarizeCells(cells, pl.Name, "1doc-8ed", nodeName), summarizeCells(cells, pl.Name, "100docs-2ed", nodeName)
	nf, nm := summarizeCells(cells, pl.Name, "fanout", nodeName), summarizeCells(cells, pl.Name, "memory", nodeName)
	for _, server := range cfg.Servers {
		if !findServer(server).pmauthority {
			continue
		}
		a1, a100 := summarizeCells(cells, pl.Name, "1doc-8ed", server), summarizeCells(cells, pl.Name, "100docs-2ed", server)
		af, am := summarizeCells(cells, pl.Name, "fanout", server), summarizeCells(cells, pl.Name, "memory", server)
		cpu := strings.Trim(ratio(a1.cpuPerStep, n1.cpuPerStep)+", "+ratio(a100.cpuPerStep, n100.cpuPerStep), ", ")
		mem := ratio(am.perDoc, nm.perDoc)
		if gc := ratio(am.perDoc, nm.perDocGC); gc != "" {
			mem += " (" + gc + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", server,
			ratio(a1.stepsPerSec, n1.stepsPerSec), ratio(a1.submitP99, n1.submitP99),
			ratio(a100.stepsPerSec, n100.stepsPerSec), ratio(a100.submitP99, n100.submitP99),
			cpu, ratio(af.deliveryP99, nf.deliveryP99), mem)
	}
}

// writeCeiling writes, per scenario, go-ceiling's steps/s (fanout: delivery
// p99) as a multiple of node's and each pmauthority row's as a share of
// go-ceiling's: how far net/http alone is from node, and how much of
// that pmauthority's work leaves.
func writeCeiling(w io.Writer, cfg *runConfig, cells []*cell, pl *benchproc.Placement) {
	if !slices.Contains(cfg.Servers, ceilingName) {
		return
	}
	fmt.Fprintf(w, "\n%s (net/http and the bookkeeping, no ProseMirror work, nothing durable; the editors load checks its versions only); steps/s: higher is better, p99: lower:\n\n", ceilingName)
	for _, sc := range []string{"1doc-8ed", "100docs-2ed", scenarioFanout} {
		if !slices.Contains(cfg.Scenarios, sc) {
			continue
		}
		figure, what := func(s *summary) float64 { return s.stepsPerSec }, "steps/s"
		if sc == scenarioFanout {
			figure, what = func(s *summary) float64 { return s.deliveryP99 }, "delivery p99"
		}
		c := summarizeCells(cells, pl.Name, sc, ceilingName)
		line := fmt.Sprintf("- %s %s: %s ÷ node %s", sc, what, ceilingName, ratio(figure(c), figure(summarizeCells(cells, pl.Name, sc, nodeName))))
		var shares []string
		for _, server := range cfg.Servers {
			if findServer(server).pmauthority {
				shares = append(shares, server+" "+ratio(figure(summarizeCells(cells, pl.Name, sc, server)), figure(c)))
			}
		}
		if len(shares) > 0 {
			line += "; pma ÷ " + ceilingName + ": " + strings.Join(shares, ", ")
		}
		fmt.Fprintln(w, line)
	}
}

// ratio formats a / b, blank when either is unknown.
func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return ""
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// machineFacts describes the machine and the tools.
func machineFacts(cfg *runConfig) string {
	model := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := "?"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
		}
	}
	kernel := "?"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	node := "?"
	if out, err := exec.Command(cfg.Node, "--version").Output(); err == nil {
		node = strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("%d CPUs (%s), %s RAM, Linux %s, %s, node %s, repository at %s when the run started (plus uncommitted changes, if any)",
		runtime.NumCPU(), model, mem, kernel, runtime.Version(), node, cfg.Commit)
}

// fmtRate formats a rate.
func fmtRate(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f", r)
	case r >= 10:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

// fmtDur formats seconds.
func fmtDur(s float64) string {
	switch {
	case s <= 0:
		return "–"
	case s >= 1:
		return fmt.Sprintf("%.2f s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.3g ms", s*1e3)
	}
	return fmt.Sprintf("%.3g µs", s*1e6)
}

// fmtBytes formats a size in bytes.
func fmtBytes(b float64) string {
	switch {
	case b >= 1<<20 || b <= -(1<<20):
		return fmt.Sprintf("%.1f MB", b/(1<<20))
	case b >= 1<<10 || b <= -(1<<10):
		return fmt.Sprintf("%.1f KB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}

// oneLine makes s fit in a table cell.
func oneLine(s string) string {
	s = strings.NewReplacer("\n", " ", "|", "/").Replace(s)
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
