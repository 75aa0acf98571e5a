package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
	"github.com/pmauthority/pmauthority/bench/internal/stats"
)

// cmdAB measures idle editors with two binaries, interleaved: old, new,
// old, new, … so that the machine's drift falls on both alike.
func cmdAB(args []string) error {
	fs := flag.NewFlagSet("ab", flag.ContinueOnError)
	var cf commonFlags
	cf.register(fs)
	oldBin := fs.String("old", "", "the old pmauthority binary (required)")
	newBin := fs.String("new", "", "the new pmauthority binary (required)")
	rounds := fs.Int("rounds", 3, "rounds, each measuring old then new")
	conns := fs.Int("conns", 2000, "idle editors to connect")
	docs := fs.Int("docs", 10, "documents they are spread over")
	warm := fs.Int("warm", 200, "editors connected before the first reading, so that what is paid once is not counted")
	settle := fs.Duration("settle", 5*time.Second, "wait before each reading")
	breakdown := fs.Bool("breakdown", true, "read where the bytes go from each server's --metrics-addr profiles (it adds about 1 KiB per connection to both, from the profiles' own GCs and sampling); false: the RSS alone, as wsbench idle and run measure it")
	rate := fs.Int("profile-rate", 4096, "sample one heap allocation per `BYTES` in the servers (GODEBUG=memprofilerate), for the heap by site; 0: Go's default, 512 KiB")
	out := fs.String("out", "", "also write the report to this file")
	logDir := fs.String("logs", os.TempDir(), "folder for the servers' logs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *oldBin == "" || *newBin == "" || cf.bin != "" {
		return fmt.Errorf("need --old and --new (and no --bin)")
	}
	if *rounds < 1 || *conns < 1 || *docs < 1 {
		return fmt.Errorf("need at least one round, connection and document")
	}
	opt := idleOptions{commonFlags: cf, conns: *conns, docs: *docs, warm: *warm, settle: *settle, runtime: *breakdown, profileRate: *rate}
	bins := [2]string{*oldBin, *newBin}
	var got [2][]idleBreakdown
	start := time.Now()
	for r := range *rounds {
		for i, label := range abLabels {
			opt.bin = bins[i]
			opt.log = filepath.Join(*logDir, fmt.Sprintf("wsbench-ab-%d-%s.log", r+1, label))
			res, err := runIdle(opt)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, label, err)
			}
			b := perConn(res)
			fmt.Fprintf(os.Stderr, "== round %d, %s: %.1f KiB RSS per connection", r+1, label, b.RSS/1024)
			if opt.runtime {
				fmt.Fprintf(os.Stderr, "; %.2f goroutines, %.1f KiB of stacks, %.1f KiB of heap", b.Goroutines, b.Stack/1024, b.Heap/1024)
			}
			fmt.Fprintln(os.Stderr)
			got[i] = append(got[i], b)
		}
	}
	var sb strings.Builder
	abReport(&sb, opt, bins, got, time.Since(start))
	fmt.Print(sb.String())
	if *out != "" {
		return os.WriteFile(*out, []byte(sb.String()), 0o644)
	}
	return nil
}

var abLabels = [2]string{"old", "new"}

// idleBreakdown is an idle measure per connection: what the Conns
// connections added, divided by Conns.
type idleBreakdown struct {
	RSS, Goroutines, Stack, Heap, Objects float64
	// Held is the memory the Go runtime holds from the system
	// (MemStats.Sys − HeapReleased), Free the free heap pages in it
	// (HeapIdle − HeapReleased).
	Held, Free      float64
	ByStart, BySite map[string]float64
}

