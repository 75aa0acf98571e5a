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

// treeCPU returns the CPU time in seconds of process root and of every
// process whose parent it is (a PostgreSQL postmaster and its backends),
// by process id; processes that cannot be read are left out.
func treeCPU(root int) map[int]float64 {
	out := map[int]float64{}
	if t := processCPU(root); t >= 0 {
		out[root] = t
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	want := []byte(" " + strconv.Itoa(root) + " ")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// After the ')' of the command name: " state ppid ...".
		at := bytes.LastIndexByte(b, ')')
		if at < 0 || len(b) < at+3 || !bytes.HasPrefix(b[at+3:], want) {
			continue
		}
		if t := processCPU(pid); t >= 0 {
			out[pid] = t
		}
	}
	return out
}

// cpuMeter measures, over a time, the CPU used by the servers, by a
// database's processes, by this process (the load generator) and by the
// whole machine.
type cpuMeter struct {
	pids                []int
	db                  int
	at                  time.Time
	server, self, mbusy float64
	dbAt                map[int]float64
}

// startCPU starts measuring the CPU of the server processes pids (none:
// the servers' CPU is not measured) and of the process tree of db (0:
// none).
func startCPU(db int, pids []int) *cpuMeter {
	m := &cpuMeter{pids: slices.DeleteFunc(slices.Clone(pids), func(p int) bool { return p <= 0 }), db: db, at: time.Now()}
	m.server = m.serverCPU()
	if db > 0 {
		m.dbAt = treeCPU(db)
	}
	m.self = processCPU(os.Getpid())
	m.mbusy, _ = machineCPU()
	return m
}

// serverCPU returns the CPU time of the servers, -1 when one cannot be
// read or there are none.
func (m *cpuMeter) serverCPU() float64 {
	if len(m.pids) == 0 {
		return -1
	}
	var sum float64
	for _, p := range m.pids {
		t := processCPU(p)
		if t < 0 {
			return -1
		}
		sum += t
	}
	return sum
}

// cpuUse is what a cpuMeter measured.
type cpuUse struct {
	// Server is the server processes' CPU time in seconds (-1: unknown).
	Server float64 `json:"serverCPU"`
	// DB is the CPU time of the database's processes in seconds (0 when
	// not measured); a backend that ended meanwhile is left out.
	DB float64 `json:"dbCPU,omitempty"`
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
	if s := m.serverCPU(); s >= 0 && m.server >= 0 {
		u.Server = s - m.server
	}
	if m.db > 0 {
		for pid, t := range treeCPU(m.db) {
			u.DB += t - m.dbAt[pid] // a new backend: all of its time
		}
	}
	u.Load = processCPU(os.Getpid()) - m.self
	busy, _ := machineCPU()
	if wall > 0 {
		u.Others = max(0, (busy-m.mbusy-max(u.Server, 0)-u.DB-u.Load)/wall)
	}
	return u
}
