package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
)

// api is the HTTP handlers of a Server: the apply endpoint (apply.go), the
// collab API (collab_http.go), the documents API (docs_api.go, export.go),
// the demo pages (web.go) and health (routes.go), with what they share:
// reading requests and writing answers (httpIO), the limits on clients
// (clients), the policy point and the authority. The WebSocket upgrade
// (ws.go) and the route table (routes.go) use it; it uses neither.
type api struct {
	httpIO
	clients

	limits Limits
	log    *slog.Logger
	obs    Observer // Config.Observer, or nil
	policy Policy   // Config.Policy, or AllowAll

	app         apply.Applier
	schemasJSON []byte        // the answer of GET /v1/schemas
	workers     chan struct{} // a token per large request being applied

	collab         *collab.Authority
	pollTimeout    time.Duration
	writeTimeout   time.Duration // Timeouts.Write, which a long poll adds to its wait
	stepsPage      int           // Limits.MaxStepsPage
	editMarkdown   int           // Limits.MaxEditMarkdown
	stepsPageBytes int64         // Limits.MaxStepsPageBytes
	// polls is done when the server shuts down: waiting polls answer at
	// once, and WebSockets close.
	polls context.Context
	// pollWaiting, when set (by tests), is told of each long poll that
	// starts (1) or stops (-1) waiting on a document.
	pollWaiting func(id string, delta int)

	web        http.Handler // the demo pages (Config.Web), or nil
	origins    []string     // Config.AllowOrigins, lower-cased
	hosts      []string     // Config.AllowedHosts, lower-cased
	onLoopback atomic.Bool  // Serve listens on a loopback address
	draining   atomic.Bool  // Drain was called: /readyz answers 503
}

// authorizeCreate authorizes p for ActionCreate on document id when it
// does not exist yet, so that using it would create it (with AllowAll,
// or without collab.Config.AutoCreate, it does not look).
func (s *api) authorizeCreate(ctx context.Context, p Principal, id string) error {
	if s.policy == AllowAll || !s.collab.AutoCreates() {
		// Without AutoCreate, using an unknown document answers 404.
		return nil
	}
	ok, err := s.collab.Exists(ctx, id)
	if err != nil || ok {
		return err
	}
	return s.policy.Authorize(ctx, p, id, ActionCreate)
}
