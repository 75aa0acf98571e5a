package metrics_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/metrics"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store/memstore"
)

var jsonType = []string{"application/json"}

// discardWriter is a ResponseWriter that keeps only the status.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(status int)      { w.status = status }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// cpuTime returns the CPU time the process has used (all its threads:
// the garbage collector's too).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since start as cpu-ns/op, which
// waiting for a CPU that other processes hold does not count (ns/op
// does).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// benchServer returns a server over a memstore, observed by metrics on
// a registry of its own when on.
func benchServer(b *testing.B, on bool) *server.Server {
	var scfg server.Config
	var ccfg collab.Config
	if on {
		m, err := metrics.New(prometheus.NewRegistry())
		if err != nil {
			b.Fatal(err)
		}
		scfg.Observer, ccfg.Observer = m, m
	}
	ccfg.Store, ccfg.Schemas, ccfg.AutoCreate = memstore.New(), lookupSchema, true
	auth, err := collab.New(ccfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { auth.Close() })
	scfg.Collab, scfg.DefaultSchema, scfg.Logger = auth, "text", slog.New(slog.DiscardHandler)
	scfg.Limits.MaxSubmissions = 1 << 30 // one client submits as fast as it can
	srv, err := server.New(scfg)
	if err != nil {
		b.Fatal(err)
	}
	return srv
}

// BenchmarkSubmit is one accepted step over the long-poll API (a POST
// and the GET of its events), with metrics off and on: the observers'
// cost per accepted step, in process (no network, no fsync).
func BenchmarkSubmit(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			srv := benchServer(b, on)
			w := &discardWriter{h: http.Header{}}
			step := `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"x"}]}}`
			b.ReportAllocs()
			start := cpuTime(b)
			for i := 0; b.Loop(); i++ {
				body := `{"version":` + strconv.Itoa(i) + `,"steps":[` + step + `],"clientID":1}`
				r := httptest.NewRequest("POST", "/docs/b/events", strings.NewReader(body))
				r.Header["Content-Type"] = jsonType
				srv.ServeHTTP(w, r)
				if w.status != 200 {
					b.Fatal(w.status)
				}
				srv.ServeHTTP(w, httptest.NewRequest("GET", "/docs/b/events?version="+strconv.Itoa(i)+"&commentVersion=0", nil))
				if w.status != 200 {
					b.Fatal(w.status)
				}
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkApply is one request of the apply endpoint (the seed of
// prosemirror-v8-perf) with metrics off and on.
func BenchmarkApply(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			srv := benchServer(b, on)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				r := httptest.NewRequest("POST", "/", strings.NewReader(reqtest.Seed))
				r.Header["Content-Type"] = jsonType
				srv.ServeHTTP(w, r)
				if w.status != 200 {
					b.Fatal(w.status)
				}
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkObservers is the observers' own work for one accepted step
// over the long-poll API: the POST's request and submission, the step,
// a waiting long poll and its request, and a group commit's share. Set
// against BenchmarkSubmit's CPU per step, it is the cost of metrics
// without the noise of a whole request.
func BenchmarkObservers(b *testing.B) {
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	step := func() {
		m.Request("POST /docs/{id}/events", 200, 300*time.Microsecond)
		m.Submission(server.TransportLongPoll, server.SubmissionAccepted)
		m.StepsAccepted(1)
		m.Connections(server.TransportLongPoll, 1)
		m.Connections(server.TransportLongPoll, -1)
		m.Request("GET /docs/{id}/events", 200, 2*time.Millisecond)
		m.ObserveCommit(time.Millisecond, 1)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		start := cpuTime(b)
		for b.Loop() {
			step()
		}
		reportCPU(b, start)
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				step()
			}
		})
	})
}
