package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestLoad(t *testing.T) {
	answer := `{"doc":{"type":"doc","content":[{"type":"text","text":"Hello"}]}}`
	big := strings.Repeat("x", 100_000) // net/http sends it chunked
	tests := []struct {
		name    string
		handler http.HandlerFunc
		expect  string
		// wantOK: whether the answers are all as expected.
		wantOK bool
	}{
		{"content-length", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(answer)) }, answer, true},
		{"chunked", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(big[:50_000]))
			w.(http.Flusher).Flush()
			w.Write([]byte(big[50_000:]))
		}, big, true},
		{"connection close", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			w.Write([]byte(answer))
		}, answer, true},
		{"wrong answer", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.ToUpper(answer))) }, answer, false},
		{"wrong length", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(answer + " ")) }, answer, false},
		{"422", func(w http.ResponseWriter, r *http.Request) { http.Error(w, answer, http.StatusUnprocessableEntity) }, answer, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			res, err := Load(LoadOptions{
				Addr: strings.TrimPrefix(srv.URL, "http://"), Path: "/", Body: []byte(seedPayload),
				Expect: []byte(tt.expect), Conns: 2, Warmup: 20 * time.Millisecond, Duration: 200 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantOK {
				if res.OK == 0 || res.Errors != 0 || res.Compared == 0 {
					t.Errorf("got %d OK, %d compared, %d errors (first: %s), want some OK and compared and no error", res.OK, res.Compared, res.Errors, res.FirstError)
				}
				if res.P50 <= 0 || res.P50 > res.P99 || res.P99 > res.Max {
					t.Errorf("latencies p50 %g p99 %g max %g are not ordered", res.P50, res.P99, res.Max)
				}
			} else if res.OK != 0 || res.Errors == 0 || res.FirstError == "" {
				t.Errorf("got %d OK and %d errors, want none OK and some errors", res.OK, res.Errors)
			}
		})
	}
}

func TestCeilingHandler(t *testing.T) {
	srv := httptest.NewServer(ceilingHandler([]byte(`{"doc":{}}`), "application/json; charset=utf-8"))
	defer srv.Close()
	res, err := Load(LoadOptions{
		Addr: strings.TrimPrefix(srv.URL, "http://"), Path: "/", Body: []byte(seedPayload),
		Expect: []byte(`{"doc":{}}`), Conns: 1, Duration: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK == 0 || res.Errors != 0 {
		t.Errorf("got %d OK and %d errors (first: %s)", res.OK, res.Errors, res.FirstError)
	}
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d, want 405", resp.StatusCode)
	}
}

func TestCollectIntervals(t *testing.T) {
	opt := &LoadOptions{Conns: 1, Duration: time.Second}
	w := &worker{opt: opt}
	for i := range 1000 { // 1000 answers a second, evenly spread
		w.latencies = append(w.latencies, time.Millisecond)
		w.done = append(w.done, time.Duration(i)*time.Millisecond)
	}
	r := collect(opt, []*worker{w})
	if len(r.Intervals) != maxIntervals || r.ReqPerSec != 1000 || r.MeanReqPerSec != 1000 {
		t.Errorf("got %d intervals, median %g req/s, mean %g; want %d, 1000, 1000", len(r.Intervals), r.ReqPerSec, r.MeanReqPerSec, maxIntervals)
	}
	w.latencies, w.done = w.latencies[:60], w.done[:60] // too few answers for more than one interval
	if r := collect(opt, []*worker{w}); len(r.Intervals) != 1 || r.ReqPerSec != 60 {
		t.Errorf("got %d intervals, median %g req/s; want 1, 60", len(r.Intervals), r.ReqPerSec)
	}
}
