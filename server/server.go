package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/export"
	"github.com/pmauthority/pmauthority/internal/bytesize"
	"github.com/pmauthority/pmauthority/internal/connlimit"
	"github.com/pmauthority/pmauthority/internal/defaults"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
)

// Config configures a Server. The zero value serves the built-in schemas
// with "basic" as the default, the default limits and timeouts, and logs
// to slog.Default().
type Config struct {
	// Schemas are served by name besides the built-ins (serve --schema
	// NAME=FILE). A name may not be a built-in's.
	Schemas map[string]*model.Schema
	// DefaultSchema is the schema of requests that name none ("" means
	// "basic").
	DefaultSchema string
	// Limits bound the requests, connections and messages of clients
	// (limits.go); zero fields take the defaults.
	Limits Limits
	// ApplyLimits bound the documents of the apply endpoint (POST /,
	// POST /v1/apply); zero fields take apply's defaults. The collab and
	// documents APIs, and WebSockets, go by their authority's
	// (collab.Limits).
	ApplyLimits apply.Limits
	// Timeouts bound each connection; zero fields take the defaults.
	Timeouts Timeouts
	// Logger gets the startup line, the access log and errors (nil means
	// slog.Default()).
	Logger *slog.Logger
	// LogRequests logs every request. Without it only requests answered
	// with a 5xx status and slow requests are logged, which keeps the
	// hot path quiet.
	LogRequests bool
	// ApplyWorkers bounds how many large requests (bodies of 16 KiB or
	// more) are applied at once; 0 means GOMAXPROCS. The others wait
	// their turn holding only their body, so that memory stays bounded
	// however many clients send large documents at once, and each request
	// finishes sooner than if all shared the CPUs. Small requests, whose
	// cost is mostly HTTP, never wait.
	ApplyWorkers int
	// SlowRequest is the duration from which a request is logged as slow
	// (0 means DefaultSlowRequest, negative never). A long poll's wait
	// does not count.
	SlowRequest time.Duration

	// Collab serves the collab API (GET /docs, GET /docs/{id},
	// GET and POST /docs/{id}/events) on this authority; nil leaves those
	// routes unanswered (404). The caller closes it after Serve returns.
	Collab *collab.Authority
	// PollTimeout is how long GET /docs/{id}/events waits for news before
	// answering {} (0 means DefaultPollTimeout). Waiting requests get
	// their own connection deadlines, so it may exceed Timeouts.Write.
	PollTimeout time.Duration
	// TrustProxy takes the client's address, which the user counts and
	// the limits of clients without a principal go by, from
	// X-Forwarded-For instead of the connection, when the connection
	// comes from a trusted proxy: the right-most entry that is not a
	// trusted proxy's, since a proxy appends the address it got the
	// request from and everything left of that is what the client sent
	// (see user). Set it only behind a proxy that sets or appends to that
	// header.
	TrustProxy bool
	// TrustedProxies are the addresses of the proxies that TrustProxy
	// trusts (a single address is a /32 or /128 prefix). Empty: the
	// connection's peer, whatever its address, is the one proxy trusted,
	// and the right-most entry of X-Forwarded-For is the client. Their
	// connections are not limited per address (MaxHTTPConnsPerAddress);
	// with TrustProxy and no TrustedProxies no connection is.
	TrustedProxies []netip.Prefix
	// Strict also checks the apply endpoint's documents against their
	// schema, as Node.check() does (see apply.Applier.Strict). The
	// collab API's documents are checked by its authority's own
	// collab.Config.Strict.
	Strict bool
	// AllowOrigins are host patterns (path.Match syntax, matched against
	// the host[:port] of a request's Origin, case-insensitively: e.g.
	// "app.example.com", "*.example.com", "localhost:*") of the pages of
	// other origins that may use the API: their WebSocket upgrades are
	// accepted (same-origin ones always are) and the HTTP answers carry
	// CORS headers for them, preflights included. Empty: same origin only.
	AllowOrigins []string
	// AllowedHosts are the host patterns (path.Match syntax, matched
	// against a request's Host header, host[:port], case-insensitively:
	// e.g. "pma.example.com", "*.example.com") by which the server may be
	// reached; a request for another host is refused with 421 (DNS
	// rebinding: a page of an attacker's domain that resolves to this
	// server). Empty: when Serve listens on a loopback address, only
	// localhost and loopback addresses (any port); otherwise any host.
	AllowedHosts []string

	// Web serves the demo pages (GET and HEAD of /, /edit/{id} and
	// /assets/…), normally web.Handler(); nil leaves those paths
	// unanswered (GET / answers 405). POST / stays the apply endpoint.
	// Other paths under /edit/ and /assets/, and other methods on them,
	// go to Web too, which answers them (404, 405).
	Web http.Handler

	// Policy is the policy point that every route and every WebSocket
	// message passes (see Policy); nil means AllowAll.
	Policy Policy

	// DrainDelay is how long Serve goes on serving once its context is
	// done, /readyz answering 503, before it stops accepting connections:
	// the time a load balancer takes to see the server unready and send
	// new clients elsewhere (0: none). See Drain.
	DrainDelay time.Duration
	// Observer, when not nil, is told every request, submission and
	// connection, for metrics (see Observer; package metrics implements
	// it with Prometheus).
	Observer Observer
	// SettingName, when not nil, is given each setting as the errors
	// that go out name it, in parentheses: a field such as
	// "Limits.MaxConns", "Config.AllowOrigins" or
	// "auth.Config.WebhookMaxCalls". It returns how the embedding
	// program lets one set it, e.g. "serve --max-conns", which the
	// answer adds: "(Limits.MaxConns, serve --max-conns)"; or "" to
	// leave the name as it is (names.go).
	SettingName func(setting string) string
}

