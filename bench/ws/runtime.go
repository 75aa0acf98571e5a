package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// runtimeStats is what the server's Go runtime says of its memory, read
// from the profiles of serve --metrics-addr (net/http/pprof) right after
// a garbage collection: where the bytes of its RSS are.
type runtimeStats struct {
	Goroutines int
	// HeapInuse, HeapAlloc, HeapObjects, HeapIdle, HeapReleased,
	// StackInuse and Sys are those of runtime.MemStats.
	HeapInuse, HeapAlloc, HeapObjects, HeapIdle, HeapReleased, StackInuse, Sys int64
	// ByStart counts the goroutines by the function they run.
	ByStart map[string]int
	// BySite is the heap in use by allocation site (the first two
	// frames outside the runtime), estimated from the heap profile's
	// samples as pprof does.
	BySite map[string]float64
}

// readRuntime reads the runtime stats of the server whose profiles are on
// addr. The heap profile is asked for with gc=1, so that its figures and
// the MemStats after it are of live memory.
func readRuntime(addr string) (*runtimeStats, error) {
	client := &http.Client{Timeout: time.Minute}
	get := func(path string) (io.ReadCloser, error) {
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		return resp.Body, nil
	}
	rs := &runtimeStats{}
	heap, err := get("/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return nil, err
	}
	err = rs.readHeap(heap)
	heap.Close()
	if err != nil {
		return nil, fmt.Errorf("heap profile: %w", err)
	}
	g, err := get("/debug/pprof/goroutine?debug=1")
	if err != nil {
		return nil, err
	}
	err = rs.readGoroutines(g)
	g.Close()
	if err != nil {
		return nil, fmt.Errorf("goroutine profile: %w", err)
	}
	return rs, nil
}

// profileRecords reads a legacy text profile (debug=1): it calls first
// with its first line, then record for each record, with the record's
// line ("N: B [M: A] @ …" or "N @ …") and the functions of its frames,
// innermost first. It returns the "# Name = value" lines after the
// records.
func profileRecords(r io.Reader, first func(line string) error, record func(head string, funcs []string) error) (tail map[string]string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("empty profile: %v", sc.Err())
	}
	if err := first(sc.Text()); err != nil {
		return nil, err
	}
	tail = map[string]string{}
	var head string
	var funcs []string
	flush := func() error {
		if head == "" {
			return nil
		}
		err := record(head, funcs)
		head, funcs = "", nil
		return err
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#\t"):
			// #	0xADDR	FUNC+0xOFF	FILE:LINE
			if f := strings.Split(line, "\t"); len(f) >= 3 {
				fn, _, _ := strings.Cut(f[2], "+0x")
				funcs = append(funcs, fn)
			}
		case strings.HasPrefix(line, "# "):
			if err := flush(); err != nil {
				return nil, err
			}
			if k, v, ok := strings.Cut(line[2:], " = "); ok {
				tail[k] = v
			}
		case strings.Contains(line, " @ "):
			if err := flush(); err != nil {
				return nil, err
			}
			head = line
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return tail, sc.Err()
}

