package main

import (
	"io"
	"net/http"
	"strconv"
	"time"
)

// ceilingHandler answers every POST with answer, as an apply server would
// answer the benchmark's payload, without doing any of the work: it reads
// the request body (an HTTP server must) and writes the precomputed bytes
// with the headers pmauthority sends. What it reaches is the most any Go
// net/http server can reach with this payload on this machine.
func ceilingHandler(answer []byte, contentType string) http.Handler {
	length := strconv.Itoa(len(answer))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h := w.Header()
		h["Content-Type"] = []string{contentType}
		h["Content-Length"] = []string{length}
		w.Write(answer)
	})
}

// serveCeiling runs the ceiling server on addr until the process is
// stopped.
func serveCeiling(addr string, answer []byte, contentType string) error {
	srv := &http.Server{
		Addr:              addr,
		Handler:           ceilingHandler(answer, contentType),
		ReadHeaderTimeout: 10 * time.Second,
	}
	return srv.ListenAndServe()
}
