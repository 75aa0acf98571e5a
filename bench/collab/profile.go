package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"

	pmauth "github.com/pmauthority/pmauthority/auth"
	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

// cmdPprofServe runs pmauthority's collab server the way `pmauthority
// serve` wires it (server, collab authority and store with their
// defaults) inside collabbench, with a CPU profile and optionally block,
// mutex and heap profiles, written when SIGINT or SIGTERM stops it. Load it
// with `collabbench load`, then read the profile with `go tool pprof`.
func cmdPprofServe(args []string) error {
	fs := flag.NewFlagSet("pprof-serve", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "listen on `host:port` (loopback)")
	storeKind := fs.String("store", "sqlite", "store: sqlite or memory")
	data := fs.String("data", "", "`folder` of the SQLite file (required with sqlite)")
	syncMode := fs.String("sync", "full", "SQLite sync: full or normal")
	out := fs.String("out", "collab", "profiles are written to `PREFIX`.cpu.pprof (and .block.pprof, .mutex.pprof, .heap.pprof)")
	contention := fs.Bool("contention", false, "also record where goroutines block and wait for locks")
	secretFile := fs.String("jwt-secret-file", "", "require HS256 tokens signed with the secret in `FILE`, as serve --jwt-secret-file does (docs/auth.md)")
	heap := fs.Bool("heap", false, "also write PREFIX.heap.pprof at the end (after a GC, before the documents are unloaded)")
	fs.Parse(args)
	if err := benchproc.CheckLoopback(*addr); err != nil {
		return err
	}
	var st store.Store
	switch *storeKind {
	case "memory":
		st = memstore.New()
	case "sqlite":
		if *data == "" {
			return fmt.Errorf("-data is required with -store sqlite")
		}
		sync := sqlite.SyncNormal
		if *syncMode == "full" {
			sync = sqlite.SyncFull
		}
		s, err := sqlite.Open(filepath.Join(*data, "pmauthority.db"), sqlite.Options{Sync: sync})
		if err != nil {
			return err
		}
		st = s
	default:
		return fmt.Errorf("unknown store %q", *storeKind)
	}
	defer st.Close()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	auth, err := collab.New(collab.Config{
		Store:         st,
		Schemas:       func(name string) (*model.Schema, bool) { sc, err := schemas.Get(name); return sc, err == nil },
		DefaultSchema: "basic",
		AutoCreate:    true,
		Logger:        logger,
		Limits:        collab.Limits{MaxDocuments: 1_000_000_000, MaxCreatesPerHour: 1_000_000_000},
	})
	if err != nil {
		return err
	}
	defer auth.Close()
	// The loads open up to thousands of connections from one address.
	const unlimited = 1_000_000_000
	lim := server.Limits{MaxConns: unlimited, MaxClientConns: unlimited, MaxWSMessages: unlimited,
		MaxPresence: unlimited, MaxSubmissions: unlimited}
	cfg := server.Config{DefaultSchema: "basic", Logger: logger, Collab: auth, Limits: lim}
	if *secretFile != "" {
		if cfg.Policy, err = jwtPolicy(*secretFile, logger); err != nil {
			return err
		}
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	f, err := os.Create(*out + ".cpu.pprof")
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	if *contention {
		runtime.SetBlockProfileRate(10_000) // a sample every 10 µs blocked
		runtime.SetMutexProfileFraction(10)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Printf("listening on %s\n", ln.Addr())
	err = srv.Serve(ctx, ln)
	pprof.StopCPUProfile()
	if *heap {
		runtime.GC()
		if werr := writeProfile("heap", *out+".heap.pprof"); werr != nil && err == nil {
			err = werr
		}
	}
	if *contention {
		for _, name := range []string{"block", "mutex"} {
			if werr := writeProfile(name, *out+"."+name+".pprof"); werr != nil && err == nil {
				err = werr
			}
		}
	}
	return err
}

// jwtPolicy returns the policy of serve --jwt-secret-file file.
func jwtPolicy(file string, logger *slog.Logger) (server.Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	key, err := pmauth.SecretKey(bytes.TrimRight(data, " \t\r\n"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return pmauth.New(pmauth.Config{Keys: []pmauth.Key{key}, Logger: logger})
}

// writeProfile writes the named runtime profile to file.
func writeProfile(name, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup(name).WriteTo(f, 0)
}
