package main

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/pmauthority/pmauthority/internal/bytesize"
)

// The memory budget of serve: --max-memory is what the whole process may
// use, the Go runtime's soft memory limit. Within it the loaded documents
// get half (collab.Config.MaxMemory, and a quarter for one document), the
// request bodies being read or held --max-body-memory
// (server.Config.MaxBodyMemory); the rest is for what is not budgeted:
// the garbage the collector has yet to free, connections and their
// buffers, the store's cache, the runtime.
const (
	// defaultMemoryShare is the share of the memory available to the
	// process that --max-memory defaults to, in percent.
	defaultMemoryShare = 70
	// docMemoryShare is the share of --max-memory the loaded documents
	// may hold, in percent.
	docMemoryShare = 50
	// maxDefaultBodyMemory caps the default of --max-body-memory, an
	// eighth of --max-memory.
	maxDefaultBodyMemory = 256 << 20
)

// memoryPlan is what serve runs with, from the flags and the memory
// available.
type memoryPlan struct {
	available  int64  // the memory available to the process, 0 when unknown
	source     string // where available comes from
	maxMemory  int64  // --max-memory, or its default
	docMemory  int64  // the loaded documents' budget, docMemoryShare of maxMemory
	bodyMemory int64  // --max-body-memory, or its default
	// goLimit is the soft limit for runtime/debug.SetMemoryLimit:
	// maxMemory, at most 90 % of the memory available.
	goLimit int64
}

// planMemory returns the plan for the flags' values (0: the default),
// with the memory available read under root ("/" but in tests).
func planMemory(root string, maxMemory, bodyMemory int64) memoryPlan {
	p := memoryPlan{maxMemory: maxMemory, bodyMemory: bodyMemory}
	p.available, p.source = availableMemory(root)
	if p.maxMemory == 0 {
		p.maxMemory = p.available * defaultMemoryShare / 100
		if p.maxMemory == 0 { // nothing known: a small server's share
			p.maxMemory = 1 << 30
		}
	}
	p.docMemory = p.maxMemory * docMemoryShare / 100
	if p.bodyMemory == 0 {
		p.bodyMemory = min(p.maxMemory/8, maxDefaultBodyMemory)
	}
	p.goLimit = p.maxMemory
	if p.available > 0 {
		p.goLimit = min(p.goLimit, p.available/10*9)
	}
	return p
}

// availableMemory returns the memory available to the process: the
// lowest limit of its memory cgroup and the cgroup's ancestors (cgroup v2
// memory.max, or v1 memory.limit_in_bytes), else the machine's MemTotal;
// 0 when neither is known. The source names the file read.
func availableMemory(root string) (int64, string) {
	if n, src := cgroupLimit(root); n > 0 {
		return n, src
	}
	f, err := os.Open(filepath.Join(root, "proc/meminfo"))
	if err != nil {
		return 0, "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil && kb > 0 {
				return kb << 10, "/proc/meminfo MemTotal"
			}
		}
	}
	return 0, "unknown"
}

// cgroupLimit returns the lowest memory limit of the process's cgroup
// and its ancestors, and the file it is in; 0 when there is none.
func cgroupLimit(root string) (int64, string) {
	data, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, ""
	}
	best, src := int64(0), ""
	consider := func(file string) {
		v, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		// "max" (v2) and a huge value (v1) mean no limit.
		if err == nil && n > 0 && n < 1<<62 && (best == 0 || n < best) {
			best, src = n, "/"+file
		}
	}
	for line := range strings.Lines(string(data)) {
		// hierarchy-ID:controllers:path; v2 is "0::path".
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dir, name string
		switch {
		case parts[0] == "0" && parts[1] == "":
			dir, name = "sys/fs/cgroup", "memory.max"
		case strings.Contains(","+parts[1]+",", ",memory,"):
			dir, name = "sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		// The cgroup and its ancestors; inside a container's namespace
		// the path may not exist and the mount's root is the cgroup.
		for p := path.Clean("/" + parts[2]); ; p = path.Dir(p) {
			consider(path.Join(dir, p, name))
			if p == "/" {
				break
			}
		}
	}
	return best, src
}

// setMemoryLimit sets the Go runtime's soft memory limit from the plan,
// unless GOMEMLIMIT sets it, and logs the budgets.
func (r *serveRun) setMemoryLimit() {
	p := r.memory
	goLimit := p.goLimit
	if os.Getenv("GOMEMLIMIT") != "" {
		goLimit = debug.SetMemoryLimit(-1)
	} else {
		debug.SetMemoryLimit(goLimit)
	}
	r.logger.Info("memory budgets", "max_memory", bytesize.Size(p.maxMemory), "documents", bytesize.Size(p.docMemory),
		"max_body_memory", bytesize.Size(p.bodyMemory), "available", bytesize.Size(p.available), "available_from", p.source,
		"go_memory_limit", bytesize.Size(goLimit))
}
