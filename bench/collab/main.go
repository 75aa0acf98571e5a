// Command collabbench measures collaborative-editing authorities over
// their HTTP collab API (the ProseMirror collab demo's routes):
// pmauthority with its SQLite store against bench/noderef/authority.mjs,
// a node authority written the way the ProseMirror demo server is, with
// go-ceiling (./ceiling, net/http doing none of the work) as a yardstick.
// bench/collab/run.sh builds everything and runs it:
//
//	collabbench run [flags]     every scenario against every server; writes bench/out/collab-latest.md
//	collabbench load [flags]    one scenario against one running server, the measurements as JSON
//	collabbench pprof-serve     pmauthority's collab server in-process under a CPU profile
//
// The scenarios: editors typing into documents (each loops: POST its
// steps at its version; on 409 GET the events it missed and POST again;
// or, in commit mode, POST them as a commit that the server rebases), as
// 1 document × 8, 32 or 128 editors and 100 documents × 2 editors; 1,000
// long-polling readers of one document while a writer submits 10 times a
// second (delivery latency); and the memory a loaded document takes
// (server RSS before and after 10,000 documents of about 2 KB of text).
// All traffic stays on loopback and every load is bounded in time.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
)

const usage = `usage: collabbench <command> [flags]

commands:
  run    run every scenario against every server (bench/collab/run.sh calls it)
  load   run one scenario against one running server, print the measurements as JSON
  pprof-serve  pmauthority's collab server in-process, CPU-profiled (and block/mutex with -contention)

Run "collabbench <command> -h" for the flags of a command.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = cmdRun(os.Args[2:])
	case "load":
		err = cmdLoad(os.Args[2:])
	case "pprof-serve":
		err = cmdPprofServe(os.Args[2:])
	case "-h", "-help", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "collabbench: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "collabbench:", err)
		os.Exit(1)
	}
}

// Scenario names.
const (
	scenarioEditors = "editors"
	scenarioFanout  = "fanout"
	scenarioMemory  = "memory"
)

// loadResult is the JSON that `collabbench load` prints: the result of
// its scenario.
type loadResult struct {
	Editors *editorsResult `json:"editors,omitempty"`
	Fanout  *fanoutResult  `json:"fanout,omitempty"`
	Memory  *memResult     `json:"memory,omitempty"`
}

func cmdLoad(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	scenario := fs.String("scenario", scenarioEditors, "what to run: editors, fanout or memory")
	addr := fs.String("addr", "127.0.0.1:8080", "server `host:port` (loopback)")
	pid := fs.Int("pid", 0, "the server's process `id`, to measure its CPU time (and, for memory, its RSS)")
	addrList := fs.String("addrs", "", "editors: several servers of one cluster, `host:port,...`, instead of -addr; the editors are spread over them in turn")
	pidList := fs.String("pids", "", "editors: the process `ids` of the -addrs servers, in any order; their CPU times are added up")
	dbPID := fs.Int("db-pid", 0, "editors: a database's main process `id` (PostgreSQL's postmaster): the CPU time of it and its children is measured too")
	prefix := fs.String("prefix", "bench-", "document ids start with this")
	docs := fs.Int("docs", 1, "editors, memory: `number` of documents")
	editors := fs.Int("editors", 8, "editors: editors per document")
	readers := fs.Int("readers", 1000, "fanout: long-polling readers")
	rate := fs.Float64("rate", 10, "fanout: the writer's submissions per second")
	maxText := fs.Int64("max-text", 2000, "editors, fanout: letters the first paragraph grows to; then each step replaces one (0: grows for ever)")
	seed := fs.Uint64("seed", 1, "random seed (the same seed makes the same load)")
	warmup := fs.Duration("warmup", time.Second, "editors, fanout: load before measuring")
	duration := fs.Duration("duration", 10*time.Second, "editors, fanout: measured time")
	grace := fs.Duration("grace", 2*time.Second, "fanout: time after the end for the readers to receive the last steps")
	steps := fs.Int("steps", 20, "memory: steps per document")
	text := fs.Int("text", 100, "memory: letters per step")
	warm := fs.Int("warm", 20, "memory: documents made before the first RSS reading")
	conns := fs.Int("conns", 4, "memory: connections making the documents")
	settle := fs.Duration("settle", 2*time.Second, "memory: time the server is left alone before each RSS reading")
	noTextCheck := fs.Bool("no-text-check", false, "editors: do not check the documents' text at the end (for a server that applies no step)")
	gcPath := fs.String("gc-path", "", "memory: `path` of a POST that makes the server collect its garbage; the RSS is also read after one")
	mode := fs.String("mode", modeClassic, "editors: how they submit: classic (POST events; on 409 GET the events, POST again) or commit (POST commits, which the server rebases)")
	metricsAddr := fs.String("metrics", "", "editors: the server's --metrics-addr `host:port` (loopback), to read its store's group commits from GET /metrics")
	token := fs.String("token", "", "send `TOKEN` as \"Authorization: Bearer TOKEN\" with every request (for serve --jwt-secret-file etc.)")
	fs.Parse(args)
	if err := benchproc.CheckLoopback(*addr); err != nil {
		return err
	}
	if *metricsAddr != "" {
		if err := benchproc.CheckLoopback(*metricsAddr); err != nil {
			return err
		}
	}
	addrs := benchproc.SplitList(*addrList)
	for _, a := range addrs {
		if err := benchproc.CheckLoopback(a); err != nil {
			return err
		}
	}
	var pids []int
	for _, p := range benchproc.SplitList(*pidList) {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return fmt.Errorf("-pids: bad process id %q", p)
		}
		pids = append(pids, n)
	}
	if len(addrs) > 0 && *scenario != scenarioEditors {
		return fmt.Errorf("-addrs is for the editors scenario only")
	}
	var res loadResult
	var err error
	switch *scenario {
	case scenarioEditors:
		res.Editors, err = runEditors(editorsOptions{Addr: *addr, Token: *token, Docs: *docs, Editors: *editors, Prefix: *prefix,
			MaxText: *maxText, Seed: *seed, Warmup: *warmup, Duration: *duration, PID: *pid, NoTextCheck: *noTextCheck,
			Addrs: addrs, PIDs: pids, DBPID: *dbPID, Mode: *mode, MetricsAddr: *metricsAddr})
	case scenarioFanout:
		res.Fanout, err = runFanout(fanoutOptions{Addr: *addr, Token: *token, Doc: *prefix + "fanout", Readers: *readers, Rate: *rate,
			MaxText: *maxText, Seed: *seed, Warmup: *warmup, Duration: *duration, Grace: *grace, PID: *pid})
	case scenarioMemory:
		res.Memory, err = runMem(memOptions{Addr: *addr, Token: *token, PID: *pid, Docs: *docs, Steps: *steps, Text: *text,
			Prefix: *prefix, Warm: *warm, Conns: *conns, Settle: *settle, GCPath: *gcPath})
	default:
		return fmt.Errorf("unknown scenario %q", *scenario)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}
