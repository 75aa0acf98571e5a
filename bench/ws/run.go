package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
	"github.com/pmauthority/pmauthority/bench/internal/stats"
)

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var cf commonFlags
	cf.register(fs)
	rounds := fs.Int("rounds", 3, "rounds of each measure (figures are their medians)")
	quick := fs.Bool("quick", false, "small and short measures, to check that it works")
	out := fs.String("out", "", "also write the report to this file")
	logDir := fs.String("logs", os.TempDir(), "folder for the servers' logs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cf.bin == "" || *rounds < 1 {
		return fmt.Errorf("need --bin and at least one round")
	}
	idle := idleOptions{commonFlags: cf, conns: 5000, docs: 100, warm: 500, settle: 5 * time.Second}
	fan := fanoutOptions{commonFlags: cf, editors: 1000, typers: 10, rate: 5, warmup: 3 * time.Second, duration: 20 * time.Second}
	if *quick {
		idle.conns, idle.warm, idle.settle = 1000, 100, 2*time.Second
		fan.editors, fan.warmup, fan.duration = 200, time.Second, 5*time.Second
	}
	start := time.Now()
	var idles []*idleResult
	var fans []*fanoutResult
	for r := range *rounds {
		idle.log = filepath.Join(*logDir, fmt.Sprintf("wsbench-idle-%d.log", r+1))
		res, err := runIdle(idle)
		if err != nil {
			return fmt.Errorf("idle, round %d: %w", r+1, err)
		}
		fmt.Fprintf(os.Stderr, "== idle round %d: %.1f KiB per connection\n", r+1, res.PerConn/1024)
		idles = append(idles, res)
		fan.log = filepath.Join(*logDir, fmt.Sprintf("wsbench-fanout-%d.log", r+1))
		fres, err := runFanout(fan)
		if err != nil {
			return fmt.Errorf("fanout, round %d: %w", r+1, err)
		}
		fmt.Fprintf(os.Stderr, "== fanout round %d: p50 %.1f ms, p99 %.1f ms, server CPU %.2f cores\n", r+1, fres.P50, fres.P99, fres.CPU)
		fans = append(fans, fres)
	}
	var sb strings.Builder
	report(&sb, idle, fan, idles, fans, time.Since(start))
	fmt.Print(sb.String())
	if *out != "" {
		return os.WriteFile(*out, []byte(sb.String()), 0o644)
	}
	return nil
}

// report writes the tables of a run.
func report(w io.Writer, idle idleOptions, fan fanoutOptions, idles []*idleResult, fans []*fanoutResult, took time.Duration) {
	fmt.Fprintf(w, "wsbench: %d round(s) in %s; %s, GOMAXPROCS %d; load average at the end: %s\n\n",
		len(idles), took.Round(time.Second), runtime.GOOS+"/"+runtime.GOARCH, runtime.GOMAXPROCS(0), benchproc.LoadAvg())
	if len(fan.serverArgs) > 0 || fan.token != "" {
		fmt.Fprintf(w, "Server flags added: %q; editors send a token in their hello: %v.\n\n", []string(fan.serverArgs), fan.token != "")
	}

	fmt.Fprintf(w, "Idle editors: %d WebSocket connections (joined, answering pings) on %d documents, after %d warm ones;\n"+
		"server RSS growth per connection, %s after the last one.\n\n", idle.conns, idle.docs, idle.warm, idle.settle)
	fmt.Fprintln(w, "| round | RSS before | RSS after | per connection | connecting took |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	var per []float64
	for i, r := range idles {
		fmt.Fprintf(w, "| %d | %.1f MiB | %.1f MiB | %.1f KiB | %.1f s |\n", i+1, mib(r.RSSBefore), mib(r.RSSAfter), r.PerConn/1024, r.DialSeconds)
		per = append(per, r.PerConn)
	}
	fmt.Fprintf(w, "| **median** | | | **%.1f KiB** | |\n\n", stats.Median(per)/1024)

	fmt.Fprintf(w, "Fan-out: %d editors on one document, %d of them typing %g steps/s each (prosemirror-collab style: one\n"+
		"submission in flight, resent on conflict), %s measured after %s; latency from the accepted submission to its\n"+
		"receipt at each other editor; server CPU from /proc/PID/stat (cores busy).\n\n",
		fan.editors, fan.typers, fan.rate, fan.duration, fan.warmup)
	fmt.Fprintln(w, "| round | steps | deliveries (of expected) | p50 | p90 | p99 | max | server CPU | conflicts | errors |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	var p50, p90, p99, cpu []float64
	for i, r := range fans {
		fmt.Fprintf(w, "| %d | %d | %d (%d) | %.1f ms | %.1f ms | %.1f ms | %.0f ms | %.2f | %d | %d |\n",
			i+1, r.Steps, r.Deliveries, r.Expected, r.P50, r.P90, r.P99, r.Max, r.CPU, r.Conflict, r.Errors)
		p50, p90, p99, cpu = append(p50, r.P50), append(p90, r.P90), append(p99, r.P99), append(cpu, r.CPU)
	}
	fmt.Fprintf(w, "| **median** | | | **%.1f ms** | **%.1f ms** | **%.1f ms** | | **%.2f** | | |\n", stats.Median(p50), stats.Median(p90), stats.Median(p99), stats.Median(cpu))
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
