package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
	"github.com/pmauthority/pmauthority/server"
)

// pprofServerName is pmauthority's server run inside httpbench with a CPU
// profile (httpbench pprof-serve): the same handler as pmauthority serve
// with its defaults, only the profiler added.
const pprofServerName = "pmauthority+pprof"

func init() {
	servers = append(servers, serverKind{pprofServerName, "pmauthority's server package inside httpbench pprof-serve, CPU-profiled", func(cfg *runConfig, addr string, _ *payloadCase) []string {
		return []string{cfg.Self, "pprof-serve", "-addr", addr, "-default-schema", "text", "-cpuprofile", cfg.Profile}
	}})
}

// cmdPprofServe runs pmauthority's server with default settings and a
// CPU profile written to a file when SIGINT or SIGTERM stops it.
func cmdPprofServe(args []string) error {
	fs := flag.NewFlagSet("pprof-serve", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "listen on `host:port` (loopback)")
	def := fs.String("default-schema", "text", "schema of requests that name none")
	out := fs.String("cpuprofile", "cpu.pprof", "CPU profile `file`")
	fs.Parse(args)
	if err := benchproc.CheckLoopback(*addr); err != nil {
		return err
	}
	srv, err := server.New(server.Config{DefaultSchema: *def, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	defer pprof.StopCPUProfile()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.Serve(ctx, ln)
}

// cmdProfile loads pmauthority's server with one payload while it is
// CPU-profiled, then prints where its time went (go tool pprof -top).
func cmdProfile(args []string) error {
	fs := flag.NewFlagSet("profile", flag.ExitOnError)
	payload := fs.String("payload", "50KB", "payload (seed, small, 50KB, 1MB)")
	conns := fs.Int("c", 32, "connections")
	pl := fs.String("placement", "pinned", "placement (pinned or unpinned)")
	duration := fs.Duration("duration", 10*time.Second, "measured time (after a 2s warm-up)")
	nodes := fs.Int("nodecount", 35, "functions to list")
	fs.Parse(args)
	root, err := benchproc.RepoRoot()
	if err != nil {
		return err
	}
	cfg := &runConfig{Root: root, Node: "node", Traces: tracesDir(""), OutDir: filepath.Join(root, "bench/out/http"),
		Warmup: 2 * time.Second, Duration: *duration, Rounds: 1, Settle: 100 * time.Millisecond, Servers: []string{pprofServerName}}
	cfg.Profile = filepath.Join(cfg.OutDir, fmt.Sprintf("pmauthority-%s-c%d-%s.pprof", *payload, *conns, *pl))
	if cfg.Self, err = os.Executable(); err != nil {
		return err
	}
	place := benchproc.FindPlacement(*pl)
	if place == nil {
		return fmt.Errorf("unknown placement %q", *pl)
	}
	if err := os.MkdirAll(filepath.Join(cfg.OutDir, "logs"), 0o755); err != nil {
		return err
	}
	all, err := Payloads(cfg.Traces)
	if err != nil {
		return err
	}
	var c *payloadCase
	for _, p := range all {
		if p.Name == *payload {
			c = &payloadCase{Payload: p, Checked: map[string]answerCheck{},
				BodyFile:   filepath.Join(cfg.OutDir, p.Name+".request.json"),
				ExpectFile: filepath.Join(cfg.OutDir, p.Name+".expected.json")}
		}
	}
	if c == nil {
		return fmt.Errorf("unknown payload %q", *payload)
	}
	if err := os.WriteFile(c.BodyFile, c.Body, 0o644); err != nil {
		return err
	}
	if err := checkAnswers(cfg, []*payloadCase{c}); err != nil {
		return err
	}
	if c.Skip != "" {
		return fmt.Errorf("not profiled: %s", c.Skip)
	}
	r := measureGroup(cfg, place, c, *conns)[0]
	if r.Err != "" {
		return fmt.Errorf("%s", r.Err)
	}
	benchproc.Logf("%s c=%d %s: %.0f req/s, p50 %s, p99 %s, CPU/req %s, peak RSS %s, others' CPU %.2f; profile in %s", c.Name, *conns, place.Name,
		r.ReqPerSec, fmtDur(r.P50), fmtDur(r.P99), fmtDur(r.CPUPerReq), fmtBytes(r.PeakRSS), r.OthersCPU, cfg.Profile)
	cmd := exec.Command("go", "tool", "pprof", "-top", fmt.Sprintf("-nodecount=%d", *nodes), cfg.Self, cfg.Profile)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return err
	}
	fmt.Println()
	cmd = exec.Command("go", "tool", "pprof", "-top", "-cum", fmt.Sprintf("-nodecount=%d", *nodes), cfg.Self, cfg.Profile)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}
