package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

const verifyUsage = `usage: pmauthority verify [--store sqlite|postgres] [--data ./pmauthority-data]
                          [--postgres-url URL] [--schema NAME=FILE]… [flags]

Checks every stored document, one at a time: each kept snapshot must be a
document of its schema (give the --schema flags that serve has), stored as
its canonical JSON; its steps must follow on without a gap from the oldest
kept to its version and decode; from the oldest kept snapshot (the one at
the oldest kept step) every step must apply in order, and each later
snapshot must equal what the steps before it make; its comments must
decode, fit the document and replay through the steps.

Progress goes to stderr, the summary to stdout; with problems it lists the
first ones (document id, version, what) and exits 1. Run it on a stopped
server's --data, on a backup restored into a directory, or, with --store
postgres, beside the servers (each document is read in one transaction).

flags:
`

// runVerify runs `pmauthority verify`.
func runVerify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		storeKind, data string
		pg              postgresFlags
		named           schemaFlags
		maxProblems     int
		progress        time.Duration
	)
	fs.StringVar(&storeKind, "store", "sqlite", "document store: sqlite (in --data) or postgres (the database of --postgres-url)")
	fs.StringVar(&data, "data", "./pmauthority-data", "`directory` of the SQLite store, the file pmauthority.db")
	pg.register(fs)
	fs.Var(&named, "schema", "the schema spec in `NAME=FILE` (JSON) of the documents created with NAME; repeatable")
	fs.IntVar(&maxProblems, "max-problems", 20, "most problems listed (all are counted)")
	fs.DurationVar(&progress, "progress", 5*time.Second, "how often to report progress on stderr")
	fs.Usage = func() {
		fmt.Fprint(stderr, verifyUsage)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "pmauthority verify:", err)
		return code
	}
	switch {
	case storeKind != "sqlite" && storeKind != "postgres":
		return fail(2, fmt.Errorf("--store must be sqlite or postgres, not %q", storeKind))
	case maxProblems <= 0:
		return fail(2, errors.New("--max-problems must be positive"))
	case progress <= 0:
		return fail(2, errors.New("--progress must be positive"))
	}
	if err := pg.check(storeKind == "postgres"); err != nil {
		return fail(2, err)
	}
	reg, err := schemas.NewRegistry(named.schemas, "")
	if err != nil {
		return fail(2, err)
	}
	var st store.Store
	if storeKind == "postgres" {
		st, _, err = pg.open(slog.New(slog.NewTextHandler(stderr, nil)), nil)
	} else {
		path := filepath.Join(data, "pmauthority.db")
		if _, err = os.Stat(path); err != nil {
			err = fmt.Errorf("no store in --data %s: %w", data, err)
		} else {
			st, err = sqlite.Open(path, sqlite.Options{Reserve: -1}) // it only reads
		}
	}
	if err != nil {
		return fail(1, err)
	}
	defer st.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := verifyStore(ctx, st, collab.VerifyOptions{Schemas: reg.Lookup, MaxProblems: maxProblems}, progress, stderr)
	if err != nil {
		return fail(1, err)
	}
	sum.print(stdout, maxProblems)
	if sum.count > 0 {
		return 1
	}
	return 0
}

// verifySummary is what verifyStore checked and found.
type verifySummary struct {
	docs, steps, replayed int64
	snapshots, compared   int64
	comments              int64
	bad                   int64 // documents with problems
	count                 int   // problems
	problems              []collab.Problem
	took                  time.Duration
}

// verifyStore verifies every document of st, one at a time, reporting
// progress on w every progress. Its error is for the store as a whole
// (the list cannot be read, the context ended); a document that cannot
// be read is a problem.
func verifyStore(ctx context.Context, st store.Store, opts collab.VerifyOptions, progress time.Duration, w io.Writer) (verifySummary, error) {
	var sum verifySummary
	start := time.Now()
	list, err := st.List(ctx)
	if err != nil {
		return sum, err
	}
	last := start
	for i, d := range list {
		v, err := collab.Verify(ctx, st, d.ID, opts)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted since List
		}
		if ctx.Err() != nil {
			return sum, ctx.Err()
		}
		if err != nil {
			v.Count++
			v.Problems = append(v.Problems, collab.Problem{Doc: d.ID, Version: -1, What: fmt.Sprintf("cannot be read: %v", err)})
		}
		sum.docs++
		sum.steps += v.Steps
		sum.replayed += v.Replayed
		sum.snapshots += int64(v.Snapshots)
		sum.compared += int64(v.Compared)
		sum.comments += int64(v.Comments)
		if v.Count > 0 {
			sum.bad++
			sum.count += v.Count
			sum.problems = append(sum.problems, v.Problems[:min(len(v.Problems), opts.MaxProblems-len(sum.problems))]...)
		}
		if now := time.Now(); now.Sub(last) >= progress {
			last = now
			fmt.Fprintf(w, "pmauthority verify: %d of %d documents, %d steps, %d problems after %v\n", i+1, len(list), sum.steps, sum.count, since(start))
		}
	}
	sum.took = time.Since(start)
	return sum, nil
}

// print writes the summary and the first limit problems to w.
func (s verifySummary) print(w io.Writer, limit int) {
	fmt.Fprintf(w, "verified %d documents: %d steps (%d replayed on snapshots), %d snapshots (%d compared with the replay), %d comments in %v\n",
		s.docs, s.steps, s.replayed, s.snapshots, s.compared, s.comments, s.took.Round(time.Millisecond))
	if s.count == 0 {
		fmt.Fprintln(w, "OK")
		return
	}
	fmt.Fprintf(w, "%d problems in %d documents", s.count, s.bad)
	if len(s.problems) < s.count {
		fmt.Fprintf(w, ", the first %d", len(s.problems))
	}
	fmt.Fprintln(w, ":")
	for _, p := range s.problems[:min(len(s.problems), limit)] {
		fmt.Fprintln(w, "  "+p.String())
	}
}
