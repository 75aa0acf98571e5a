package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/httpwire"
	"github.com/pmauthority/pmauthority/bench/internal/stats"
)

// LoadOptions says how to load a server.
type LoadOptions struct {
	// Addr is the server's host:port (loopback only).
	Addr string
	// Path is the request path.
	Path string
	// Body is the request body, POSTed as application/json.
	Body []byte
	// Expect is the answer body every request must get, byte for byte.
	Expect []byte
	// Conns is the number of keep-alive connections, each driven by its own
	// goroutine in a closed loop (a new request as soon as the answer is in).
	Conns int
	// Warmup is how long the load runs before it is measured, Duration how
	// long it is measured.
	Warmup, Duration time.Duration
	// CheckEvery: every answer's status and length are checked; the whole
	// body of each connection's first answer and of every CheckEvery-th
	// one after it is compared with Expect.
	CheckEvery int
}

// LoadResult is what one load measured: the requests answered (or
// failed) between the end of the warm-up and the end, as wrk counts them.
// Times are in seconds.
type LoadResult struct {
	Conns    int     `json:"conns"`
	Duration float64 `json:"duration"`
	// OK is the number of answers that were 200 with the expected body.
	OK int `json:"ok"`
	// All is the number of answers of the whole load, warm-up included.
	All int `json:"all"`
	// ReqPerSec is the median of the request rates of equal intervals of
	// the measured time (Intervals: up to maxIntervals, fewer when there
	// are fewer than 50 answers an interval, down to one, the whole time),
	// MeanReqPerSec OK over Duration.
	ReqPerSec     float64   `json:"reqPerSec"`
	MeanReqPerSec float64   `json:"meanReqPerSec"`
	Intervals     []float64 `json:"intervals"`
	// Latencies of the OK requests.
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
	// Errors counts failed requests: transport errors, malformed answers,
	// answers whose body differs from Expect (Mismatches) and non-200
	// answers (Non200).
	Errors     int    `json:"errors"`
	Non200     int    `json:"non200"`
	Mismatches int    `json:"mismatches"`
	Compared   int    `json:"compared"`
	FirstError string `json:"firstError,omitempty"`
}

// maxIntervals is how many intervals the measured time is cut into, at
// most, for the median request rate.
const maxIntervals = 10

// worker is one connection's closed loop and what it measured.
type worker struct {
	opt       *LoadOptions
	req       []byte
	c         *client
	latencies []time.Duration
	done      []time.Duration // when each of latencies ended, from the start of the measured time
	answers   int
	errors    int
	non200    int
	mismatch  int
	compared  int
	firstErr  error
}

// Load runs the load opt describes and returns what it measured. It
// returns an error only when it cannot start (no connection); failures
// during the load are counted in the result.
func Load(opt LoadOptions) (*LoadResult, error) {
	if opt.Conns < 1 || opt.Duration <= 0 {
		return nil, fmt.Errorf("need at least one connection and a duration")
	}
	if opt.CheckEvery < 1 {
		opt.CheckEvery = 1
	}
	req := requestBytes(opt.Addr, opt.Path, opt.Body)
	workers := make([]*worker, opt.Conns)
	for i := range workers {
		c, err := dial(opt.Addr)
		if err != nil {
			for _, w := range workers[:i] {
				w.c.close()
			}
			return nil, err
		}
		workers[i] = &worker{opt: &opt, req: req, c: c}
	}
	start := time.Now()
	measureFrom := start.Add(opt.Warmup)
	end := measureFrom.Add(opt.Duration)
	// No request may outlive the load by much, whatever the server does.
	hardStop := end.Add(10 * time.Second)
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(measureFrom, end, hardStop)
		}()
	}
	wg.Wait()
	return collect(&opt, workers), nil
}

