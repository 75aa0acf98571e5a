package server

import (
	"net/http"
	"time"
)

// Observer is told what a Server does, for metrics: an embedding program
// implements it (package metrics does, with Prometheus) without the
// server knowing how it is counted. Its methods are called on the request
// paths, concurrently, so they must be quick and must not block. No
// document id is ever passed: routes are the route table's patterns.
type Observer interface {
	// Request is told that a request was answered: route is its route's
	// method and pattern as the route table has it ("POST
	// /docs/{id}/events", "GET /healthz"), the pattern alone for a method
	// the path does not take (405), "" for a path that no route takes;
	// status is the status sent (101 for a WebSocket upgrade) and d the
	// time from the request's arrival to the end of its handler.
	Request(route string, status int, d time.Duration)
	// Submission is told that a submission (a POST /docs/{id}/events, a
	// WebSocket "steps" message) was answered, and how.
	Submission(t Transport, r SubmissionResult)
	// Connections is told that the number of open connections of
	// transport t (WebSockets open, long polls waiting for news)
	// changed by delta.
	Connections(t Transport, delta int)
	// DeliveryDropped is told that a WebSocket's send queue overflowed:
	// its client reads more slowly than its document changes, so its
	// pushes were dropped and it is closed with 4008 to resync.
	DeliveryDropped()
}

// Transport is how a client speaks to the collab API: a label of
// Observer's metrics.
type Transport string

// The transports.
const (
	// TransportWebSocket is GET /docs/{id}/ws (docs/protocol.md).
	TransportWebSocket Transport = "websocket"
	// TransportLongPoll is the collab demo's HTTP API: GET
	// /docs/{id}/events (long polls) and POST /docs/{id}/events
	// (submissions).
	TransportLongPoll Transport = "longpoll"
)

// SubmissionResult is the outcome of a submission, as Observer is told
// it.
type SubmissionResult string

// The outcomes of submissions.
const (
	// SubmissionAccepted: the submission is durable (or changed nothing).
	SubmissionAccepted SubmissionResult = "accepted"
	// SubmissionConflict: made on a version the document has moved on
	// from (409 "Version not current"); the client rebases and resends.
	SubmissionConflict SubmissionResult = "conflict"
	// SubmissionRejected: refused for what it is (400, 413, 422 a step
	// that fails, a BeforeSubmit veto, 429 over a rate limit …).
	SubmissionRejected SubmissionResult = "rejected"
	// SubmissionForbidden: refused by the policy point (401, 403).
	SubmissionForbidden SubmissionResult = "forbidden"
	// SubmissionUnavailable: the server could not take it (503: the
	// store failed, the memory budget is exhausted, shutting down; any
	// 5xx).
	SubmissionUnavailable SubmissionResult = "unavailable"
)

// submissionResult returns the outcome of a submission answered with
// status.
func submissionResult(status int) SubmissionResult {
	switch {
	case status < 300:
		return SubmissionAccepted
	case status == http.StatusConflict:
		return SubmissionConflict
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return SubmissionForbidden
	case status >= 500:
		return SubmissionUnavailable
	}
	return SubmissionRejected
}
