package main

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/stats"
)

// latencies summarizes durations as seconds.
type latencies struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// summarize returns the quantiles of ds (which it sorts).
func summarize(ds []time.Duration) latencies {
	slices.Sort(ds)
	return latencies{
		N:   len(ds),
		P50: stats.Quantile(ds, 0.50).Seconds(),
		P90: stats.Quantile(ds, 0.90).Seconds(),
		P99: stats.Quantile(ds, 0.99).Seconds(),
		Max: stats.Quantile(ds, 1).Seconds(),
	}
}

// errorCount counts failures and keeps the first.
type errorCount struct {
	Errors     int    `json:"errors"`
	FirstError string `json:"firstError,omitempty"`
}

// add counts err.
func (e *errorCount) add(err error) {
	e.Errors++
	if e.FirstError == "" {
		e.FirstError = err.Error()
	}
}

// merge adds o's errors to e's.
func (e *errorCount) merge(o errorCount) {
	e.Errors += o.Errors
	if e.FirstError == "" {
		e.FirstError = o.FirstError
	}
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times (100 on
// every Linux this runs on).
const clockTicks = 100

// processCPU returns the CPU time (user + system, all threads) the
// process pid has used, in seconds, or -1 when it cannot be read.
func processCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// The command name (field 2) may hold spaces: count from the ')'.
	at := bytes.LastIndexByte(b, ')')
	if at < 0 {
		return -1
	}
	f := bytes.Fields(b[at+1:])
	if len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseFloat(string(f[11]), 64)
	stime, err2 := strconv.ParseFloat(string(f[12]), 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return (utime + stime) / clockTicks
}

// machineCPU returns the busy and total CPU time of the whole machine so
// far, in seconds, from /proc/stat.
func machineCPU() (busy, total float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	for i, s := range f[1:] {
		v, _ := strconv.ParseFloat(string(s), 64)
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy / clockTicks, total / clockTicks
}

// cpuMeter measures, over a time, the CPU used by a server, by this
// process (the load generator) and by the whole machine.
type cpuMeter struct {
	pid                 int
	at                  time.Time
	server, self, mbusy float64
}

// startCPU starts measuring (pid 0: the server's CPU is not measured).
func startCPU(pid int) *cpuMeter {
	m := &cpuMeter{pid: pid, at: time.Now(), server: -1}
	if pid > 0 {
		m.server = processCPU(pid)
	}
	m.self = processCPU(os.Getpid())
	m.mbusy, _ = machineCPU()
	return m
}

// cpuUse is what a cpuMeter measured.
type cpuUse struct {
	// Server is the server process's CPU time in seconds (-1: unknown).
	Server float64 `json:"serverCPU"`
	// Load is the load generator's CPU time in seconds.
	Load float64 `json:"loadCPU"`
	// Others is the CPU that everything else on the machine used, in
	// cores: how busy the shared machine was meanwhile.
	Others float64 `json:"othersCores"`
}

// stop returns what was used since start.
func (m *cpuMeter) stop() cpuUse {
	wall := time.Since(m.at).Seconds()
	u := cpuUse{Server: -1}
	if m.pid > 0 {
		if s := processCPU(m.pid); s >= 0 && m.server >= 0 {
			u.Server = s - m.server
		}
	}
	u.Load = processCPU(os.Getpid()) - m.self
	busy, _ := machineCPU()
	if wall > 0 {
		u.Others = max(0, (busy-m.mbusy-max(u.Server, 0)-u.Load)/wall)
	}
	return u
}
