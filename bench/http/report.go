package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
)

// writeReport writes the markdown report of a run: how it was run, the
// payloads, the answer check, and per placement a table of every cell
// and a table of pmauthority's ratios to the others.
func writeReport(w io.Writer, cfg *runConfig, cases []*payloadCase, results []*caseResult, took time.Duration) {
	mode := "full"
	cmdline := "bash bench/http/run.sh"
	if cfg.Quick {
		mode, cmdline = "quick", cmdline+" --quick"
	}
	fmt.Fprintf(w, "# HTTP apply server: pmauthority and node side by side\n\n")
	fmt.Fprintf(w, "- date: %s; command: `%s` (%s; the run took %s)\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), cmdline, mode, took.Round(time.Second))
	fmt.Fprintf(w, "- cells: for each placement, payload and concurrency, every server is started (a fresh process each), its answer checked, and warmed up with %s of the same load; then the servers are loaded in turn, %d rounds of %s + %s measured each, the order rotating every round, so that the shared machine's changing load hits all alike\n",
		cfg.Warmup, cfg.Rounds, cfg.Settle, cfg.Duration/time.Duration(cfg.Rounds))
	fmt.Fprintf(w, "- machine: %s; load average (1, 5, 15 min) %s at the start, %s at the end\n", machine(cfg), cfg.LoadAvg[0], cfg.LoadAvg[1])
	fmt.Fprintf(w, "- load: `httpbench load`, closed loop, each connection a keep-alive HTTP/1.1 connection sending the next request as soon as the answer is in; every answer's status and length checked, the whole body of every 16th compared with the expected answer (a mismatch counts as an error)\n")
	fmt.Fprintf(w, "- figures: req/s, p50, p90, p99, CPU/req and others' CPU are medians over the rounds (max is the largest of all); peak RSS is the server process's VmHWM after all rounds; CPU/req is the server's CPU time (all threads) during a round divided by its answers, the figure least disturbed by the machine's other load; others' CPU is the CPU (in cores, of 2) used by all other processes during a round: how noisy it was; ratios compare servers measured in alternation in this run\n")
	for _, n := range cfg.Notes {
		fmt.Fprintf(w, "- note: %s\n", n)
	}

	fmt.Fprintf(w, "\nServers (all started with text as the default schema; the basic payloads name their schema):\n\n")
	for _, name := range cfg.Servers {
		fmt.Fprintf(w, "- %s: %s\n", name, findServer(name).About)
	}

	fmt.Fprintf(w, "\n| payload | request | answer | what |\n|---|---:|---:|---|\n")
	for _, c := range cases {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", c.Name, fmtBytes(int64(len(c.Body))), fmtBytes(int64(c.AnswerBytes)), c.About)
	}
	fmt.Fprintf(w, "\nAnswer check before any load (node:http's answer is the expected one):\n\n")
	for _, c := range cases {
		var parts []string
		for _, name := range cfg.Servers {
			if check, ok := c.Checked[name]; ok {
				parts = append(parts, name+": "+check.Note)
			}
		}
		status := "ok"
		if c.Skip != "" {
			status = "NOT MEASURED"
		}
		fmt.Fprintf(w, "- %s: %s (%s)\n", c.Name, status, strings.Join(parts, "; "))
	}

	for _, plName := range cfg.Placements {
		pl := benchproc.FindPlacement(plName)
		fmt.Fprintf(w, "\n## %s: %s\n\n", pl.Name, pl.About)
		fmt.Fprintf(w, "| payload | conns | server | req/s | p50 | p90 | p99 | max | peak RSS | CPU/req | others' CPU | errors |\n")
		fmt.Fprintf(w, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, r := range results {
			if r.Placement != pl.Name {
				continue
			}
			if r.Err != "" {
				fmt.Fprintf(w, "| %s | %d | %s | %s | | | | | | | | |\n", r.Payload, r.Conns, r.Server, oneLine(r.Err))
				continue
			}
			errs := fmt.Sprint(r.Errors)
			if r.Errors > 0 {
				errs = fmt.Sprintf("%d (%d non-200, %d mismatches; first: %s)", r.Errors, r.Non200, r.Mismatches, oneLine(r.FirstError))
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %s |\n", r.Payload, r.Conns, r.Server,
				fmtRate(r.ReqPerSec), fmtDur(r.P50), fmtDur(r.P90), fmtDur(r.P99), fmtDur(r.Max), fmtBytes(r.PeakRSS),
				fmtDur(r.CPUPerReq), r.OthersCPU, errs)
		}
		if !slices.Contains(cfg.Servers, pmauthorityName) {
			continue
		}
		fmt.Fprintf(w, "\npmauthority's ratios (req/s: higher is better; p99, peak RSS and CPU per request: lower is better):\n\n")
		fmt.Fprintf(w, "| payload | conns | req/s ÷ node:http | req/s ÷ express | req/s ÷ ceiling | p99 ÷ node:http | p99 ÷ express | RSS ÷ node:http | RSS ÷ express | CPU/req ÷ node:http |\n")
		fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range cases {
			for _, conns := range cfg.Conns {
				get := func(server string) *caseResult {
					for _, r := range results {
						if r.Placement == pl.Name && r.Payload == c.Name && r.Conns == conns && r.Server == server && r.Err == "" {
							return r
						}
					}
					return nil
				}
				pma := get(pmauthorityName)
				ratio := func(server string, f func(*caseResult) float64) string {
					other := get(server)
					if pma == nil || other == nil || f(other) == 0 {
						return "–"
					}
					return fmt.Sprintf("%.2f", f(pma)/f(other))
				}
				rate := func(r *caseResult) float64 { return r.ReqPerSec }
				p99 := func(r *caseResult) float64 { return r.P99 }
				rss := func(r *caseResult) float64 { return float64(r.PeakRSS) }
				cpu := func(r *caseResult) float64 { return r.CPUPerReq }
				fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Name, conns,
					ratio(nodeHTTPName, rate), ratio(expressName, rate), ratio(ceilingName, rate),
					ratio(nodeHTTPName, p99), ratio(expressName, p99),
					ratio(nodeHTTPName, rss), ratio(expressName, rss), ratio(nodeHTTPName, cpu))
			}
		}
	}
}

// machine describes the machine and the versions in one line.
func machine(cfg *runConfig) string {
	cpu := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(data)) {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	parts := []string{
		fmt.Sprintf("%d CPUs (%s)", runtime.NumCPU(), cpu),
		"Linux " + strings.TrimSpace(string(kernel)),
		runtime.Version(),
		"node " + output(cfg.Node, "--version"),
	}
	if commit := output("git", "-C", cfg.Root, "rev-parse", "--short", "HEAD"); commit != "" {
		if output("git", "-C", cfg.Root, "status", "--porcelain", "--untracked-files=no") != "" {
			commit += " with uncommitted changes"
		}
		parts = append(parts, "repository at "+commit)
	}
	return strings.Join(parts, "; ")
}

// output returns the trimmed standard output of a command, "" on error.
func output(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(out))
}

// oneLine makes s fit in a table cell.
func oneLine(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", "\\|")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// fmtRate formats a request rate.
func fmtRate(r float64) string {
	if r >= 100 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.1f", r)
}

// fmtDur formats seconds with three significant digits.
func fmtDur(s float64) string {
	switch {
	case s == 0:
		return "–"
	case s < 1e-3:
		return fmt.Sprintf("%.0f µs", s*1e6)
	case s < 10e-3:
		return fmt.Sprintf("%.2f ms", s*1e3)
	case s < 1:
		return fmt.Sprintf("%.1f ms", s*1e3)
	}
	return fmt.Sprintf("%.2f s", s)
}

// fmtBytes formats a size in KB (below a MB) or MB.
func fmtBytes(n int64) string {
	switch {
	case n == 0:
		return "–"
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
