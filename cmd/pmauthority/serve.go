package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/store/sqlite"
	"github.com/pmauthority/pmauthority/web"
)

const serveUsage = `usage: pmauthority serve [--addr 127.0.0.1:8080] [--store sqlite|memory] [--data ./pmauthority-data]
                         [--schema NAME=FILE]… [--default-schema basic] [flags]

Runs the HTTP server until SIGINT or SIGTERM, then stops gracefully: requests
in flight finish (up to --shutdown-timeout), waiting polls answer {}, then the
documents are snapshotted and the store closed; a second signal exits at once.

  POST /  and  POST /v1/apply   {"doc": …, "steps": […], "schema"?: NAME} → {"doc": …}
  GET  /v1/schemas              the schema names and the default
  GET  /healthz                 {"status":"ok"}

The collab API of the ProseMirror website's collab demo (its client works
unchanged); a document is created, with the default schema, when first read:

  GET  /docs                    [{"id": …, "users": n}, …]
  GET  /docs/{id}               {"doc", "users", "version", "comments", "commentVersion"}
  GET  /docs/{id}/events?version=V&commentVersion=C
                                the steps and comment events after them, at once or
                                as soon as there are some ({} after --poll-timeout)
  POST /docs/{id}/events        {"version", "steps", "clientID", "comment"}
                                → {"version", "commentVersion"}

The demo pages (--web=false turns them off): GET / lists the documents and
opens new ones, GET /edit/{id} is an editor collaborating live.

Steps are acknowledged only once durable in the store (--store sqlite: the
file pmauthority.db in --data; --store memory keeps nothing).

Errors are JSON {"error": {"step"?: i, "message": "…"}}: 400 malformed or
invalid request ("Invalid version N": a version ahead of the document's), 404,
405, 409 "Version not current", 410 "History no longer available", 413 over a
limit, 415 not JSON, 422 a step fails or the document is invalid for the
schema (--strict also checks documents as Node.check() does).

Pages of other origins may use the API (WebSockets, CORS) only when their
host matches an --allow-origin pattern.

flags:
`

// runServe runs `pmauthority serve` until SIGINT or SIGTERM.
func runServe(args []string, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal kills the process
	}()
	return serve(ctx, args, stderr, nil)
}