// Timeouts bound the life of connections and of the server, so that slow
// or idle clients cannot hold connections open (slowloris).
type Timeouts struct {
	// ReadHeader bounds reading a request's header.
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included.
	Read time.Duration
	// Write bounds the time from the end of a request's header to the end
	// of its answer: reading the body, applying, writing.
	Write time.Duration
	// Idle bounds the wait for the next request on a kept-alive
	// connection.
	Idle time.Duration
	// Shutdown bounds the wait for requests in flight when the server is
	// asked to stop; connections still open after it are closed.
	Shutdown time.Duration
}

// The default timeouts.
const (
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultShutdownTimeout   = 15 * time.Second
	DefaultSlowRequest       = time.Second
)

// DefaultTimeouts returns the default timeouts.
func DefaultTimeouts() Timeouts {
	return Timeouts{
		ReadHeader: DefaultReadHeaderTimeout,
		Read:       DefaultReadTimeout,
		Write:      DefaultWriteTimeout,
		Idle:       DefaultIdleTimeout,
		Shutdown:   DefaultShutdownTimeout,
	}
}

func (t Timeouts) withDefaults() Timeouts {
	defaults.Fill(&t, DefaultTimeouts())
	return t
}

// Server is the HTTP handler of pmauthority, and can run itself on a
// listener with Serve. It is safe for concurrent use. It puts together
// the HTTP handlers (api), the WebSocket hubs (wsHubs), the route table
// (router) and the middleware around them, and runs them: Serve, Drain,
// Shutdown.
type Server struct {
	*api
	ws     *wsHubs // WebSocket connections and their per-document hubs
	router *router
	access *accessLog // the outermost middleware (log.go)
	// handler is access around the Host check and CORS around router.
	handler http.Handler

	timeouts    Timeouts
	schemaNames []string
	defName     string
	stopPolls   context.CancelFunc // ends polls
	drainDelay  time.Duration      // Config.DrainDelay
	drainCut    chan struct{}      // closed by a test to end Drain's delay

	// Connection limits of Serve (internal/connlimit).
	maxHTTPConns int                                // Limits.MaxHTTPConns; 0: DefaultMaxHTTPConns() when Serve starts
	maxAddrConns int                                // Limits.MaxHTTPConnsPerAddress; 0: a quarter of the total
	httpConns    atomic.Pointer[connlimit.Listener] // of Serve, once it runs
}

