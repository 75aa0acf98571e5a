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
	"strconv"
	"strings"
	"syscall"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/server"
)

const serveUsage = `usage: pmauthority serve [--addr 127.0.0.1:8080] [--data ./pmauthority-data]
                         [--schema NAME=FILE]… [--default-schema basic] [flags]

Runs the HTTP server until SIGINT or SIGTERM, then stops gracefully: requests
in flight finish (up to --shutdown-timeout); a second signal exits at once.

  POST /  and  POST /v1/apply   {"doc": …, "steps": […], "schema"?: NAME} → {"doc": …}
  GET  /v1/schemas              the schema names and the default
  GET  /healthz                 {"status":"ok"}

Errors are JSON {"error": {"step"?: i, "message": "…"}}: 400 malformed or
invalid request, 404, 405, 413 over a limit, 415 not JSON, 422 a step fails
or the document is invalid for the schema.

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
	fs.String("data", "./pmauthority-data", "`directory` of the durable document store; not used yet (the store arrives with the collab API): nothing is read or written")
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
	slow := *logSlow
	if slow <= 0 {
		slow = -1
	}
	srv, err := server.New(server.Config{
		Schemas:       named.schemas,
		DefaultSchema: *def,
		Limits:        lim,
		Timeouts:      tmo,
		Logger:        slog.New(handler),
		ApplyWorkers:  *workers,
		LogRequests:   *logRequests,
		SlowRequest:   slow,
	})
	if err != nil {
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		return 2
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		return 1
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	if err := srv.Serve(ctx, ln); err != nil {
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		return 1
	}
	return 0
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