// serve runs the server until ctx is done; ready, when set, is called with
// the address listened on.
func serve(ctx context.Context, args []string, stderr io.Writer, ready func(addr string)) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	lim, tmo := server.DefaultLimits(), server.DefaultTimeouts()
	addr := fs.String("addr", "127.0.0.1:8080", "`address` to listen on (host:port; port 0 picks a free port)")
	storeKind := fs.String("store", "sqlite", "document store: sqlite (durable, in --data) or memory (nothing survives the process)")
	data := fs.String("data", "./pmauthority-data", "`directory` of the SQLite store, the file pmauthority.db (created if missing)")
	syncMode := fs.String("sync", "full", "SQLite sync: full (an acknowledged step survives a power loss) or normal (it survives a crash of the process; faster)")
	history := fs.Int("history", 10_000, "steps kept in memory per document; a client further behind reloads (410)")
	snapshotEvery := fs.Int("snapshot-every", 1000, "snapshot a document after this many steps since the last snapshot")
	idleUnload := fs.Duration("idle-unload", 10*time.Minute, "unload documents idle for this long, snapshotting them (0: never)")
	pollTimeout := fs.Duration("poll-timeout", server.DefaultPollTimeout, "how long GET /docs/{id}/events waits for news before answering {}")
	trustProxy := fs.Bool("trust-proxy", false, "count users by the first X-Forwarded-For address (only behind a proxy that sets it)")
	strict := fs.Bool("strict", false, "also check every document against its schema as Node.check() does (content, marks, attributes), and refuse steps that make one invalid (422); off: what prosemirror-transform accepts, pmauthority accepts")
	webPages := fs.Bool("web", true, "serve the demo pages: GET / (the documents), /edit/{id} (a collaborative editor) and /assets/")
	var origins stringsFlag
	fs.Var(&origins, "allow-origin", "let pages of another origin whose host[:port] matches `PATTERN` (e.g. app.example.com, *.example.com, localhost:*) use the API: WebSockets and CORS; repeatable")
	var named schemaFlags
	fs.Var(&named, "schema", "serve the schema spec in `NAME=FILE` (JSON) under NAME; repeatable")
	def := fs.String("default-schema", "basic", "`name` of the schema of requests that name none (a built-in: basic, text; or a --schema NAME)")
	maxBody := sizeFlag(lim.MaxBodyBytes)
	fs.Var(&maxBody, "max-body", "largest request `size` (bytes, or with KiB, MiB, GiB); 413 above")
	fs.IntVar(&lim.MaxSteps, "max-steps", lim.MaxSteps, "most steps in one request; 413 above")
	fs.IntVar(&lim.MaxDocSize, "max-doc-size", lim.MaxDocSize, "largest document content size in positions, as given and after every step; 413 above")
	fs.IntVar(&lim.MaxDepth, "max-depth", lim.MaxDepth, "deepest nesting of JSON arrays and objects in a request; 400 above")
	maxHeader := sizeFlag(lim.MaxHeaderBytes)
	fs.Var(&maxHeader, "max-header", "largest request header `size`; 431 above")
	fs.DurationVar(&tmo.ReadHeader, "read-header-timeout", tmo.ReadHeader, "time allowed to read a request's header")
	fs.DurationVar(&tmo.Read, "read-timeout", tmo.Read, "time allowed to read a whole request, body included")
	fs.DurationVar(&tmo.Write, "write-timeout", tmo.Write, "time allowed from the end of a request's header to the end of its answer")
	fs.DurationVar(&tmo.Idle, "idle-timeout", tmo.Idle, "how long an idle kept-alive connection stays open")
	fs.DurationVar(&tmo.Shutdown, "shutdown-timeout", tmo.Shutdown, "how long requests in flight may take to finish on shutdown")
	workers := fs.Int("apply-workers", 0, "how many large requests (16 KiB or more) are applied at once; the others wait their turn (0: one per CPU, GOMAXPROCS)")
	logRequests := fs.Bool("log-requests", false, "log every request (by default only 5xx answers and slow requests are logged)")
	logSlow := fs.Duration("log-slow", server.DefaultSlowRequest, "log requests taking at least this long (0: never)")
	logFormat := fs.String("log-format", "text", "log format: text or json (log/slog, on stderr)")
	fs.Usage = func() {
		fmt.Fprint(stderr, serveUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *workers < 0 {
		fmt.Fprintln(stderr, "pmauthority serve: --apply-workers must not be negative")
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "pmauthority serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	lim.MaxBodyBytes, lim.MaxHeaderBytes = int64(maxBody), int(maxHeader)
	for name, v := range map[string]int64{"max-body": lim.MaxBodyBytes, "max-steps": int64(lim.MaxSteps),
		"max-doc-size": int64(lim.MaxDocSize), "max-depth": int64(lim.MaxDepth), "max-header": int64(lim.MaxHeaderBytes)} {
		if v <= 0 {
			fmt.Fprintf(stderr, "pmauthority serve: --%s must be positive\n", name)
			return 2
		}
	}
	var handler slog.Handler
	switch *logFormat {
	case "text":
		handler = slog.NewTextHandler(stderr, nil)
	case "json":
		handler = slog.NewJSONHandler(stderr, nil)
	default:
		fmt.Fprintf(stderr, "pmauthority serve: --log-format must be text or json, not %q\n", *logFormat)
		return 2
	}
	if *storeKind != "sqlite" && *storeKind != "memory" {
		fmt.Fprintf(stderr, "pmauthority serve: --store must be sqlite or memory, not %q\n", *storeKind)
		return 2
	}
	if *syncMode != "full" && *syncMode != "normal" {
		fmt.Fprintf(stderr, "pmauthority serve: --sync must be full or normal, not %q\n", *syncMode)
		return 2
	}
	for name, v := range map[string]int64{"history": int64(*history), "snapshot-every": int64(*snapshotEvery),
		"poll-timeout": int64(*pollTimeout)} {
		if v <= 0 {
			fmt.Fprintf(stderr, "pmauthority serve: --%s must be positive\n", name)
			return 2
		}
	}
	if *idleUnload < 0 {
		fmt.Fprintln(stderr, "pmauthority serve: --idle-unload must not be negative")
		return 2
	}
	if *idleUnload == 0 {
		*idleUnload = -1 // never, for collab.Config
	}
	slow := *logSlow
	if slow <= 0 {
		slow = -1
	}
	logger := slog.New(handler)
	cfg := server.Config{
		Schemas:       named.schemas,
		DefaultSchema: *def,
		Limits:        lim,
		Timeouts:      tmo,
		Logger:        logger,
		ApplyWorkers:  *workers,
		LogRequests:   *logRequests,
		SlowRequest:   slow,
		PollTimeout:   *pollTimeout,
		TrustProxy:    *trustProxy,
		Strict:        *strict,
		AllowOrigins:  origins,
	}
	if *webPages {
		cfg.Web = web.Handler()
	}
	// server.New checks the schemas; check them before the store is
	// opened, so that a bad flag leaves no data directory behind.
	if _, err := server.New(cfg); err != nil {
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		return 2
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		return 1
	}
	st, where, err := openStore(*storeKind, *data, *syncMode == "full")
	if err != nil {
		ln.Close()
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		return 1
	}
	auth, err := collab.New(collab.Config{
		Store:         st,
		Schemas:       schemaLookup(named.schemas),
		DefaultSchema: *def,
		AutoCreate:    true,
		History:       *history,
		SnapshotEvery: *snapshotEvery,
		IdleUnload:    *idleUnload,
		MaxSteps:      lim.MaxSteps,
		MaxDocSize:    lim.MaxDocSize,
		Strict:        *strict,
		Logger:        logger,
	})
	if err != nil {
		ln.Close()
		st.Close()
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		return 1
	}
	cfg.Collab = auth
	srv, err := server.New(cfg)
	if err != nil { // checked above: not expected
		ln.Close()
		auth.Close()
		st.Close()
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		return 2
	}
	logger.Info("store opened", "store", *storeKind, "path", where, "sync", *syncMode)
	if ready != nil {
		ready(ln.Addr().String())
	}
	code := 0
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		code = 1
	}
	// No request is running any more: snapshot the loaded documents,
	// then let the store finish its writes.
	if err := auth.Close(); err != nil {
		fmt.Fprintln(stderr, "pmauthority serve: closing the documents:", err)
		code = 1
	}
	if err := st.Close(); err != nil {
		fmt.Fprintln(stderr, "pmauthority serve: closing the store:", err)
		code = 1
	}
	return code
}

// openStore opens the document store of --store, returning where it is.
func openStore(kind, dir string, fullSync bool) (store.Store, string, error) {
	if kind == "memory" {
		return memstore.New(), "memory", nil
	}
	path := filepath.Join(dir, "pmauthority.db")
	sync := sqlite.SyncNormal
	if fullSync {
		sync = sqlite.SyncFull
	}
	st, err := sqlite.Open(path, sqlite.Options{Sync: sync})
	if err != nil {
		return nil, "", err
	}
	return st, path, nil
}

// schemaLookup returns the schema of a name: one of --schema, or a
// built-in.
func schemaLookup(named map[string]*model.Schema) func(string) (*model.Schema, bool) {
	return func(name string) (*model.Schema, bool) {
		if sc, ok := named[name]; ok {
			return sc, true
		}
		sc, err := schemas.Get(name)
		return sc, err == nil
	}
}

// schemaFlags collects --schema NAME=FILE, loading each file.
type schemaFlags struct {
	schemas map[string]*model.Schema
}

func (f *schemaFlags) String() string { return "" }

func (f *schemaFlags) Set(v string) error {
	name, file, ok := strings.Cut(v, "=")
	if !ok || name == "" || file == "" {
		return fmt.Errorf("want NAME=FILE, not %q", v)
	}
	if _, dup := f.schemas[name]; dup {
		return fmt.Errorf("schema %q given twice", name)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	sc, err := model.LoadSchema(data)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if f.schemas == nil {
		f.schemas = map[string]*model.Schema{}
	}
	f.schemas[name] = sc
	return nil
}

// sizeFlag is a byte count written as a number, optionally with a binary
// suffix (KiB, MiB, GiB).
type sizeFlag int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

func (s *sizeFlag) String() string {
	n := int64(*s)
	for _, u := range sizeUnits {
		if n != 0 && n%u.mult == 0 && u.mult > 1 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func (s *sizeFlag) Set(v string) error {
	num, mult := v, int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(v, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(v, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return fmt.Errorf("want a size in bytes such as 8388608 or 8MiB, not %q", v)
	}
	*s = sizeFlag(n * mult)
	return nil
}

// stringsFlag is a repeatable flag collecting its values.
type stringsFlag []string

func (f *stringsFlag) String() string { return strings.Join(*f, ",") }

func (f *stringsFlag) Set(v string) error {
	*f = append(*f, v)
	return nil
}