// checked is what New takes from a Config that check accepted.
type checked struct {
	reg            *schemas.Registry
	origins, hosts []string       // Config.AllowOrigins and AllowedHosts, lower-cased
	proxies        []netip.Prefix // Config.TrustedProxies, masked
}

// Check reports whether New accepts cfg, and if not why, without making
// a Server: a program checks its configuration before it opens the store
// of the Server's authority.
func (cfg Config) Check() error {
	_, err := cfg.check()
	return err
}

// check returns what New takes from cfg, or why it refuses it.
func (cfg Config) check() (checked, error) {
	var c checked
	var err error
	if c.reg, err = schemas.NewRegistry(cfg.Schemas, cfg.DefaultSchema); err != nil {
		return c, err
	}
	for _, name := range c.reg.Names() {
		sc, _ := c.reg.Get(name)
		if err := export.Check(sc); err != nil {
			return c, fmt.Errorf("schema %q: %w", name, err)
		}
	}
	if c.origins, err = checkHostPatterns(cfg.AllowOrigins); err != nil {
		return c, err
	}
	if c.hosts, err = checkHostPatterns(cfg.AllowedHosts); err != nil {
		return c, fmt.Errorf("allowed hosts: %w", err)
	}
	for _, p := range cfg.TrustedProxies {
		if !p.IsValid() {
			return c, fmt.Errorf("trusted proxies: invalid prefix %v", p)
		}
		c.proxies = append(c.proxies, p.Masked())
	}
	return c, nil
}

// withDefaults returns cfg with its zero fields set to the defaults.
func (cfg Config) withDefaults() Config {
	cfg.Limits = cfg.Limits.WithDefaults()
	cfg.ApplyLimits = cfg.ApplyLimits.WithDefaults()
	cfg.Timeouts = cfg.Timeouts.withDefaults()
	defaults.Fill(&cfg, Config{ApplyWorkers: runtime.GOMAXPROCS(0), PollTimeout: DefaultPollTimeout})
	if cfg.SlowRequest == 0 { // negative: never
		cfg.SlowRequest = DefaultSlowRequest
	}
	cfg.DrainDelay = max(cfg.DrainDelay, 0)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Policy == nil {
		cfg.Policy = AllowAll
	}
	return cfg
}

// New returns a Server for cfg. It fails when a schema name is taken
// twice, the default schema is unknown, or a schema cannot be served: no
// document can satisfy it (model.Schema.CheckSatisfiable), or a toDOM
// template of its spec cannot be used (export.Check).
func New(cfg Config) (*Server, error) {
	c, err := cfg.check()
	if err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	a := &api{
		httpIO: httpIO{
			bodies:   newBodyBudget(cfg.Limits.MaxBodyMemory, bodyMemoryWait),
			maxBody:  cfg.Limits.MaxBodyBytes,
			names:    cfg.SettingName,
			jsonType: []string{"application/json; charset=utf-8"},
		},
		clients: newClients(cfg.Limits, cfg.TrustProxy, c.proxies),
		limits:  cfg.Limits,
		log:     cfg.Logger,
		obs:     cfg.Observer,
		policy:  cfg.Policy,
		app: apply.Applier{
			Schemas:  &apply.Schemas{Registry: c.reg},
			Limits:   cfg.ApplyLimits,
			MaxDepth: cfg.Limits.MaxDepth,
			Strict:   cfg.Strict,
		},
		schemasJSON:    schemasJSON(c.reg),
		workers:        make(chan struct{}, cfg.ApplyWorkers),
		collab:         cfg.Collab,
		pollTimeout:    cfg.PollTimeout,
		writeTimeout:   cfg.Timeouts.Write,
		stepsPage:      cfg.Limits.MaxStepsPage,
		editMarkdown:   cfg.Limits.MaxEditMarkdown,
		stepsPageBytes: cfg.Limits.MaxStepsPageBytes,
		web:            cfg.Web,
		origins:        c.origins,
		hosts:          c.hosts,
	}
	s := &Server{
		api:          a,
		ws:           &wsHubs{s: a},
		timeouts:     cfg.Timeouts,
		schemaNames:  c.reg.Names(),
		defName:      c.reg.Default(),
		drainDelay:   cfg.DrainDelay,
		drainCut:     make(chan struct{}),
		maxHTTPConns: cfg.Limits.MaxHTTPConns,
		maxAddrConns: cfg.Limits.MaxHTTPConnsPerAddress,
	}
	a.polls, s.stopPolls = context.WithCancel(context.Background())
	s.router = newRouter(a, routeTable(a, s.ws.serveWS))
	s.access = &accessLog{api: a, logRequests: cfg.LogRequests, slow: cfg.SlowRequest}
	s.access.requestIDs.init()
	h := http.Handler(http.HandlerFunc(s.router.route))
	if len(a.origins) > 0 {
		h = a.withCORS(h)
	}
	s.handler = s.access.logged(a.withHostCheck(h))
	return s, nil
}

