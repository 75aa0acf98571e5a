package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pmauthority/pmauthority/metrics"
	"github.com/pmauthority/pmauthority/server"
)

// newMetrics returns a registry with the Go and process collectors and
// pmauthority's metrics.
func newMetrics() (*prometheus.Registry, *metrics.Metrics, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m, err := metrics.New(reg)
	if err != nil {
		return nil, nil, err
	}
	return reg, m, nil
}

// metricsHandler serves GET /metrics (reg, in Prometheus's formats) and
// Go's profiles under /debug/pprof/ (net/http/pprof), on the listener of
// --metrics-addr only. On a loopback listener it answers only requests
// for loopback hosts (421 otherwise), so that a web page of another
// domain resolving to 127.0.0.1 (DNS rebinding) cannot read them.
func metricsHandler(reg *prometheus.Registry, loopback bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	if !loopback {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !server.LoopbackHost(r.Host) {
			http.Error(w, "misdirected request: the metrics listener answers loopback hosts only", http.StatusMisdirectedRequest)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// checkMetricsAddr checks --metrics-addr (empty: no metrics listener).
func checkMetricsAddr(addr, mainAddr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--metrics-addr %q: want host:port (e.g. 127.0.0.1:9090): %v", addr, err)
	}
	if addr == mainAddr && port != "0" {
		return fmt.Errorf("--metrics-addr %q: must differ from --addr (the metrics and profiles have a listener of their own)", addr)
	}
	return nil
}

// metricsListener is the running listener of --metrics-addr.
type metricsListener struct {
	hs   *http.Server
	errc chan error
}

// serveMetrics serves reg's metrics and the profiles on ln until stop.
func serveMetrics(ln net.Listener, reg *prometheus.Registry, logger *slog.Logger) *metricsListener {
	tcp, _ := ln.Addr().(*net.TCPAddr)
	loopback := tcp != nil && tcp.IP.IsLoopback()
	m := &metricsListener{
		hs: &http.Server{
			Handler:           metricsHandler(reg, loopback),
			ReadHeaderTimeout: 5 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
		errc: make(chan error, 1),
	}
	args := []any{"addr", ln.Addr().String(), "url", "http://" + ln.Addr().String() + "/metrics"}
	if !loopback {
		logger.Warn("metrics serving on a non-loopback address: /metrics and /debug/pprof/ are open to anyone who reaches it", args...)
	} else {
		logger.Info("metrics serving", args...)
	}
	go func() { m.errc <- m.hs.Serve(ln) }()
	return m
}

// stop closes the listener and its connections (a scrape or a profile
// in flight is cut off: the process is exiting).
func (m *metricsListener) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := m.hs.Shutdown(ctx)
	if err != nil {
		m.hs.Close()
	}
	if serr := <-m.errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return nil // a profile was running: cut off
	}
	return err
}
