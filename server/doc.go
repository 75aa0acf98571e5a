// Package server is pmauthority's HTTP server. It serves the stateless
// apply endpoint, compatible with the prosemirror-v8-perf benchmark (POST a
// document and steps, get the resulting document), and, when Config.Collab
// is set, the collaborative authority: the long-poll API of the ProseMirror
// website's collab demo and a WebSocket transport (docs/protocol.md).
//
// # Routes
//
// Every route is declared once, in routes.go, with its method, its
// http.ServeMux pattern and its action (Server.Routes lists them; a test
// holds this list, docs/api.md's and the route table to the same routes):
//
//	POST      /{$}                    apply    apply (the prosemirror-v8-perf path)
//	POST      /v1/apply               apply    apply
//	GET HEAD  /v1/schemas             apply    {"default": NAME, "schemas": [NAME, …]}
//	GET HEAD  /healthz                health   {"status":"ok"}
//	GET HEAD  /readyz                 health   {"status":"ok"}; 503 while draining (Drain)
//
// With Config.Collab, the collab API and the documents API:
//
//	GET HEAD  /docs                   read     [{"id", "users", "version", "updated"}, …]
//	POST      /docs                   create   {id?, schema?, doc?} → 201 {id, version}
//	GET HEAD  /docs/{id}              read     {doc, users, version, comments, commentVersion};
//	                                           ?version=N: {doc, version}, a past version
//	DELETE    /docs/{id}              admin    204 (its WebSockets closed with 4404)
//	GET       /docs/{id}/events       read     ?version=V&commentVersion=C: long poll
//	POST      /docs/{id}/events       comment  {version, steps, clientID, comment}; edit too
//	POST      /docs/{id}/commits      comment  {version, ref, clientID, steps, comment}; edit too
//	                                           with steps (suggest: suggestions only), and to
//	                                           delete others' comments
//	GET       /docs/{id}/ws           read     WebSocket (docs/protocol.md), authorized at its hello
//	GET       /docs/{id}/export       read     ?format=text|markdown|html[&version=N]
//	GET       /docs/{id}/steps        read     ?from=V&limit=K: the step log, paged
//	GET       /docs/{id}/checkpoints  read     {checkpoints: […]}
//	POST      /docs/{id}/checkpoints  edit     {name} → 201
//	POST      /docs/{id}/restore      edit     {version} or {checkpoint}: one new step
//	POST      /docs/{id}/edits        edit     {base, edits, name?}: edits found at base
//	POST      /docs/{id}/transform    edit     {version, ops, name?}: Transform API calls
//	GET       /docs/{id}/authors      read     who inserted each range
//	GET       /docs/{id}/changes      read     ?from=A&to=B[&simplify=1]: the changes
//	                                           between two versions, with their authors
//	POST      /docs/{id}/suggestions/{sid}/accept  edit  the suggestion sid applied
//	POST      /docs/{id}/suggestions/{sid}/reject  edit  the suggestion sid reverted
//	POST      /docs/{id}/suggestions/accept  edit  {author} or {all}: those applied
//	POST      /docs/{id}/suggestions/reject  edit  {author} or {all}: those reverted
//
// With Config.Web, the demo pages:
//
//	GET HEAD  /{$}                    page     the demo's index
//	GET HEAD  /edit/{id}              page     an editor
//	GET HEAD  /assets/{file}          page     its scripts and styles
//
// HEAD is served where it is listed; elsewhere it answers 405, as any
// method that a path does not take. The collab routes take one trailing
// slash, as the demo server does. A document id is what internal/docid
// accepts: 1 to 512 bytes of UTF-8 without control characters, other
// than "." and ".."; in a path it is one segment, in which an escaped
// '/' is part of the id. A path without a route answers 404 and a method
// its path does not take 405 with an Allow header, in JSON, but under
// /edit/ and /assets/ with Config.Web, which answers those itself. Paths
// that http.ServeMux would clean and redirect ("//docs", "/docs/../x")
// are routed as they are: a "." or ".." or empty segment matches no
// route, and is refused as a document id.
//
// # Policy point
//
// Every route passes Config.Policy (AllowAll by default) before its
// handler runs and before its body is read: Authenticate with the bearer
// token of the Authorization header, then Authorize for the route's
// document ("" for routes that concern none) and action. A WebSocket is
// authorized at its hello, with the hello's "token", and each later
// message with the connection's principal (see Policy). Handlers find
// the principal with PrincipalFrom, and submissions carry its id as
// collab.Submission.Author.
//
// # Errors
//
// Every error is an error value, answered in one place (errors.go) with
// its status and JSON {"error": {"step"?: i, "message": "…"}}, "step"
// being present when a step is at fault; over WebSocket, an error message
// with the same status, step and message:
//
//	400  malformed JSON; JSON nested deeper than Limits.MaxDepth; a request
//	     that is not an object, has no "doc", or has a field of the wrong
//	     type ("doc" not an object, "steps" not an array, "schema" not a
//	     string); an unknown schema name; an empty or unreadable body; an
//	     invalid document id or query; "Invalid version N" (a version
//	     ahead of the document); an invalid client id or comment event
//	401  credentials the policy rejects (ErrUnauthenticated), with
//	     WWW-Authenticate: Bearer error="invalid_token"
//	403  what the policy forbids (ErrForbidden), or a collab.Config
//	     BeforeSubmit refusal matching it; a request that changes state
//	     (POST /docs/{id}/events) with an Origin that is neither the
//	     server's own (its Host) nor one of Config.AllowOrigins (CSRF)
//	404  an unknown path or document
//	405  a method the path does not take, with an Allow header
//	409  "Version not current" (collab.ErrConflict); a document or a
//	     checkpoint name that exists (POST /docs, POST checkpoints)
//	410  "History no longer available" (collab.ErrHistoryGone)
//	413  a body, a step count or a document content size over its limit;
//	     for a document that a step makes too large, "step" is that step
//	415  a Content-Type other than application/json (parameters allowed; a
//	     charset must be UTF-8). An apply request without Content-Type is
//	     taken as JSON, for minimal clients; a request that changes state
//	     must have one, since a page of another origin can send a body
//	     without one (or as text/plain) without a CORS preflight.
//	421  a Host the server is not reached by: not one of
//	     Config.AllowedHosts, or, without them, not localhost or a
//	     loopback address when Serve listens on loopback (DNS rebinding)
//	422  a step that fails to decode or to apply ("step": i, and the
//	     message prosemirror-transform gives), a document that the
//	     schema rejects (no "step"; the message starts with "invalid doc:"),
//	     or another BeforeSubmit refusal
//	431  a header over Limits.MaxHeaderBytes (answered by net/http)
//	500  never for client input: only a bug, recovered and logged with its
//	     stack
//	503  the store failed (with Retry-After), the server shuts down, or the
//	     client went away before its request was answered (nobody reads
//	     this answer; it shows in the log); /readyz while the server
//	     drains
//
// # Drain
//
// When Serve's context is done the server drains, for a rolling restart:
// /readyz answers 503 at once while everything else goes on for
// Config.DrainDelay (Drain), so that a load balancer sends new clients
// elsewhere; then Serve stops accepting, answers waiting long polls {},
// closes WebSockets with 1012 (service restart; their clients reconnect
// and send their unconfirmed steps again) and waits for the requests in
// flight, submissions included, before it returns (Shutdown).
//
// # Apply
//
// An apply request is {"doc": …, "steps": […], "schema"?: NAME}. The answer
// is {"doc": …} with status 200, byte for byte what a node server sending
// res.json({doc: doc.toJSON()}) sends, with the same Content-Type
// (application/json; charset=utf-8). Fields other than doc, steps and
// schema are ignored, and a null "steps" or "schema" counts as absent.
// Schema names come from the built-ins and Config.Schemas only, never from
// files. Steps are decoded and applied in order, so that the first failing
// step is reported whichever way it fails, and a request is all or
// nothing.
//
// Large requests (16 KiB or more) are applied a few at a time
// (Config.ApplyWorkers): memory then stays bounded however many clients
// send large documents at once, and small requests never wait behind
// them.
//
// # Files
//
// server.go (Config, New, and Server, which puts the parts together and
// runs them: Serve, Drain, Shutdown), routes.go (the route table and the
// router), api.go (api: the HTTP handlers and what they share),
// policy.go (the policy point), errors.go (errors to statuses and close
// codes), names.go (the settings that errors name, as
// Config.SettingName names them), observer.go (the Observer of
// requests, for metrics), httpio.go (bodies, JSON and error answers, the
// pooled exchange), log.go and origin.go (the access log and CORS
// middleware), limits.go (clients: who they are, and what they hold
// against the limits on clients; and the answer to a connection over
// the bounds of internal/connlimit), bodymem.go and answers.go (request bodies and
// answers in the memory budget), apply.go (the apply endpoint),
// collab_http.go and collab_decode.go (the collab API), docs_api.go (the
// documents API), edits.go (the edit API and POST /docs/{id}/transform), suggestions.go
// (accepting and rejecting suggestions), export.go (GET
// /docs/{id}/export), changes.go (GET /docs/{id}/changes), ws.go (upgrade and
// message dispatch), ws_conn.go (a connection: its send queue and
// writer, with ws_nowait_unix.go and ws_nowait_other.go for reads and
// writes that do not wait), ws_hub.go (wsHubs, and one hub per document, relaying its
// collab.Subscription), ws_messages.go (WebSocket message encoding and
// decoding), web.go (the demo pages). A test holds this list to the
// package's files.
//
// A Server holds immutable configuration (schemas are immutable and
// shared) and pools of buffers, so it is safe for concurrent use, and
// requests share nothing else.
package server