// schemasJSON returns the answer of GET /v1/schemas: the default schema
// and the names of reg's.
func schemasJSON(reg *schemas.Registry) []byte {
	buf := []byte(`{"default":`)
	buf = model.AppendJSONString(buf, reg.Default())
	buf = append(buf, `,"schemas":[`...)
	for i, name := range reg.Names() {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = model.AppendJSONString(buf, name)
	}
	return append(buf, "]}"...)
}

// Limits returns the limits in effect (the defaults filled in).
func (s *Server) Limits() Limits { return s.limits }

// Timeouts returns the timeouts in effect (the defaults filled in).
func (s *Server) Timeouts() Timeouts { return s.timeouts }

// ServeHTTP answers one request: the access log and panic recovery
// (log.go) wrap the Host check and CORS (origin.go, with
// Config.AllowedHosts and Config.AllowOrigins), which wrap the route table
// (routes.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// inFlight returns the number of requests being answered.
func (s *Server) inFlight() int64 { return s.access.active.Load() }

// Routes returns the routes of the server, with their actions. Routes of
// the collab API also take one trailing slash. Paths under /edit/ and
// /assets/ that no route takes, and other methods on them, go to
// Config.Web (which answers them with its 404 and 405), authorized as
// ActionPage; other paths without a route are answered 404, and methods
// a path does not take 405 with an Allow header, both in JSON.
func (s *Server) Routes() []Route {
	out := make([]Route, len(s.router.routes))
	for i, rt := range s.router.routes {
		out[i] = rt.Route
	}
	return out
}

// BodyMemoryInUse returns the bytes of request bodies reserved by the
// requests in flight (see Limits.MaxBodyMemory).
func (s *Server) BodyMemoryInUse() int64 { return s.bodies.inUse() }

// collabMemory returns the authority's memory budget, 0 without one.
func (s *Server) collabMemory() int64 {
	if s.collab == nil {
		return 0
	}
	return s.collab.MaxMemory()
}

// Drain marks the server as draining: /readyz answers 503 from then on,
// while every other route goes on as before. It then waits
// Config.DrainDelay, or until ctx is done, so that a load balancer polling
// /readyz stops sending new clients before the server stops accepting
// them; a later call returns at once. Serve calls it when its context is
// done, before it shuts down (without waiting again when the app called
// it first); an app that runs the Server in an http.Server of its own
// calls it first, then that server's Shutdown and the Server's Shutdown,
// then closes the authority.
func (s *Server) Drain(ctx context.Context) {
	if s.draining.Swap(true) {
		return
	}
	if s.drainDelay <= 0 {
		return
	}
	t := time.NewTimer(s.drainDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-s.drainCut:
	}
}

// Draining reports whether Drain was called.
func (s *Server) Draining() bool { return s.draining.Load() }

// Shutdown ends the server's long-lived requests: waiting long polls
// answer {} at once, and every WebSocket is closed with 1012 (service
// restart: its client reconnects, here once the server is back or to
// another server, and sends its unconfirmed steps again) and refused from
// then on. It waits until the WebSocket handlers have returned, or ctx is
// done, so that none uses the authority afterwards. Serve calls it; an
// app that runs the Server in an http.Server of its own calls it when
// that server shuts down (from RegisterOnShutdown, or after Shutdown,
// which leaves WebSockets alone), before closing the authority.
func (s *Server) Shutdown(ctx context.Context) {
	s.stopPolls()
	s.ws.wait(ctx)
}

