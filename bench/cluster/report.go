package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
	"github.com/pmauthority/pmauthority/bench/internal/stats"
)

// med returns the median of f over rs.
func med[T any](rs []T, f func(T) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return stats.Median(xs)
}

// spread returns "min–max" of f over rs, formatted by format.
func spread[T any](rs []T, f func(T) float64, format string) string {
	if len(rs) < 2 {
		return ""
	}
	lo, hi := f(rs[0]), f(rs[0])
	for _, r := range rs[1:] {
		lo, hi = min(lo, f(r)), max(hi, f(r))
	}
	return " (" + fmt.Sprintf(format, lo) + "–" + fmt.Sprintf(format, hi) + ")"
}

func sumErrors(rs []*editorsResult) int {
	n := 0
	for _, r := range rs {
		n += r.Errors
	}
	return n
}

func ratio(a, b float64) string {
	if b == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// report writes the Markdown report of a run.
func report(w io.Writer, cfg *config, res *results, took time.Duration, loadStart string) {
	fmt.Fprintf(w, "clusterbench: %d round(s) in %s; %s, %d CPUs; load average %s at the start, %s at the end.\n\n",
		cfg.rounds, took.Round(time.Second), runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), loadStart, benchproc.LoadAvg())

	fmt.Fprintf(w, "### One node: PostgreSQL, SQLite, memory, node\n\n"+
		"collabbench editors loads (%s warm-up, %s measured, a fresh server each, the order rotating per round), medians of %d rounds (min–max).\n"+
		"CPU/step is the server process's CPU time (utime+stime from /proc) per accepted step; db CPU/step the PostgreSQL\n"+
		"postmaster's and its backends'; commits/s the database's write transactions per second over the load.\n\n",
		cfg.warmup, cfg.duration, cfg.rounds)
	fmt.Fprintln(w, "| load | server | steps/s | ÷ node | submit p50 | submit p99 | server CPU/step | db CPU/step | commits/s | others' cores | errors |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, l := range loads {
		nodeRate := med(res.single["node/"+l.name], func(r *editorsResult) float64 { return r.StepsPerSec })
		for _, kd := range kinds {
			rs := res.single[kd.name+"/"+l.name]
			if len(rs) == 0 {
				continue
			}
			rate := med(rs, func(r *editorsResult) float64 { return r.StepsPerSec })
			db, commits := "", ""
			if kd.postgres {
				db = us(med(rs, func(r *editorsResult) float64 { return r.DBCPUPerStep }))
				commits = fmt.Sprintf("%.0f", med(rs, func(r *editorsResult) float64 { return r.Commits }))
			}
			fmt.Fprintf(w, "| %s | %s | %.0f%s | %s | %s | %s | %s | %s | %s | %.2f | %d |\n", l.name, kd.name,
				rate, spread(rs, func(r *editorsResult) float64 { return r.StepsPerSec }, "%.0f"), ratio(rate, nodeRate),
				ms(med(rs, func(r *editorsResult) float64 { return r.Submit.P50 })),
				ms(med(rs, func(r *editorsResult) float64 { return r.Submit.P99 })),
				us(med(rs, func(r *editorsResult) float64 { return r.CPUPerStep })), db, commits,
				med(rs, func(r *editorsResult) float64 { return r.CPU.Others }), sumErrors(rs))
		}
	}

	fmt.Fprintf(w, "\n### Three nodes on one database\n\n"+
		"Three `pmauthority serve --store postgres` processes on one fresh database; the same loads with the editors spread over\n"+
		"the three in turn (a document's editors on different nodes). CPU/step adds up the three servers.\n\n")
	fmt.Fprintln(w, "| load | 1 node steps/s | 3 nodes steps/s | 3 ÷ 1 | submit p50 | submit p99 | servers' CPU/step | db CPU/step | commits/s | 409 rate | errors |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, key := range []string{"", "before/"} {
		for _, l := range loads {
			rs := res.three[key+l.name]
			if len(rs) == 0 {
				continue
			}
			one := med(res.single["pma-postgres/"+l.name], func(r *editorsResult) float64 { return r.StepsPerSec })
			rate := med(rs, func(r *editorsResult) float64 { return r.StepsPerSec })
			name := l.name
			if key != "" {
				name += ", --before binary"
			}
			fmt.Fprintf(w, "| %s | %.0f | %.0f%s | %s | %s | %s | %s | %s | %.0f | %.0f %% | %d |\n", name, one,
				rate, spread(rs, func(r *editorsResult) float64 { return r.StepsPerSec }, "%.0f"), ratio(rate, one),
				ms(med(rs, func(r *editorsResult) float64 { return r.Submit.P50 })),
				ms(med(rs, func(r *editorsResult) float64 { return r.Submit.P99 })),
				us(med(rs, func(r *editorsResult) float64 { return r.CPUPerStep })),
				us(med(rs, func(r *editorsResult) float64 { return r.DBCPUPerStep })),
				med(rs, func(r *editorsResult) float64 { return r.Commits }),
				100*med(rs, func(r *editorsResult) float64 { return r.ConflictRate }), sumErrors(rs))
		}
	}

	fmt.Fprintf(w, "\n### WebSocket fan-out across nodes\n\n"+
		"wsbench fanout: %d editors of one document, editor i on node i mod N, %d of them typing 5 steps/s (prosemirror-collab\n"+
		"style), %s measured after %s; latency from a typer sending its steps to their receipt at every other editor, all\n"+
		"timed by one load-generator process (one clock). \"Other node\" counts only the receipts at editors connected to another\n"+
		"node than the typer (through PostgreSQL's NOTIFY and a read of the steps). Medians of %d rounds (min–max).\n\n",
		cfg.fanEditors, cfg.fanTypers, cfg.fanDuration, cfg.fanWarmup, cfg.rounds)
	fmt.Fprintln(w, "| nodes | steps | receipts (expected) | p50 | p99 | max | other-node receipts | other-node p50 | other-node p99 | other-node max | servers' cores | errors |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, n := range []string{"1", "3"} {
		fs := res.fan[n]
		if len(fs) == 0 {
			continue
		}
		errs, got, want, steps := 0, 0, 0, 0
		for _, f := range fs {
			errs += f.Errors
			got, want, steps = got+f.Deliveries, want+f.Expected, steps+f.Steps
		}
		cross := ""
		if n != "1" {
			cross = fmt.Sprintf("%.0f | %.1f ms | **%.1f ms**%s | %.0f ms", med(fs, func(f *fanoutResult) float64 { return float64(f.CrossDeliveries) }),
				med(fs, func(f *fanoutResult) float64 { return f.CrossP50 }), med(fs, func(f *fanoutResult) float64 { return f.CrossP99 }),
				spread(fs, func(f *fanoutResult) float64 { return f.CrossP99 }, "%.1f"), med(fs, func(f *fanoutResult) float64 { return f.CrossMax }))
		} else {
			cross = " | | | "
		}
		fmt.Fprintf(w, "| %s | %d | %d (%d) | %.1f ms | %.1f ms%s | %.0f ms | %s | %.2f | %d |\n", n, steps/len(fs), got/len(fs), want/len(fs),
			med(fs, func(f *fanoutResult) float64 { return f.P50 }), med(fs, func(f *fanoutResult) float64 { return f.P99 }),
			spread(fs, func(f *fanoutResult) float64 { return f.P99 }, "%.1f"), med(fs, func(f *fanoutResult) float64 { return f.Max }),
			cross, med(fs, func(f *fanoutResult) float64 { return f.CPU }), errs)
	}

	b := res.bench
	if len(b) > 0 {
		fmt.Fprintf(w, "\n### The stores alone (Go benchmarks, fsync on), medians of %d runs (min–max)\n\n", cfg.storeRounds)
		fmt.Fprintln(w, "store/postgres BenchmarkNotifyLock: 100 documents, a goroutine each appending one step at a time, over 1 or 3 Stores")
		fmt.Fprintln(w, "(nodes) on one database: with the Store's NOTIFY and every Store listening (on), with it and nobody listening")
		fmt.Fprintln(w, "(unheard: the commit lock and the queue without the deliveries), without it (off).")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| nodes | NOTIFY | appends/s | ÷ on | append p50 | append p99 | commits/append | NOTIFYs heard/commit |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
		get := func(name, unit string) float64 {
			return med(b[name], func(m map[string]float64) float64 { return m[unit] })
		}
		for _, nodes := range []string{"1", "3"} {
			on := "postgres.BenchmarkNotifyLock/nodes=" + nodes + "/notify=on"
			for _, mode := range []string{"on", "unheard", "off"} {
				name := "postgres.BenchmarkNotifyLock/nodes=" + nodes + "/notify=" + mode
				if len(b[name]) == 0 {
					continue
				}
				r := ""
				if mode != "on" {
					r = ratio(get(name, "appends/s"), get(on, "appends/s"))
				}
				fmt.Fprintf(w, "| %s | %s | %.0f%s | %s | %.2f ms | %.1f ms | %.3f | %.2f |\n", nodes, mode,
					get(name, "appends/s"), spread(b[name], func(m map[string]float64) float64 { return m["appends/s"] }, "%.0f"), r,
					get(name, "p50-µs")/1000, get(name, "p99-µs")/1000, get(name, "commits/append"), get(name, "notifies/commit"))
			}
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "store/postgres BenchmarkInFlight: the same with NOTIFY, at most 1, 2 (the Store's bound) or 5 batches in flight per Store.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| nodes | batches in flight | appends/s | ÷ with 5 | append p50 | append p99 | commits/append |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
		for _, nodes := range []string{"1", "3"} {
			five := get("postgres.BenchmarkInFlight/nodes="+nodes+"/inflight=5", "appends/s")
			for _, n := range []string{"1", "2", "5"} {
				name := "postgres.BenchmarkInFlight/nodes=" + nodes + "/inflight=" + n
				if len(b[name]) == 0 {
					continue
				}
				fmt.Fprintf(w, "| %s | %s | %.0f%s | %s | %.2f ms | %.1f ms | %.3f |\n", nodes, n, get(name, "appends/s"),
					spread(b[name], func(m map[string]float64) float64 { return m["appends/s"] }, "%.0f"), ratio(get(name, "appends/s"), five),
					get(name, "p50-µs")/1000, get(name, "p99-µs")/1000, get(name, "commits/append"))
			}
		}
		fmt.Fprintln(w)
		var parts []string
		if rs := b["postgres.BenchmarkAppend"]; len(rs) > 0 {
			parts = append(parts, fmt.Sprintf("store/postgres BenchmarkAppend (one document, each Append waiting for the one before): %.2f ms per committed append%s",
				get("postgres.BenchmarkAppend", "ns/op")/1e6, spread(rs, func(m map[string]float64) float64 { return m["ns/op"] / 1e6 }, "%.2f")))
		}
		if rs := b["sqlite.BenchmarkAppend/FULL/OneDoc"]; len(rs) > 0 {
			parts = append(parts, fmt.Sprintf("store/sqlite BenchmarkAppend/FULL/OneDoc: %.2f ms%s", get("sqlite.BenchmarkAppend/FULL/OneDoc", "ns/op")/1e6,
				spread(rs, func(m map[string]float64) float64 { return m["ns/op"] / 1e6 }, "%.2f")))
		}
		if rs := b["sqlite.BenchmarkAppend/FULL/ManyDocs"]; len(rs) > 0 {
			parts = append(parts, fmt.Sprintf("store/sqlite BenchmarkAppend/FULL/ManyDocs (100 documents, as NotifyLock's): %.0f appends/s, %.3f commits/append",
				get("sqlite.BenchmarkAppend/FULL/ManyDocs", "appends/s"), get("sqlite.BenchmarkAppend/FULL/ManyDocs", "commits/append")))
		}
		for _, p := range parts {
			fmt.Fprintf(w, "- %s\n", p)
		}
	}
	if len(res.failed) > 0 {
		fmt.Fprintf(w, "\n**%d measures failed:**\n\n", len(res.failed))
		for _, f := range res.failed {
			fmt.Fprintf(w, "- %s\n", strings.ReplaceAll(f, "\n", " "))
		}
	}
}