// perConn returns the figures of res per connection: its RSS growth, and
// its runtime stats when it has them.
func perConn(res *idleResult) idleBreakdown {
	n := float64(res.Conns)
	a, b := res.Before, res.After
	if a == nil || b == nil {
		return idleBreakdown{RSS: res.PerConn}
	}
	per := func(before, after int64) float64 { return float64(after-before) / n }
	out := idleBreakdown{
		RSS:        res.PerConn,
		Goroutines: per(int64(a.Goroutines), int64(b.Goroutines)),
		Stack:      per(a.StackInuse, b.StackInuse),
		Heap:       per(a.HeapInuse, b.HeapInuse),
		Objects:    per(a.HeapObjects, b.HeapObjects),
		Held:       per(a.Sys-a.HeapReleased, b.Sys-b.HeapReleased),
		Free:       per(a.HeapIdle-a.HeapReleased, b.HeapIdle-b.HeapReleased),
		ByStart:    map[string]float64{},
		BySite:     map[string]float64{},
	}
	for k, v := range b.ByStart {
		out.ByStart[k] = float64(v-a.ByStart[k]) / n
	}
	for k, v := range a.ByStart {
		if _, ok := b.ByStart[k]; !ok {
			out.ByStart[k] = float64(-v) / n
		}
	}
	for k, v := range b.BySite {
		out.BySite[k] = (v - a.BySite[k]) / n
	}
	for k, v := range a.BySite {
		if _, ok := b.BySite[k]; !ok {
			out.BySite[k] = -v / n
		}
	}
	return out
}

// medianOf returns the median over bs of the figure f gives.
func medianOf(bs []idleBreakdown, f func(idleBreakdown) float64) float64 {
	xs := make([]float64, len(bs))
	for i, b := range bs {
		xs[i] = f(b)
	}
	return stats.Median(xs)
}

