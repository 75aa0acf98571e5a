package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/metrics"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/store/sqlite"
	"github.com/pmauthority/pmauthority/web"
	"github.com/pmauthority/pmauthority/webhook"
)

const serveUsage = `usage: pmauthority serve [--addr 127.0.0.1:8080] [--store sqlite|memory|postgres] [--data ./pmauthority-data]
                         [--schema NAME=FILE]… [--default-schema basic] [flags]

Runs the HTTP server until SIGINT or SIGTERM, then drains: /readyz answers
503 at once while the server goes on serving for --drain-delay (for a load
balancer to notice); then it stops accepting connections, waiting polls answer
{}, WebSockets are closed with 1012 (their clients reconnect and resend their
unconfirmed steps), requests in flight finish (up to --shutdown-timeout), the
documents are snapshotted and the store closed, and it exits 0. Past
--drain-timeout it exits 1 anyway; a second signal exits at once.

  POST /  and  POST /v1/apply   {"doc": …, "steps": […], "schema"?: NAME} → {"doc": …}
  GET  /v1/schemas              the schema names and the default
  GET  /healthz                 {"status":"ok"}: alive (503 when the store takes no writes)
  GET  /readyz                  {"status":"ok"}: ready for new clients (503 while draining)

The collab API of the ProseMirror website's collab demo (its client works
unchanged); a document is created, with the default schema, when first read
(unless --auto-create=false):

  GET  /docs                    [{"id", "users", "version", "updated"}, …]
  GET  /docs/{id}               {"doc", "users", "version", "comments", "commentVersion"}
  GET  /docs/{id}/events?version=V&commentVersion=C
                                the steps and comment events after them, at once or
                                as soon as there are some ({} after --poll-timeout)
  POST /docs/{id}/events        {"version", "steps", "clientID", "comment"}
                                → {"version", "commentVersion"}

The documents API, for an application's backend (docs/api.md):

  POST   /docs                  {"id"?, "schema"?, "doc"?} → 201 {"id", "version"}
  DELETE /docs/{id}             204; its editors are closed with 4404
  GET    /docs/{id}?version=N   {"doc", "version"}: any version still kept (--keep-steps)
  GET    /docs/{id}/steps?from=V&limit=K
                                the step log with client ids, authors and times
  POST   /docs/{id}/checkpoints {"name"}; GET lists them
  POST   /docs/{id}/restore     {"version"} or {"checkpoint"}: a new step
  GET    /docs/{id}/authors     who inserted each range of the document

The demo pages (--web=false turns them off): GET / lists the documents and
opens new ones, GET /edit/{id} is an editor collaborating live.

Steps are acknowledged only once durable in the store (--store sqlite: the
file pmauthority.db in --data; --store memory keeps nothing; --store postgres:
committed in the PostgreSQL database of --postgres-url, or of the environment
variable PMA_POSTGRES_URL, which keeps a password off the command line).
Several servers may share one PostgreSQL database: any serves any document,
and a step made on a version another server has moved on from answers 409.

Errors are JSON {"error": {"step"?: i, "message": "…"}}: 400 malformed or
invalid request ("Invalid version N": a version ahead of the document's), 404,
405, 409 "Version not current", 410 "History no longer available", 413 over a
limit, 415 not JSON, 422 a step fails or the document is invalid for the
schema (--strict also checks documents as Node.check() does), 503 with
Retry-After over --max-memory or --max-body-memory (try again later).

Without auth flags the server is open to anyone who reaches it, so it
listens only on a loopback --addr (unless --insecure-no-auth). With
--jwt-secret-file, --jwt-public-key, --jwks-url or --auth-webhook every
request needs a token (Authorization: Bearer, or the WebSocket hello's
"token") whose "docs" claim grants a role on the document: read, comment,
edit or admin (docs/auth.md; pmauthority token mints HS256 ones). 401: no
valid token (missing, malformed, bad signature, expired, not yet valid);
403: a valid token without the role. /healthz and the demo pages stay open,
and so does the apply endpoint unless --auth-apply.

With --webhook URL (and --webhook-secret-file), a document's changes, once
durable, are POSTed to URL as {"doc", "version", "updated"} (with
--webhook-include-doc also "document"), debounced per document, signed with
HMAC-SHA256 of the body (X-Pmauthority-Signature: sha256=HEX), with a delivery
id for deduplication (X-Pmauthority-Delivery) and the headers of Standard
Webhooks (webhook-id, webhook-timestamp, webhook-signature: v1,BASE64 of
the HMAC of id.timestamp.body), retried with back-off; editing never waits
for them (docs/operations.md).

Pages of other origins may use the API (WebSockets, CORS) only when their
host matches an --allow-origin pattern. Requests for a Host the server is
not reached by are refused with 421 (--allowed-host).

With --metrics-addr, Prometheus metrics (GET /metrics: pmauthority_*, Go's
and the process's) and Go's profiles (/debug/pprof/) are served on a
listener of their own, never on --addr (docs/operations.md). Every answer
carries X-Request-Id, which the request's log line has as request_id.

Every flag may also be given as the environment variable PMA_<FLAG>
(PMA_MAX_MEMORY=2GiB) or in the file of --config; the command line wins
over the environment, which wins over the file.

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
	f, err := parseServeFlags(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errReported):
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		return 2
	}
	cfg, err := f.configs(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		return 2
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		return 1
	}
	var mln net.Listener
	if f.metricsAddr != "" {
		if mln, err = net.Listen("tcp", f.metricsAddr); err != nil {
			ln.Close()
			fmt.Fprintln(stderr, "pmauthority serve: --metrics-addr:", err)
			return 1
		}
	}
	run, code, err := cfg.open()
	if err != nil {
		ln.Close()
		if mln != nil {
			mln.Close()
		}
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		return code
	}
	run.metricsLn = mln
	return run.serve(ctx, ln, stderr, ready)
}

// errReported is a command line error that package flag has already
// reported, with the usage.
var errReported = errors.New("bad flags")

// serveFlags are the flags of `pmauthority serve`: most of them set the
// fields of the server's and the authority's configurations directly.
type serveFlags struct {
	addr, storeKind, data, syncMode string
	postgres                        postgresFlags
	server                          server.Config // without Collab, Logger, Policy, Web, Observer
	collab                          collab.Config // without Store, Schemas, Logger, Observer
	webPages                        bool
	named                           schemaFlags
	maxMemory, maxBodyMemory        int64 // 0: the defaults (planMemory)
	logFormat                       string
	metricsAddr                     string
	auth                            authFlags
	drainTimeout                    time.Duration
	webhook                         webhookFlags
	unknownEnv                      []string          // PMA_ variables of no flag
	settingNames                    map[string]string // server.Config.SettingName's (names.go)
}

// The binary's own defaults of flags that the library leaves at zero.
const (
	defaultDrainDelay   = 5 * time.Second
	defaultDrainTimeout = 30 * time.Second
)

// parseServeFlags parses and checks the arguments of `pmauthority serve`.
// It returns flag.ErrHelp for -h, errReported when package flag reported
// the error, and other errors for the caller to report.
func parseServeFlags(args []string, stderr io.Writer) (*serveFlags, error) {
	f := &serveFlags{
		server: server.Config{Limits: server.DefaultLimits(), Timeouts: server.DefaultTimeouts()},
		collab: collab.Config{Limits: collab.DefaultLimits()},
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sc, cc := &f.server, &f.collab
	lim, doc, tmo := &sc.Limits, &cc.Limits, &sc.Timeouts
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "`address` to listen on (host:port; port 0 picks a free port)")
	fs.StringVar(&f.storeKind, "store", "sqlite", "document store: sqlite (durable, in --data), memory (nothing survives the process) or postgres (durable, in the database of --postgres-url, which several servers may share)")
	fs.StringVar(&f.data, "data", "./pmauthority-data", "`directory` of the SQLite store, the file pmauthority.db (created if missing)")
	fs.StringVar(&f.syncMode, "sync", "full", "SQLite sync: full (an acknowledged step survives a power loss) or normal (it survives a crash of the process; faster)")
	f.postgres.register(fs)
	fs.IntVar(&cc.History, "history", collab.DefaultHistory, "steps kept in memory per document; a client further behind reloads (410)")
	fs.IntVar(&cc.SnapshotEvery, "snapshot-every", collab.DefaultSnapshotEvery, "snapshot a document after this many steps since the last snapshot")
	fs.Int64Var(&cc.KeepSteps, "keep-steps", 0, "steps the store keeps behind the latest version, for past versions (GET /docs/{id}?version=N, /steps, /authors; 410 beyond) and clients catching up; pruning stops at a snapshot, and checkpoints keep their version (0: as many as --history; -1: all)")
	fs.BoolVar(&cc.AutoCreate, "auto-create", true, "create a document, with the default schema, when a request first uses it (as the collab demo does); false: an unknown document answers 404 (WebSocket close 4404) and only POST /docs creates")
	fs.DurationVar(&cc.IdleUnload, "idle-unload", collab.DefaultIdleUnload, "unload documents idle for this long, snapshotting them (0: never)")
	fs.DurationVar(&sc.PollTimeout, "poll-timeout", server.DefaultPollTimeout, "how long GET /docs/{id}/events waits for news before answering {}")
	fs.BoolVar(&sc.TrustProxy, "trust-proxy", false, "count users, and clients without a token, by X-Forwarded-For (only behind a proxy that sets or appends to it): its right-most address that is not a --trusted-proxies one")
	fs.Var((*prefixesFlag)(&sc.TrustedProxies), "trusted-proxies", "the addresses of the proxies, as `CIDR,…` (e.g. 10.0.0.0/8,192.0.2.7; repeatable), whose X-Forwarded-For is believed, and whose connections are not limited per address; implies --trust-proxy. Default with --trust-proxy: the connection's peer, whatever its address, as the one proxy")
	fs.IntVar(&lim.MaxHTTPConns, "max-http-conns", lim.MaxHTTPConns, "most connections open at once, of every kind (kept-alive, requests, waiting long polls, WebSockets); over it the connection idle longest is closed, and when none is idle the new one is answered 503 (0: three quarters of the open-file limit, at most an eighth of --max-memory at 24KiB each)")
	fs.IntVar(&lim.MaxHTTPConnsPerAddress, "max-http-conns-per-address", lim.MaxHTTPConnsPerAddress, "most connections open at once from one address (IPv6 by /64), a trusted proxy's excepted; over it that address's connection idle longest is closed, and when none is idle the new one is answered 429 (0: a quarter of --max-http-conns)")
	fs.BoolVar(&cc.Strict, "strict", false, "also check every document against its schema as Node.check() does (content, marks, attributes), and refuse steps that make one invalid (422); off: what prosemirror-transform accepts, pmauthority accepts")
	fs.BoolVar(&f.webPages, "web", true, "serve the demo pages: GET / (the documents), /edit/{id} (a collaborative editor) and /assets/")
	fs.Var((*stringsFlag)(&sc.AllowedHosts), "allowed-host", "answer only requests whose Host matches `PATTERN` (e.g. pma.example.com, *.example.com; with or without :port), others 421; repeatable. Default: on a loopback --addr, localhost and loopback addresses only (against DNS rebinding); otherwise any host")
	fs.Var((*stringsFlag)(&sc.AllowOrigins), "allow-origin", "let pages of another origin whose host[:port] matches `PATTERN` (e.g. app.example.com, *.example.com, localhost:*) use the API: WebSockets and CORS; repeatable")
	fs.Var(&f.named, "schema", "serve the schema spec in `NAME=FILE` (JSON) under NAME; repeatable")
	fs.StringVar(&cc.DefaultSchema, "default-schema", "basic", "`name` of the schema of requests that name none (a built-in: basic, suggest, text; or a --schema NAME)")
	fs.Var((*sizeFlag)(&lim.MaxBodyBytes), "max-body", "largest request `size` (bytes, or with KiB, MiB, GiB); 413 above")
	fs.IntVar(&doc.MaxSteps, "max-steps", doc.MaxSteps, "most steps in one request; 413 above")
	fs.IntVar(&doc.MaxDocSize, "max-doc-size", doc.MaxDocSize, "largest document content size in positions, as given and after every step; 413 above")
	fs.Var((*sizeFlag)(&doc.MaxDocBytes), "max-doc-bytes", "largest document `size` in bytes of its JSON, as given and after every step (the apply endpoint, the collab API and WebSockets); 413 above")
	fs.Var((*intSizeFlag)(&doc.MaxCommentBytes), "max-comment-bytes", "largest `size` of one document's comments (their texts as JSON plus 192 bytes each and 120 per reply, which bounds them in GET /docs/{id}); 413 for a comment beyond it")
	fs.IntVar(&lim.MaxDepth, "max-depth", lim.MaxDepth, "deepest nesting of JSON arrays and objects in a request; 400 above")
	fs.Var((*intSizeFlag)(&lim.MaxHeaderBytes), "max-header", "largest request header `size`; 431 above")
	fs.IntVar(&lim.MaxConns, "max-conns", lim.MaxConns, "most WebSockets and waiting long polls at once, in all; 429 above")
	fs.IntVar(&lim.MaxClientConns, "max-client-conns", lim.MaxClientConns, "most WebSockets and waiting long polls at once from one client (its principal, else its address); 429 above")
	fs.IntVar(&lim.MaxWSMessages, "max-ws-messages", lim.MaxWSMessages, "most messages per second from one WebSocket (twice as many in a burst); above: error 429 and close 4029")
	fs.IntVar(&lim.MaxPresence, "max-presence", lim.MaxPresence, "most presence messages per second handled for one WebSocket; those above are coalesced (the latest is handled later)")
	fs.Var((*intSizeFlag)(&lim.MaxPresenceData), "max-presence-data", "largest \"data\" (the client's own presence fields) of a WebSocket hello, `size` of its JSON, at most 4KiB; above: error 400 and close 1008")
	fs.IntVar(&lim.MaxSubmissions, "max-submissions", lim.MaxSubmissions, "most submissions (POST events, WebSocket steps) per second from one client (twice as many in a burst); 429 above")
	fs.IntVar(&doc.MaxDocuments, "max-documents", doc.MaxDocuments, "most documents in the store (counted at the first creation, then this server's creations and deletions); creating one more: 507")
	fs.IntVar(&doc.MaxCreatesPerHour, "max-creates", doc.MaxCreatesPerHour, "most documents one client creates per hour (as many at once), by using them or with POST /docs; 429 above")
	fs.IntVar(&doc.MaxClientDocuments, "max-client-documents", doc.MaxClientDocuments, "most documents one client (its principal, else its address) has created through this server since it started, less those deleted since; creating one more: 507. Default: a quarter of --max-documents")
	fs.IntVar(&doc.MaxChangesSteps, "max-changes-steps", doc.MaxChangesSteps, "most steps between the two versions of GET /docs/{id}/changes (to-from); 413 above")
	fs.Int64Var(&doc.MaxChangesDiff, "max-changes-diff", doc.MaxChangesDiff, "most work of the diffs of one GET /docs/{id}/changes, in tokens read and compared (about 100 million a second); 413 above")
	fs.IntVar(&doc.MaxCheckpoints, "max-checkpoints", doc.MaxCheckpoints, "most checkpoints of one document (each at a new version keeps a copy of the document); 413 above")
	fs.Var((*sizeFlag)(&doc.MaxDocStorage), "max-doc-storage", "most bytes (a `size`) one document holds in the store: its steps, snapshots, checkpoints (one copy per version) and comments; a change or checkpoint beyond it: 507 (delete the document to free them)")
	fs.Var((*sizeFlag)(&doc.MaxClientStorage), "max-client-storage", "most bytes (a `size`) one client (its principal, else its address) adds to the store per day (as many at once), with steps, comments and checkpoints; beyond it: 507 with Retry-After")
	fs.Var((*intSizeFlag)(&lim.MaxEditMarkdown), "max-edit-markdown", "most bytes (a `size`) of the Markdown of one edit of POST /docs/{id}/edits; over it: 413")
	fs.IntVar(&lim.MaxStepsPage, "max-steps-page", lim.MaxStepsPage, "most steps of one page of GET /docs/{id}/steps (a larger ?limit is taken as it)")
	fs.Var((*sizeFlag)(&lim.MaxStepsPageBytes), "max-steps-page-bytes", "most bytes of steps (a `size`) in one page of GET /docs/{id}/steps: a page stops before the step that would take it over (its \"next\" continues), but always has its first step")
	fs.IntVar(&lim.MaxClientAnswers, "max-client-answers", lim.MaxClientAnswers, "most answers of 1 MiB or more being built or written for one client (its principal, else its address) at once; 429 above. Every answer is reserved in the memory budget of the documents until written (503 when it does not fit)")
	fs.DurationVar(&tmo.ReadHeader, "read-header-timeout", tmo.ReadHeader, "time allowed to read a request's header")
	fs.DurationVar(&tmo.Read, "read-timeout", tmo.Read, "time allowed to read a whole request, body included")
	fs.DurationVar(&tmo.Write, "write-timeout", tmo.Write, "time allowed from the end of a request's header to the end of its answer")
	fs.DurationVar(&tmo.Idle, "idle-timeout", tmo.Idle, "how long an idle kept-alive connection stays open")
	fs.DurationVar(&tmo.Shutdown, "shutdown-timeout", tmo.Shutdown, "how long requests in flight may take to finish on shutdown")
	fs.DurationVar(&sc.DrainDelay, "drain-delay", defaultDrainDelay, "on SIGTERM or SIGINT, how long to go on serving with /readyz answering 503 before no more connections are accepted (0: none). On a loopback --addr it is 0 unless given")
	fs.DurationVar(&f.drainTimeout, "drain-timeout", defaultDrainTimeout, "on SIGTERM or SIGINT, how long the whole drain may take (delay, requests in flight, closing the store); past it the process exits 1")
	fs.Var((*sizeFlag)(&doc.MaxClientMemory), "max-client-memory", "most memory (a `size`, estimated) that the documents one client (its principal, else its address) has in use (its requests, waiting polls and WebSockets) may hold together; beyond it that client's loads, polls, WebSockets and growing submissions answer 503 (Retry-After), unless the document is the only one it uses. Default: a quarter of the loaded documents' share of --max-memory (an eighth of --max-memory)")
	fs.Var((*sizeFlag)(&f.maxMemory), "max-memory", "memory budget (a `size`) of the process, its Go soft memory limit; the loaded documents may hold half of it (estimated): beyond that idle documents are unloaded, then loads and submissions answer 503 (Retry-After), a document over a quarter of it 413. Default: 70% of the cgroup's memory limit, else of the machine's memory")
	fs.Var((*sizeFlag)(&f.maxBodyMemory), "max-body-memory", "memory budget (a `size`) of the request bodies being read or held, all together; beyond it requests wait briefly, then answer 503 (Retry-After). Default: an eighth of --max-memory, at most 256MiB")
	fs.IntVar(&sc.ApplyWorkers, "apply-workers", 0, "how many large requests (16 KiB or more) are applied at once; the others wait their turn (0: one per CPU, GOMAXPROCS)")
	fs.BoolVar(&sc.LogRequests, "log-requests", false, "log every request (by default only 5xx answers and slow requests are logged)")
	fs.DurationVar(&sc.SlowRequest, "log-slow", server.DefaultSlowRequest, "log requests taking at least this long (0: never)")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json (log/slog, on stderr); a request's line carries its request_id (its X-Request-Id, else generated; echoed in the answer's X-Request-Id) and its doc")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics (GET /metrics) and Go's profiles (/debug/pprof/) on this `address` (host:port, e.g. 127.0.0.1:9090), a listener of their own without auth: keep it private (docs/operations.md). Default: none")
	f.auth.register(fs)
	f.webhook.register(fs)
	fs.String(configFlag, "", "read flags from `FILE`, one a line: a flag's name and its value (max-memory 2GiB; strict alone means strict true; # starts a comment; a repeatable flag on several lines). A flag given on the command line wins over its PMA_<FLAG> environment variable (PMA_MAX_MEMORY=2GiB), which wins over the file (docs/operations.md)")
	f.settingNames = settingNames(fs, f)
	// Package flag reports nothing itself: -h prints every flag, an error
	// a short usage.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprint(stderr, serveUsage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	if cmdline, err := parseSources(fs, args); err != nil {
		switch {
		case errors.Is(err, flag.ErrHelp):
			fs.Usage()
			return nil, err
		case cmdline:
			shortUsage(stderr, fs, err)
			return nil, errReported
		}
		return nil, err
	}
	f.unknownEnv = unknownEnv(fs, os.Environ())
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if !given["drain-delay"] && loopbackAddr(f.addr) {
		// Nothing balances load to a loopback address: stopping a
		// server run by hand (Ctrl-C) does not wait.
		sc.DrainDelay = 0
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	if err := f.auth.check(f.addr); err != nil {
		return nil, err
	}
	if err := f.webhook.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// check checks the values of f's flags, and turns those of their zeros
// that mean "never" into the configurations' negatives.
func (f *serveFlags) check() error {
	sc, cc := &f.server, &f.collab
	lim, doc := sc.Limits, cc.Limits
	if sc.ApplyWorkers < 0 {
		return errors.New("--apply-workers must not be negative")
	}
	if lim.MaxPresenceData > server.MaxPresenceDataLimit {
		return fmt.Errorf("--max-presence-data is %d bytes: at most %d (a presence entry must fit in one message between nodes)", lim.MaxPresenceData, server.MaxPresenceDataLimit)
	}
	if doc.MaxClientDocuments < 0 {
		return errors.New("--max-client-documents must not be negative")
	}
	if lim.MaxStepsPageBytes <= 0 || lim.MaxClientAnswers <= 0 {
		return errors.New("--max-steps-page-bytes and --max-client-answers must be positive")
	}
	for name, v := range map[string]int64{"max-body": lim.MaxBodyBytes, "max-steps": int64(doc.MaxSteps),
		"max-comment-bytes": int64(doc.MaxCommentBytes), "max-doc-size": int64(doc.MaxDocSize), "max-doc-bytes": doc.MaxDocBytes,
		"max-depth": int64(lim.MaxDepth), "max-header": int64(lim.MaxHeaderBytes),
		"max-conns": int64(lim.MaxConns), "max-client-conns": int64(lim.MaxClientConns), "max-ws-messages": int64(lim.MaxWSMessages),
		"max-presence": int64(lim.MaxPresence), "max-presence-data": int64(lim.MaxPresenceData), "max-submissions": int64(lim.MaxSubmissions),
		"max-documents": int64(doc.MaxDocuments), "max-creates": int64(doc.MaxCreatesPerHour),
		"max-checkpoints": int64(doc.MaxCheckpoints), "max-changes-steps": int64(doc.MaxChangesSteps), "max-changes-diff": doc.MaxChangesDiff, "max-steps-page": int64(lim.MaxStepsPage), "max-edit-markdown": int64(lim.MaxEditMarkdown),
		"max-doc-storage": doc.MaxDocStorage, "max-client-storage": doc.MaxClientStorage} {
		if v <= 0 {
			return fmt.Errorf("--%s must be positive", name)
		}
	}
	if lim.MaxHTTPConns < 0 || lim.MaxHTTPConnsPerAddress < 0 {
		return errors.New("--max-http-conns and --max-http-conns-per-address must not be negative (0: the default)")
	}
	if len(sc.TrustedProxies) > 0 {
		sc.TrustProxy = true
	}
	if f.logFormat != "text" && f.logFormat != "json" {
		return fmt.Errorf("--log-format must be text or json, not %q", f.logFormat)
	}
	if err := checkMetricsAddr(f.metricsAddr, f.addr); err != nil {
		return err
	}
	if f.storeKind != "sqlite" && f.storeKind != "memory" && f.storeKind != "postgres" {
		return fmt.Errorf("--store must be sqlite, memory or postgres, not %q", f.storeKind)
	}
	if err := f.postgres.check(f.storeKind == "postgres"); err != nil {
		return err
	}
	if f.syncMode != "full" && f.syncMode != "normal" {
		return fmt.Errorf("--sync must be full or normal, not %q", f.syncMode)
	}
	for name, v := range map[string]int64{"history": int64(cc.History), "snapshot-every": int64(cc.SnapshotEvery),
		"poll-timeout": int64(sc.PollTimeout)} {
		if v <= 0 {
			return fmt.Errorf("--%s must be positive", name)
		}
	}
	if cc.IdleUnload < 0 {
		return errors.New("--idle-unload must not be negative")
	}
	if cc.KeepSteps < -1 {
		return errors.New("--keep-steps must be -1 (all), 0 (as many as --history) or positive")
	}
	if sc.DrainDelay < 0 {
		return errors.New("--drain-delay must not be negative")
	}
	if f.drainTimeout <= sc.DrainDelay {
		return fmt.Errorf("--drain-timeout (%v) must be longer than --drain-delay (%v)", f.drainTimeout, sc.DrainDelay)
	}
	if cc.IdleUnload == 0 {
		cc.IdleUnload = -1 // never, for collab.Config
	}
	if sc.SlowRequest <= 0 {
		sc.SlowRequest = -1 // never, for server.Config
	}
	return nil
}

// serveConfigs are the configurations that serve runs with, built from
// its flags.
type serveConfigs struct {
	storeKind, data string
	syncMode        string // full or normal
	postgres        postgresFlags
	logger          *slog.Logger
	memory          memoryPlan
	server          server.Config // without Collab
	collab          collab.Config // without Store
	drainTimeout    time.Duration
	webhook         *webhook.Config // nil: none
	webhookDoc      bool
	registry        *prometheus.Registry
	metrics         *metrics.Metrics // nil without --metrics-addr
}

// configs builds the configurations of f, logging on stderr, and checks
// them as far as possible without opening anything.
func (f *serveFlags) configs(stderr io.Writer) (*serveConfigs, error) {
	reg, err := schemas.NewRegistry(f.named.schemas, f.collab.DefaultSchema)
	if err != nil {
		return nil, err
	}
	var handler slog.Handler = slog.NewTextHandler(stderr, nil)
	if f.logFormat == "json" {
		handler = slog.NewJSONHandler(stderr, nil)
	}
	c := &serveConfigs{
		storeKind: f.storeKind,
		data:      f.data,
		syncMode:  f.syncMode,
		postgres:  f.postgres,
		logger:    slog.New(handler),
		memory:    planMemory("/", f.maxMemory, f.maxBodyMemory),

		drainTimeout: f.drainTimeout,
	}
	for _, v := range f.unknownEnv {
		c.logger.Warn("environment variable of no flag, ignored", "var", v)
	}
	c.server, c.collab = f.server, f.collab
	cc, sc := &c.collab, &c.server
	cc.Schemas, cc.DefaultSchema, cc.Logger = reg.Lookup, reg.Default(), c.logger
	cc.MaxMemory = c.memory.docMemory
	sc.Schemas, sc.DefaultSchema, sc.Logger = f.named.schemas, reg.Default(), c.logger
	sc.Limits.MaxBodyMemory = c.memory.bodyMemory
	names := f.settingNames
	sc.SettingName = func(setting string) string { return names[setting] }
	// The apply endpoint goes by the documents' limits, and checks its
	// documents as the authority does.
	sc.ApplyLimits, sc.Strict = cc.Limits.Limits, cc.Strict
	if f.webPages {
		sc.Web = web.Handler()
	}
	if sc.Policy, err = f.auth.policy(c.logger); err != nil {
		return nil, err
	}
	if c.webhook, err = f.webhook.config(c.logger); err != nil {
		return nil, err
	}
	c.webhookDoc = f.webhook.includeDoc
	if f.metricsAddr != "" {
		if c.registry, c.metrics, err = newMetrics(); err != nil {
			return nil, err
		}
		c.server.Observer = c.metrics
		c.collab.Observer = c.metrics
	}
	// Check the rest (the origins) before the store is opened, so that
	// a bad flag leaves no data directory behind.
	if err := c.server.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// serveRun is a server ready to run: its store, authority and server.
type serveRun struct {
	logger    *slog.Logger
	memory    memoryPlan
	store     store.Store
	storeKind string
	where     string // the store's path, or "memory"
	syncMode  string
	auth      *collab.Authority
	srv       *server.Server
	webhook   *webhook.Sender // nil: none
	// webhookFlush bounds the delivery of the notices pending at exit.
	webhookFlush time.Duration
	webhookURL   string // redacted

	drainTimeout time.Duration
	registry     *prometheus.Registry
	metricsLn    net.Listener // --metrics-addr, or nil
}

// open opens the store, then the authority and the server over it. On
// failure it closes what it opened and returns the exit status.
func (c *serveConfigs) open() (*serveRun, int, error) {
	st, where, err := c.openStore()
	if err != nil {
		return nil, 1, err
	}
	ccfg := c.collab
	ccfg.Store = st
	var auth *collab.Authority
	hook, err := openWebhook(c.webhook, c.webhookDoc, &auth, st)
	if err != nil { // checked by configs: not expected
		st.Close()
		return nil, 2, err
	}
	if hook != nil {
		ccfg.AfterCommit = hook.AfterCommit
	}
	auth, err = collab.New(ccfg)
	if err != nil {
		if hook != nil {
			hook.Close(context.Background())
		}
		st.Close()
		return nil, 1, err
	}
	scfg := c.server
	scfg.Collab = auth
	srv, err := server.New(scfg)
	if err != nil { // checked by configs (Config.Check): not expected
		auth.Close()
		if hook != nil {
			hook.Close(context.Background())
		}
		st.Close()
		return nil, 2, err
	}
	run := &serveRun{logger: c.logger, memory: c.memory, store: st, storeKind: c.storeKind, where: where, syncMode: c.syncMode, auth: auth, srv: srv,
		webhook: hook, drainTimeout: c.drainTimeout, registry: c.registry}
	if c.webhook != nil {
		run.webhookFlush = c.webhook.Timeout
		run.webhookURL = redactURL(c.webhook.URL)
	}
	return run, 0, nil
}

// serve serves on ln until ctx is done, then closes the authority and the
// store, and returns the exit status.
func (r *serveRun) serve(ctx context.Context, ln net.Listener, stderr io.Writer, ready func(addr string)) int {
	if r.storeKind == "postgres" {
		r.logger.Info("store opened", "store", r.storeKind, "database", r.where)
	} else {
		r.logger.Info("store opened", "store", r.storeKind, "path", r.where, "sync", r.syncMode)
	}
	r.setMemoryLimit()
	if r.webhook != nil {
		r.logger.Info("webhook on", "url", r.webhookURL)
	}
	var ml *metricsListener
	if r.metricsLn != nil {
		ml = serveMetrics(r.metricsLn, r.registry, r.logger)
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	finished := make(chan struct{})
	defer close(finished)
	go r.bound(ctx, finished)
	code := 0
	if err := r.srv.Serve(ctx, ln); err != nil {
		fmt.Fprintln(stderr, "pmauthority serve:", err)
		code = 1
	}
	// No request is running any more: snapshot the loaded documents,
	// then let the store finish its writes.
	if err := r.auth.Close(); err != nil {
		fmt.Fprintln(stderr, "pmauthority serve: closing the documents:", err)
		code = 1
	}
	if r.webhook != nil {
		// The authority ran its last commits' hooks: deliver what is
		// pending at once.
		wctx, cancel := context.WithTimeout(context.Background(), r.webhookFlush)
		if err := r.webhook.Close(wctx); err != nil {
			r.logger.Warn("webhook notices left undelivered", "err", err)
		}
		cancel()
	}
	if err := r.store.Close(); err != nil {
		fmt.Fprintln(stderr, "pmauthority serve: closing the store:", err)
		code = 1
	}
	if ml != nil {
		if err := ml.stop(); err != nil {
			fmt.Fprintln(stderr, "pmauthority serve: --metrics-addr:", err)
			code = 1
		}
	}
	return code
}

// exitProcess ends the process (os.Exit; tests replace it).
var exitProcess = os.Exit

// bound exits the process with status 1 when the drain that starts when
// ctx is done has not finished --drain-timeout later.
func (r *serveRun) bound(ctx context.Context, finished <-chan struct{}) {
	select {
	case <-ctx.Done():
	case <-finished:
		return
	}
	t := time.NewTimer(r.drainTimeout)
	defer t.Stop()
	select {
	case <-t.C:
		r.logger.Error("drain timeout: exiting before the drain finished", "drain_timeout", r.drainTimeout)
		exitProcess(1)
	case <-finished:
	}
}

// openStore opens the document store of --store, returning where it is.
func (c *serveConfigs) openStore() (store.Store, string, error) {
	kind, dir, fullSync := c.storeKind, c.data, c.syncMode == "full"
	var obs store.CommitObserver
	if c.metrics != nil {
		obs = c.metrics
	}
	if kind == "postgres" {
		return c.postgres.open(c.logger, obs)
	}
	if kind == "memory" {
		// This process is its only writer: the store is served through
		// the Store interface alone, without memstore's notices and
		// conditional appends, which are for writers that share it.
		return struct{ store.Store }{memstore.New()}, "memory", nil
	}
	path := filepath.Join(dir, "pmauthority.db")
	sync := sqlite.SyncNormal
	if fullSync {
		sync = sqlite.SyncFull
	}
	st, err := sqlite.Open(path, sqlite.Options{Sync: sync, Observer: obs})
	if err != nil {
		return nil, "", err
	}
	return st, path, nil
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

// intSizeFlag is a sizeFlag of an int field.
type intSizeFlag int

func (s *intSizeFlag) String() string {
	n := sizeFlag(*s)
	return n.String()
}

func (s *intSizeFlag) Set(v string) error {
	var n sizeFlag
	if err := n.Set(v); err != nil {
		return err
	}
	if int64(int(n)) != int64(n) {
		return fmt.Errorf("size %q too large", v)
	}
	*s = intSizeFlag(n)
	return nil
}

// prefixesFlag collects network prefixes (CIDR, or single addresses),
// comma-separated; repeatable.
type prefixesFlag []netip.Prefix

func (f *prefixesFlag) String() string {
	s := make([]string, len(*f))
	for i, p := range *f {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

func (f *prefixesFlag) Set(v string) error {
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		p, err := netip.ParsePrefix(item)
		if err != nil {
			ip, err2 := netip.ParseAddr(item)
			if err2 != nil {
				return fmt.Errorf("want CIDR prefixes or addresses such as 10.0.0.0/8,192.0.2.7, not %q", item)
			}
			p = netip.PrefixFrom(ip, ip.BitLen())
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		*f = append(*f, p.Masked())
	}
	return nil
}

// stringsFlag is a repeatable flag collecting its values.
type stringsFlag []string

func (f *stringsFlag) String() string { return strings.Join(*f, ",") }

func (f *stringsFlag) Set(v string) error {
	*f = append(*f, v)
	return nil
}
