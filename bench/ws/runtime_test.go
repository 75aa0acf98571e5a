package main

import (
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// parked is what the goroutines of TestReadRuntime run.
func parked(wg *sync.WaitGroup, stop chan struct{}) {
	wg.Done()
	<-stop
}

//go:noinline
func allocKept(n int) []byte { return make([]byte, n) }

var kept [][]byte

// TestReadRuntime reads the profiles of this process, served as serve
// --metrics-addr serves them, with goroutines and allocations it knows.
func TestReadRuntime(t *testing.T) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	t.Cleanup(func() { runtime.MemProfileRate = old; kept = nil })
	for range 100 {
		kept = append(kept, allocKept(10000))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go parked(&wg, stop)
	}
	wg.Wait()
	defer close(stop)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	rs, err := readRuntime(strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	if n := rs.ByStart["bench/ws.parked"]; n != 50 {
		t.Errorf("ByStart[bench/ws.parked] = %d, want 50 (%v)", n, rs.ByStart)
	}
	if rs.Goroutines < 50 {
		t.Errorf("Goroutines = %d, want at least 50", rs.Goroutines)
	}
	var site string
	for k := range rs.BySite {
		if strings.HasPrefix(k, "bench/ws.allocKept ← ") {
			site = k
		}
	}
	// Every allocation sampled: the estimate is what was allocated
	// (10,000 bytes round up to a size class of 10,240).
	if got := rs.BySite[site]; math.Abs(got-100*10240) > 100*10240/10 {
		t.Errorf("BySite[%q] = %.0f, want about %d (%v)", site, got, 100*10240, rs.BySite)
	}
	if rs.HeapInuse < 1<<20 || rs.HeapAlloc < 1<<20 || rs.StackInuse < 50*2048 || rs.Sys < rs.HeapInuse {
		t.Errorf("MemStats: %+v", rs)
	}
}

func TestScaleHeapSample(t *testing.T) {
	if got := scaleHeapSample(3, 300, 1); got != 300 {
		t.Errorf("every allocation sampled: %v, want 300", got)
	}
	// One sample of 512 KiB at a rate of 512 KiB stands for
	// 1/(1-e^-1) of its size, as pprof scales it.
	if got, want := scaleHeapSample(1, 512<<10, 512<<10), float64(512<<10)/(1-math.Exp(-1)); math.Abs(got-want) > 1 {
		t.Errorf("got %v, want %v", got, want)
	}
}