// abReport writes the tables of an ab run.
func abReport(w io.Writer, opt idleOptions, bins [2]string, got [2][]idleBreakdown, took time.Duration) {
	fmt.Fprintf(w, "wsbench ab: %d round(s) of old then new in %s; %s, GOMAXPROCS %d; load average at the end: %s\n\n",
		len(got[0]), took.Round(time.Second), runtime.GOOS+"/"+runtime.GOARCH, runtime.GOMAXPROCS(0), benchproc.LoadAvg())
	fmt.Fprintf(w, "old: `%s`\nnew: `%s`\n\n", bins[0], bins[1])
	if !opt.runtime {
		fmt.Fprintf(w, "Idle editors: %d WebSocket connections (joined, answering pings) on %d documents, after %d warm ones;\n"+
			"server RSS growth per connection, %s after the last one.\n\n", opt.conns, opt.docs, opt.warm, opt.settle)
	} else {
		fmt.Fprintf(w, "Idle editors: %d WebSocket connections (joined, answering pings) on %d documents, after %d warm ones;\n"+
			"readings %s after the last one: the server's RSS, then its goroutines, stacks and heap in use right after\n"+
			"a GC (its --metrics-addr profiles). Of what the Go runtime holds from the system (Sys − HeapReleased), beside\n"+
			"the heap in use and the stacks: \"free heap kept\", free heap pages not returned yet (the garbage of the\n"+
			"upgrades, until the scavenger returns it), and \"runtime's own\" (GC and span metadata, OS thread stacks);\n"+
			"\"RSS not Go's\" is the rest of the RSS growth (negative when the runtime holds pages that are not resident).\n"+
			"Per connection: what the %d added, divided by %d.\n\n",
			opt.conns, opt.docs, opt.warm, opt.settle, opt.conns, opt.conns)
	}

	type column struct {
		name string
		f    func(idleBreakdown) float64
		unit string
	}
	cols := []column{
		{"RSS", func(b idleBreakdown) float64 { return b.RSS }, "KiB"},
		{"goroutines", func(b idleBreakdown) float64 { return b.Goroutines }, ""},
		{"stacks", func(b idleBreakdown) float64 { return b.Stack }, "KiB"},
		{"heap in use", func(b idleBreakdown) float64 { return b.Heap }, "KiB"},
		{"heap objects", func(b idleBreakdown) float64 { return b.Objects }, ""},
		{"free heap kept", func(b idleBreakdown) float64 { return b.Free }, "KiB"},
		{"runtime's own", func(b idleBreakdown) float64 { return b.Held - b.Heap - b.Stack - b.Free }, "KiB"},
		{"RSS not Go's", func(b idleBreakdown) float64 { return b.RSS - b.Held }, "KiB"},
	}
	if !opt.runtime {
		cols = cols[:1]
	}
	show := func(v float64, unit string) string {
		if unit == "KiB" {
			return fmt.Sprintf("%.1f KiB", v/1024)
		}
		return fmt.Sprintf("%.2f", v)
	}
	fmt.Fprint(w, "| round | binary |")
	for _, c := range cols {
		fmt.Fprintf(w, " %s |", c.name)
	}
	fmt.Fprint(w, "\n|---|---|"+strings.Repeat("---|", len(cols))+"\n")
	for r := range got[0] {
		for i, label := range abLabels {
			fmt.Fprintf(w, "| %d | %s |", r+1, label)
			for _, c := range cols {
				fmt.Fprintf(w, " %s |", show(c.f(got[i][r]), c.unit))
			}
			fmt.Fprintln(w)
		}
	}
	var med [2][]float64
	for i, label := range abLabels {
		fmt.Fprintf(w, "| **median** | %s |", label)
		for _, c := range cols {
			m := medianOf(got[i], c.f)
			med[i] = append(med[i], m)
			fmt.Fprintf(w, " **%s** |", show(m, c.unit))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "| **new / old** | |")
	for j := range cols {
		if med[0][j] != 0 {
			fmt.Fprintf(w, " %.2f |", med[1][j]/med[0][j])
		} else {
			fmt.Fprint(w, " – |")
		}
	}
	fmt.Fprint(w, "\n\n")
	if !opt.runtime {
		return
	}

	fmt.Fprintln(w, "Goroutines per connection, by the function they run (medians; those not 0 in either):")
	fmt.Fprintln(w)
	byKey(w, got, func(b idleBreakdown) map[string]float64 { return b.ByStart }, 0.005, func(v float64) string { return fmt.Sprintf("%.2f", v) })
	rate := "Go's default of one per 512 KiB"
	if opt.profileRate > 0 {
		rate = fmt.Sprintf("one allocation per %d bytes", opt.profileRate)
	}
	fmt.Fprintf(w, "\nHeap in use per connection by allocation site (\"callee ← caller\", the first frames outside the runtime),\n"+
		"estimated from the heap profile as pprof does (sampling %s; medians; sites of 32 bytes or more in either):\n\n", rate)
	byKey(w, got, func(b idleBreakdown) map[string]float64 { return b.BySite }, 32, func(v float64) string { return fmt.Sprintf("%.0f B", v) })
}

// byKey writes a table of the medians of the figures that m gives by key,
// for old and new, the keys whose median is at least min in either (in
// absolute value), largest first, and the sum of each column.
func byKey(w io.Writer, got [2][]idleBreakdown, m func(idleBreakdown) map[string]float64, min float64, show func(float64) string) {
	keys := map[string]bool{}
	for _, bs := range got {
		for _, b := range bs {
			for k := range m(b) {
				keys[k] = true
			}
		}
	}
	type row struct {
		key string
		v   [2]float64
	}
	var rows []row
	var sum [2]float64
	for k := range keys {
		var r row
		r.key = k
		for i := range got {
			r.v[i] = medianOf(got[i], func(b idleBreakdown) float64 { return m(b)[k] })
			sum[i] += r.v[i]
		}
		if max(abs(r.v[0]), abs(r.v[1])) >= min {
			rows = append(rows, r)
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(max(b.v[0], b.v[1]), max(a.v[0], a.v[1])), strings.Compare(a.key, b.key))
	})
	fmt.Fprintln(w, "| | old | new |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| `%s` | %s | %s |\n", r.key, show(r.v[0]), show(r.v[1]))
	}
	fmt.Fprintf(w, "| all (also those not shown) | %s | %s |\n", show(sum[0]), show(sum[1]))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