// readHeap reads a heap profile with debug=1: its samples by site and
// the MemStats printed after them.
func (rs *runtimeStats) readHeap(r io.Reader) error {
	rs.BySite = map[string]float64{}
	var rate float64
	tail, err := profileRecords(r, func(line string) error {
		// "heap profile: 2: 131552 [9: 1753568] @ heap/1048576": the
		// sampling rate (runtime.MemProfileRate) times two.
		_, twice, ok := strings.Cut(line, "@ heap/")
		r, err := strconv.ParseFloat(twice, 64)
		if !ok || err != nil {
			return fmt.Errorf("first line %q: no sampling rate", line)
		}
		rate = r / 2
		return nil
	}, func(head string, funcs []string) error {
		// inuse_objects: inuse_bytes [alloc_objects: alloc_bytes] @ …
		var n, b int64
		if _, err := fmt.Sscanf(head, "%d: %d", &n, &b); err != nil {
			return fmt.Errorf("record %q: %v", head, err)
		}
		if n > 0 && b > 0 {
			rs.BySite[allocSite(funcs)] += scaleHeapSample(n, b, rate)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for k, p := range map[string]*int64{"HeapInuse": &rs.HeapInuse, "HeapAlloc": &rs.HeapAlloc, "HeapObjects": &rs.HeapObjects,
		"HeapIdle": &rs.HeapIdle, "HeapReleased": &rs.HeapReleased, "Sys": &rs.Sys} {
		v, err := strconv.ParseInt(tail[k], 10, 64)
		if err != nil {
			return fmt.Errorf("MemStats %s: %q", k, tail[k])
		}
		*p = v
	}
	inuse, _, _ := strings.Cut(tail["Stack"], " / ") // "inuse / sys"
	if rs.StackInuse, err = strconv.ParseInt(inuse, 10, 64); err != nil {
		return fmt.Errorf("MemStats Stack: %q", tail["Stack"])
	}
	return nil
}

// scaleHeapSample returns the in-use bytes that n sampled objects of b
// bytes in all stand for, at a sampling rate of one per rate bytes (as
// pprof estimates them; rate ≤ 1 is every allocation).
func scaleHeapSample(n, b int64, rate float64) float64 {
	if rate <= 1 {
		return float64(b)
	}
	avg := float64(b) / float64(n)
	return float64(b) / (1 - math.Exp(-avg/rate))
}

// allocSite names an allocation site by its first two frames outside the
// runtime, "callee ← caller"; one that the runtime makes for itself (a
// goroutine's g, by runtime.malg) by its first two frames that are not
// the allocator's.
func allocSite(funcs []string) string {
	inRuntime := func(f string) bool {
		return strings.HasPrefix(f, "runtime.") || strings.HasPrefix(f, "internal/runtime/")
	}
	if site := firstTwo(funcs, inRuntime); site != "" {
		return site
	}
	allocator := func(f string) bool {
		for _, p := range []string{"runtime.mallocgc", "runtime.newobject", "runtime.makeslice", "runtime.growslice",
			"runtime.makemap", "runtime.newarray", "runtime.makechan", "runtime.rawstring", "runtime.rawbyteslice",
			"runtime.concatstring", "runtime.slicebytetostring", "runtime.mapassign", "internal/runtime/maps."} {
			if strings.HasPrefix(f, p) {
				return true
			}
		}
		return false
	}
	if site := firstTwo(funcs, allocator); site != "" {
		return site
	}
	return "runtime"
}

// firstTwo returns the first two functions that skip does not skip,
// "callee ← caller", or "" when none is left.
func firstTwo(funcs []string, skip func(string) bool) string {
	var kept []string
	for _, f := range funcs {
		if skip(f) {
			continue
		}
		kept = append(kept, shortFunc(f))
		if len(kept) == 2 {
			break
		}
	}
	return strings.Join(kept, " ← ")
}

// shortFunc drops the module path from pmauthority's functions.
func shortFunc(f string) string {
	return strings.TrimPrefix(f, "github.com/pmauthority/pmauthority/")
}

// readGoroutines reads a goroutine profile with debug=1: the total and
// the goroutines by the function they run (their outermost frame).
func (rs *runtimeStats) readGoroutines(r io.Reader) error {
	rs.ByStart = map[string]int{}
	_, err := profileRecords(r, func(line string) error {
		if _, err := fmt.Sscanf(line, "goroutine profile: total %d", &rs.Goroutines); err != nil {
			return fmt.Errorf("first line %q: %v", line, err)
		}
		return nil
	}, func(head string, funcs []string) error {
		var n int
		if _, err := fmt.Sscanf(head, "%d @", &n); err != nil {
			return fmt.Errorf("record %q: %v", head, err)
		}
		start := "?"
		if len(funcs) > 0 {
			start = shortFunc(funcs[len(funcs)-1])
		}
		rs.ByStart[start] += n
		return nil
	})
	return err
}
