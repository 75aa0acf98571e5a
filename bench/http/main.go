// Command httpbench measures pmauthority's stateless apply server
// (POST / with {"doc", "steps"}) side by side with the node servers it
// replaces (bench/noderef: node:http and express, running the real
// prosemirror-model and prosemirror-transform) and with a Go net/http
// server that answers the same bytes without doing any work (the
// ceiling). bench/http/run.sh builds everything and runs it:
//
//	httpbench run [flags]        the whole benchmark; writes bench/out/http-latest.md
//	httpbench load [flags]       load one server, print what was measured as JSON
//	httpbench ceiling [flags]    run the ceiling server
//	httpbench payloads -out DIR  write the payloads to DIR/NAME.json
//	httpbench profile [flags]    CPU profile of pmauthority's server under one load
//
// All traffic stays on loopback and every load is bounded in time.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
)

const usage = `usage: httpbench <command> [flags]

commands:
  run        run the whole side-by-side benchmark (bench/http/run.sh calls it)
  load       load one server and print the measurements as JSON
  ceiling    run the ceiling server (answers fixed bytes, does no work)
  payloads   write the payloads to a folder
  profile    load pmauthority's server with one payload under a CPU profile
             and print where the time goes
  pprof-serve  pmauthority's server with a CPU profile (profile runs it)

Run "httpbench <command> -h" for the flags of a command.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	args := os.Args[2:]
	switch os.Args[1] {
	case "run":
		err = cmdRun(args)
	case "load":
		err = cmdLoad(args)
	case "ceiling":
		err = cmdCeiling(args)
	case "payloads":
		err = cmdPayloads(args)
	case "profile":
		err = cmdProfile(args)
	case "pprof-serve":
		err = cmdPprofServe(args)
	case "-h", "-help", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "httpbench: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpbench:", err)
		os.Exit(1)
	}
}

func cmdLoad(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "server `host:port` (loopback)")
	path := fs.String("path", "/", "request path")
	bodyFile := fs.String("body", "", "`file` with the request body")
	expectFile := fs.String("expect", "", "`file` with the answer body every request must get")
	conns := fs.Int("c", 1, "connections, each a closed loop")
	warmup := fs.Duration("warmup", 2*time.Second, "load before measuring")
	duration := fs.Duration("duration", 10*time.Second, "measured time")
	checkEvery := fs.Int("check-every", 16, "compare every `n`-th answer per connection byte for byte (every answer's length is checked)")
	fs.Parse(args)
	if err := benchproc.CheckLoopback(*addr); err != nil {
		return err
	}
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		return err
	}
	expect, err := os.ReadFile(*expectFile)
	if err != nil {
		return err
	}
	res, err := Load(LoadOptions{
		Addr: *addr, Path: *path, Body: body, Expect: expect, Conns: *conns,
		Warmup: *warmup, Duration: *duration, CheckEvery: *checkEvery,
	})
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

func cmdCeiling(args []string) error {
	fs := flag.NewFlagSet("ceiling", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "listen on `host:port` (loopback)")
	answerFile := fs.String("answer", "", "`file` with the answer body")
	contentType := fs.String("content-type", "application/json; charset=utf-8", "Content-Type of the answers")
	fs.Parse(args)
	if err := benchproc.CheckLoopback(*addr); err != nil {
		return err
	}
	answer, err := os.ReadFile(*answerFile)
	if err != nil {
		return err
	}
	return serveCeiling(*addr, answer, *contentType)
}

func cmdPayloads(args []string) error {
	fs := flag.NewFlagSet("payloads", flag.ExitOnError)
	out := fs.String("out", "bench/out/http/payloads", "`folder` to write NAME.json into")
	traces := fs.String("traces", "", "traces `folder` (default $PMA_TRACES or ../shared/traces beside the repository)")
	fs.Parse(args)
	payloads, err := Payloads(tracesDir(*traces))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for _, p := range payloads {
		file := filepath.Join(*out, p.Name+".json")
		if err := os.WriteFile(file, p.Body, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s\t%d bytes\t%s\n", file, len(p.Body), p.About)
	}
	return nil
}