// httpConnLimits returns Config.MaxHTTPConns and
// Config.MaxHTTPConnsPerAddress, or their defaults.
func (s *Server) httpConnLimits() (total, perAddr int) {
	total, perAddr = s.maxHTTPConns, s.maxAddrConns
	if total == 0 {
		total = DefaultMaxHTTPConns()
	}
	if perAddr == 0 {
		perAddr = max(total/4, 1)
	}
	return total, perAddr
}

// Serve answers requests on ln until ctx is done, then drains and shuts
// down gracefully: /readyz answers 503 at once while the server goes on
// serving for Config.DrainDelay (Drain); then it stops accepting, answers
// the waiting long polls ({}), closes the WebSockets with 1012 (Shutdown),
// lets the requests in flight finish, submissions included (closing
// connections still open after Timeouts.Shutdown), and returns nil, or
// the error that stopped it. It closes ln. It keeps at most
// Config.MaxHTTPConns connections open, Config.MaxHTTPConnsPerAddress of
// one address, closing idle ones to make room (internal/connlimit).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	t := s.timeouts
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    s.limits.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	if isLoopback(ln.Addr()) {
		// Without Config.AllowedHosts, its requests are for loopback
		// names only (allowedHost).
		s.onLoopback.Store(true)
		hs.BaseContext = func(net.Listener) context.Context {
			return context.WithValue(context.Background(), loopbackListener{}, true)
		}
	}
	hs.RegisterOnShutdown(s.stopPolls)
	maxConns, maxAddrConns := s.httpConnLimits()
	cl := connlimit.New(ln, connlimit.Options{Max: maxConns, PerAddr: maxAddrConns, Exempt: s.trustedProxy,
		Log: s.log, Answer: s.connRefusal})
	hs.ConnState = cl.ConnState
	s.httpConns.Store(cl)
	ln = cl
	l, al := s.limits, s.app.Limits
	s.log.Info("pmauthority serving",
		"addr", ln.Addr().String(), "url", openURL(ln.Addr()),
		"schemas", s.schemaNames, "default_schema", s.defName,
		slog.Group("limits", "max_body_bytes", bytesize.Size(l.MaxBodyBytes), "max_steps", al.MaxSteps,
			"max_doc_size", al.MaxDocSize, "max_doc_bytes", bytesize.Size(al.MaxDocBytes), "max_depth", l.MaxDepth,
			"max_header_bytes", bytesize.Size(l.MaxHeaderBytes),
			"max_conns", l.MaxConns, "max_client_conns", l.MaxClientConns, "max_ws_messages", l.MaxWSMessages,
			"max_presence", l.MaxPresence, "max_presence_data", l.MaxPresenceData, "max_submissions", l.MaxSubmissions,
			"max_http_conns", maxConns, "max_http_conns_per_address", maxAddrConns),
		slog.Group("timeouts", "read_header", t.ReadHeader, "read", t.Read, "write", t.Write,
			"idle", t.Idle, "shutdown", t.Shutdown),
		"apply_workers", cap(s.workers), "max_body_memory", bytesize.Size(s.bodies.limit), "documents_memory", bytesize.Size(s.collabMemory()), "log_requests", s.access.logRequests, "allowed_hosts", s.hostsInEffect())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("draining: /readyz answers 503", "drain_delay", s.drainDelay)
	s.Drain(context.Background())
	s.log.Info("shutting down: waiting for requests in flight", "in_flight", s.inFlight(), "timeout", t.Shutdown)
	sctx, cancel := context.WithTimeout(context.Background(), t.Shutdown)
	defer cancel()
	err := hs.Shutdown(sctx)
	// http.Server.Shutdown leaves hijacked connections alone.
	s.Shutdown(sctx)
	if err != nil {
		hs.Close()
		<-errc
		return fmt.Errorf("shutdown: requests still in flight after %v were cut off: %w", t.Shutdown, err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	s.log.Info("stopped")
	return nil
}