// run sends requests until end, measuring those sent from measureFrom on.
func (w *worker) run(measureFrom, end, hardStop time.Time) {
	for n := 0; ; n++ {
		t0 := time.Now()
		if !t0.Before(end) {
			break
		}
		if w.c == nil {
			c, err := dial(w.opt.Addr)
			if err != nil {
				w.fail(err, time.Now(), measureFrom, end)
				time.Sleep(10 * time.Millisecond)
				continue
			}
			w.c = c
		}
		w.c.conn.SetDeadline(hardStop)
		status, body, err := w.c.roundTrip(w.req)
		t1 := time.Now()
		if err != nil {
			w.c.close()
			w.c = nil
			w.fail(err, t1, measureFrom, end)
			continue
		}
		w.answers++
		if w.c.mustClose {
			w.c.close()
			w.c = nil
		}
		if t1.Before(measureFrom) || t1.After(end) {
			continue
		}
		switch {
		case status != 200:
			w.non200++
			w.fail(fmt.Errorf("status %d: %.200s", status, body), t1, measureFrom, end)
		case len(body) != len(w.opt.Expect):
			w.mismatch++
			w.fail(fmt.Errorf("answer of %d bytes, want %d: %.200s", len(body), len(w.opt.Expect), body), t1, measureFrom, end)
		case (n%w.opt.CheckEvery == 0 || w.compared == 0) && !w.compare(body):
			w.mismatch++
			w.fail(fmt.Errorf("answer differs from the expected one: %.200s", body), t1, measureFrom, end)
		default:
			w.latencies = append(w.latencies, t1.Sub(t0))
			w.done = append(w.done, t1.Sub(measureFrom))
		}
	}
	if w.c != nil {
		w.c.close()
	}
}

// compare reports whether body is the expected answer.
func (w *worker) compare(body []byte) bool {
	w.compared++
	return bytes.Equal(body, w.opt.Expect)
}

// fail counts a request that failed at t if t is in the measured time,
// and keeps the first error.
func (w *worker) fail(err error, t, measureFrom, end time.Time) {
	if t.Before(measureFrom) || t.After(end) {
		return
	}
	w.errors++
	if w.firstErr == nil {
		w.firstErr = err
	}
}

// collect merges the workers' measurements.
func collect(opt *LoadOptions, workers []*worker) *LoadResult {
	r := &LoadResult{Conns: opt.Conns, Duration: opt.Duration.Seconds()}
	var lat, done []time.Duration
	for _, w := range workers {
		lat = append(lat, w.latencies...)
		done = append(done, w.done...)
		r.All += w.answers
		r.Errors += w.errors
		r.Non200 += w.non200
		r.Mismatches += w.mismatch
		r.Compared += w.compared
		if w.firstErr != nil && r.FirstError == "" {
			r.FirstError = w.firstErr.Error()
		}
	}
	r.OK = len(lat)
	r.MeanReqPerSec = float64(r.OK) / r.Duration
	n := max(1, min(maxIntervals, r.OK/50))
	counts := make([]int, n)
	for _, d := range done {
		counts[min(int(d.Seconds()/r.Duration*float64(n)), n-1)]++
	}
	for _, c := range counts {
		r.Intervals = append(r.Intervals, float64(c)*float64(n)/r.Duration)
	}
	r.ReqPerSec = stats.Median(r.Intervals)
	slices.Sort(lat)
	r.P50 = stats.Quantile(lat, 0.50).Seconds()
	r.P90 = stats.Quantile(lat, 0.90).Seconds()
	r.P99 = stats.Quantile(lat, 0.99).Seconds()
	r.Max = stats.Quantile(lat, 1).Seconds()
	return r
}

// requestBytes returns the whole HTTP/1.1 request, written with a single
// Write for every request.
func requestBytes(addr, path string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, addr, len(body))
	b.Write(body)
	return b.Bytes()
}

// client is a minimal HTTP/1.1 client on one keep-alive connection: much
// cheaper per request than net/http's, so that the load generator is not
// what limits the fast servers on a 2-core machine. It understands
// Content-Length, chunked and close-delimited answers.
type client struct {
	conn      net.Conn
	r         *bufio.Reader
	body      []byte
	mustClose bool
}

// dial connects to addr.
func dial(addr string) (*client, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &client{conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}, nil
}

// close closes the connection.
func (c *client) close() { c.conn.Close() }

// roundTrip sends req and returns the answer's status and body. The body
// is valid until the next call.
func (c *client) roundTrip(req []byte) (status int, body []byte, err error) {
	if _, err := c.conn.Write(req); err != nil {
		return 0, nil, err
	}
	status, body, closes, err := httpwire.ReadAnswer(c.r, c.body)
	if err != nil {
		return 0, nil, err
	}
	c.body, c.mustClose = body, closes
	return status, body, nil
}
