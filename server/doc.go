// Package server is pmauthority's HTTP server. It serves the stateless
// apply endpoint, compatible with the prosemirror-v8-perf benchmark (POST a
// document and steps, get the resulting document), and, when Config.Collab
// is set, the collaborative authority: the long-poll API of the ProseMirror
// website's collab demo and a WebSocket transport (docs/protocol.md).
//
// Routes:
//
//	POST /            apply (the prosemirror-v8-perf path)
//	POST /v1/apply    apply
//	GET  /v1/schemas  {"default": NAME, "schemas": [NAME, …]}
//	GET  /healthz     {"status":"ok"}
//	GET  /docs        [{"id": …, "users": n}, …]                  (Config.Collab)
//	GET  /docs/{id}   {doc, users, version, comments, commentVersion}
//	GET  /docs/{id}/events?version=V&commentVersion=C   long poll
//	POST /docs/{id}/events   {version, steps, clientID, comment}
//	GET  /docs/{id}/ws       WebSocket (docs/protocol.md)
//	GET  /, /edit/{id}, /assets/…
//	                  the demo pages, when Config.Web is set (package web)
//
// An apply request is {"doc": …, "steps": […], "schema"?: NAME}. The answer
// is {"doc": …} with status 200, byte for byte what a node server sending
// res.json({doc: doc.toJSON()}) sends, with the same Content-Type
// (application/json; charset=utf-8). Every error is JSON too,
// {"error": {"step"?: i, "message": "…"}}, "step" being present when a step
// is at fault:
//
//	400  malformed JSON; JSON nested deeper than Limits.MaxDepth; a request
//	     that is not an object, has no "doc", or has a field of the wrong
//	     type ("doc" not an object, "steps" not an array, "schema" not a
//	     string); an unknown schema name; an empty or unreadable body
//	404  an unknown path
//	405  a method the path does not take, with an Allow header
//	413  a body, a step count or a document content size over its limit;
//	     for a document that a step makes too large, "step" is that step
//	415  a Content-Type other than application/json (parameters allowed; a
//	     charset must be UTF-8). A request without Content-Type is taken as
//	     JSON, for minimal clients.
//	422  a step that fails to decode or to apply ("step": i, and the
//	     message prosemirror-transform gives), or a document that the
//	     schema rejects (no "step"; the message starts with "invalid doc:")
//	431  a header over Limits.MaxHeaderBytes (answered by net/http)
//	500  never for client input: only a bug, recovered and logged with its
//	     stack
//	503  the client went away before its request was applied (nobody reads
//	     this answer; it shows in the log)
//
// Fields other than doc, steps and schema are ignored, and a null "steps"
// or "schema" counts as absent. Schema names come from the built-ins and
// Config.Schemas only, never from files. Steps are decoded and applied in
// order, so that the first failing step is reported whichever way it
// fails, and a request is all or nothing.
//
// Large requests (16 KiB or more) are applied a few at a time
// (Config.ApplyWorkers): memory then stays bounded however many clients
// send large documents at once, and small requests never wait behind
// them.
//
// A Server holds immutable configuration (schemas are immutable and
// shared) and pools of buffers, so it is safe for concurrent use, and
// requests share nothing else.
package server
