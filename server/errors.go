package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/changeset"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/edit"
	"github.com/pmauthority/pmauthority/transform"
)

// httpError is a request refused by the server itself, before the
// authority or the applier sees it: a body that is not JSON, too large or
// unreadable, a malformed submission or query, an invalid document id.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// methodError is a method that a path's routes do not take (405).
type methodError struct {
	method, path string
	allow        []string // the Allow header: the path's methods
}

func (e *methodError) Error() string {
	return "method " + e.method + " not allowed for " + e.path + " (allowed: " + e.allow[0] + ")"
}

// notFoundError is a path that no route takes (404).
type notFoundError struct{ path string }

func (e *notFoundError) Error() string { return "not found: no route for " + e.path }

// retryAfterStorage is the Retry-After of a 503 for a store failure, in
// seconds: a full disk or a lost database connection may take a while.
const retryAfterStorage = "1"

// retryAfterMemory is the Retry-After of a 503 for the memory budget (the
// authority's or the request bodies'), in seconds: documents become idle,
// and bodies are released, as requests end.
const retryAfterMemory = "2"

// wwwAuthenticate is the WWW-Authenticate header of a 401.
var wwwAuthenticate = []string{`Bearer error="invalid_token"`}

// errAnswer is how an error is answered over HTTP (and, its status, step
// and message, over WebSocket).
type errAnswer struct {
	status int
	step   int // the failing step, -1 when none
	msg    string
	// logCause puts the error itself, rather than msg, in the access log
	// (for failures whose cause clients are not told).
	logCause bool
}

// answerOf maps an error of a request to its answer. This is the one
// place where errors become statuses:
//
//	400  *httpError (decoding), collab.ErrInvalidVersion ("Invalid version N"),
//	     collab.ErrInvalidRequest, apply's malformed requests, edit.ErrInvalid,
//	     a *transform.OpError of a *transform.ArgError
//	401  ErrUnauthenticated (with WWW-Authenticate)
//	403  ErrForbidden (the policy), a *collab.RefusedError matching it
//	404  collab.ErrNotFound, a path without a route
//	405  a method the path does not take (with Allow)
//	409  collab.ErrConflict ("Version not current"), collab.ErrExists,
//	     collab.ErrCheckpointExists, *edit.StaleError
//	410  collab.ErrHistoryGone ("History no longer available")
//	413  *collab.LimitError, apply's limits, the body limit
//	415  a Content-Type that is not JSON
//	422  *transform.StepError, collab.ErrRefReused, changeset.ErrInconsistent
//	     (changes the JS library throws on), apply's failed steps and invalid
//	     documents, other *collab.RefusedError, *edit.TargetError, other
//	     *transform.OpError
//	429  *collab.RateError (with Retry-After): a connection or rate limit
//	503  collab.ErrUnavailable, collab.ErrOverloaded (the memory budget),
//	     collab.ErrContended (a commit that lost to other nodes each time)
//	     (all three with Retry-After), collab.ErrClosed, a canceled request
//	507  collab.ErrTooManyDocuments (collab.Limits.MaxDocuments),
//	     collab.ErrStorageQuota (a *collab.QuotaError; Retry-After when
//	     the client's quota refills)
//	500  anything else (a bug; logged)
//
// The messages of 409, 410 and "Invalid version N" are the collab demo
// server's, which clients test for.
func answerOf(err error) errAnswer {
	var (
		he      *httpError
		me      *methodError
		nf      *notFoundError
		failure *apply.Failure
		refused *collab.RefusedError
		stepErr *transform.StepError
		limit   *collab.LimitError
		rate    *collab.RateError
		stale   *edit.StaleError
		target  *edit.TargetError
		opErr   *transform.OpError
		argErr  *transform.ArgError
	)
	switch {
	case errors.As(err, &he):
		return errAnswer{status: he.status, step: -1, msg: he.msg}
	case errors.As(err, &me):
		return errAnswer{status: http.StatusMethodNotAllowed, step: -1, msg: me.Error()}
	case errors.As(err, &nf):
		return errAnswer{status: http.StatusNotFound, step: -1, msg: nf.Error()}
	case errors.As(err, &failure):
		return errAnswer{status: failureStatus(failure), step: failure.Step, msg: failure.Message}
	case errors.Is(err, ErrUnauthenticated):
		return errAnswer{status: http.StatusUnauthorized, step: -1, msg: err.Error()}
	case errors.As(err, &refused):
		if errors.Is(err, collab.ErrForbidden) {
			return errAnswer{status: http.StatusForbidden, step: -1, msg: err.Error()}
		}
		return errAnswer{status: http.StatusUnprocessableEntity, step: -1, msg: err.Error()}
	case errors.Is(err, ErrForbidden):
		return errAnswer{status: http.StatusForbidden, step: -1, msg: err.Error()}
	case errors.Is(err, collab.ErrExists) || errors.Is(err, collab.ErrCheckpointExists):
		return errAnswer{status: http.StatusConflict, step: -1, msg: err.Error()}
	case errors.As(err, &stale):
		return errAnswer{status: http.StatusConflict, step: -1, msg: stale.Error()}
	case errors.As(err, &target):
		return errAnswer{status: http.StatusUnprocessableEntity, step: -1, msg: target.Error()}
	case errors.As(err, &opErr):
		if errors.As(err, &argErr) {
			return errAnswer{status: http.StatusBadRequest, step: -1, msg: opErr.Error()}
		}
		return errAnswer{status: http.StatusUnprocessableEntity, step: -1, msg: opErr.Error()}
	case errors.Is(err, edit.ErrInvalid):
		return errAnswer{status: http.StatusBadRequest, step: -1, msg: err.Error()}
	case errors.Is(err, collab.ErrConflict):
		return errAnswer{status: http.StatusConflict, step: -1, msg: collab.ErrConflict.Error()}
	case errors.Is(err, collab.ErrInvalidVersion):
		return errAnswer{status: http.StatusBadRequest, step: -1, msg: err.Error()}
	case errors.Is(err, collab.ErrHistoryGone):
		return errAnswer{status: http.StatusGone, step: -1, msg: collab.ErrHistoryGone.Error()}
	case errors.Is(err, collab.ErrNotFound):
		return errAnswer{status: http.StatusNotFound, step: -1, msg: err.Error()}
	case errors.Is(err, collab.ErrInvalidRequest):
		return errAnswer{status: http.StatusBadRequest, step: -1, msg: err.Error()}
	case errors.Is(err, collab.ErrClosed):
		return errAnswer{status: http.StatusServiceUnavailable, step: -1, msg: "shutting down"}
	case errors.Is(err, collab.ErrOverloaded) || errors.Is(err, collab.ErrContended):
		return errAnswer{status: http.StatusServiceUnavailable, step: -1, msg: err.Error()}
	case errors.Is(err, collab.ErrUnavailable):
		// The cause (the store's error) goes to the log, not to clients.
		return errAnswer{status: http.StatusServiceUnavailable, step: -1, msg: "storage unavailable: try again later", logCause: true}
	case errors.Is(err, collab.ErrRefReused):
		return errAnswer{status: http.StatusUnprocessableEntity, step: -1, msg: "the ref names another commit, with other steps"}
	case errors.Is(err, changeset.ErrInconsistent):
		return errAnswer{status: http.StatusUnprocessableEntity, step: -1, msg: "the changes between these versions cannot be computed (prosemirror-changeset fails on this history): " + err.Error()}
	case errors.As(err, &stepErr):
		return errAnswer{status: http.StatusUnprocessableEntity, step: stepErr.Index, msg: stepErr.Err.Error()}
	case errors.As(err, &limit):
		return errAnswer{status: http.StatusRequestEntityTooLarge, step: -1, msg: err.Error()}
	case errors.As(err, &rate):
		return errAnswer{status: http.StatusTooManyRequests, step: -1, msg: rate.Msg}
	case errors.Is(err, collab.ErrTooManyDocuments):
		return errAnswer{status: http.StatusInsufficientStorage, step: -1, msg: err.Error()}
	case errors.Is(err, collab.ErrStorageQuota):
		return errAnswer{status: http.StatusInsufficientStorage, step: -1, msg: err.Error()}
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		// The client went away; nobody reads this errAnswer.
		return errAnswer{status: http.StatusServiceUnavailable, step: -1, msg: "request canceled: " + err.Error()}
	}
	return errAnswer{status: http.StatusInternalServerError, step: -1, msg: "internal server error", logCause: true}
}

// failureStatus returns the status code of an apply failure.
func failureStatus(f *apply.Failure) int {
	switch f.Err {
	case apply.ErrStepFailed, apply.ErrInvalidDoc:
		return http.StatusUnprocessableEntity
	case apply.ErrTooManySteps, apply.ErrDocTooLarge:
		return http.StatusRequestEntityTooLarge
	case apply.ErrCanceled:
		// The client went away; nobody reads this errAnswer.
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest // ErrMalformed, ErrTooDeep, ErrInvalidRequest, ErrUnknownSchema
}

// shuttingDown reports whether err means that the server shuts down.
func shuttingDown(err error) bool {
	return errors.Is(err, collab.ErrClosed) || errors.Is(err, context.Canceled)
}

// wsMessageError is a WebSocket message refused by the server itself,
// before the policy or the authority sees it. Its kind decides its
// answer (wsAnswerOf).
type wsMessageError struct {
	kind wsErrorKind
	msg  string
}

func (e *wsMessageError) Error() string { return e.msg }

// wsErrorKind is the kind of a wsMessageError.
type wsErrorKind int

const (
	// wsMalformed: a message that is not JSON, not an object, of no known
	// type, or whose fields are invalid; the connection goes on.
	wsMalformed wsErrorKind = iota
	// wsViolation: a message out of order (a hello that is not first or
	// comes twice) or an invalid hello; the connection is closed.
	wsViolation
	// wsTooMany: more than Limits.MaxWSMessages per second; the
	// connection is closed.
	wsTooMany
	// wsNotUTF8: a text frame that is not UTF-8 (RFC 6455 §8.1); the
	// connection is closed without an error message.
	wsNotUTF8
)

// malformed returns the error of an invalid message.
func malformed(msg string) error { return &wsMessageError{wsMalformed, msg} }

// violation returns the error of a protocol violation.
func violation(msg string) error { return &wsMessageError{wsViolation, msg} }

// wsRevokedError is the refusal of a connection's principal when the
// policy is asked again after it expired (wsConn.recheck).
type wsRevokedError struct{ err error }

func (e *wsRevokedError) Error() string { return e.err.Error() }
func (e *wsRevokedError) Unwrap() error { return e.err }

// wsAnswer is how an error is answered over a WebSocket: an error message
// (none when status is 0), then, when code is not 0, the connection is
// closed with code and reason once the message is written.
type wsAnswer struct {
	status int
	step   int // the failing step, -1 when none
	msg    string
	code   websocket.StatusCode
	reason string
}

// wsAnswerOf maps an error of a WebSocket message to its answer: the
// WebSocket's side of answerOf, the one place where these errors become
// statuses and close codes. admission is set for errors of the hello (the
// connection's admission), which close the connection (wsCloseOf); after
// the hello, a refused message changes nothing and the connection goes
// on.
//
//	400, close 1008     a wsViolation (a hello out of order, an invalid hello)
//	400                 a wsMalformed
//	429, close 4029     wsTooMany
//	close 1007          wsNotUTF8, without an error message
//	status, close 4401  a wsRevokedError whose cause is a 401; other causes
//	                    close as a refused hello does (wsCloseOf)
//	close 1012          the server shuts down, without an error message
//	answerOf            any other error (with wsCloseOf at the hello)
func wsAnswerOf(err error, admission bool) wsAnswer {
	var (
		me      *wsMessageError
		revoked *wsRevokedError
	)
	switch {
	case errors.As(err, &me):
		switch me.kind {
		case wsViolation:
			return wsAnswer{status: http.StatusBadRequest, step: -1, msg: me.msg, code: websocket.StatusPolicyViolation, reason: "protocol violation"}
		case wsTooMany:
			return wsAnswer{status: http.StatusTooManyRequests, step: -1, msg: me.msg, code: wsCloseTooManyRequests, reason: "too many messages"}
		case wsNotUTF8:
			return wsAnswer{code: websocket.StatusInvalidFramePayloadData, reason: me.msg}
		}
		return wsAnswer{status: http.StatusBadRequest, step: -1, msg: me.msg}
	case errors.As(err, &revoked):
		a := answerOf(revoked.err)
		w := wsAnswer{status: a.status, step: -1, msg: a.msg, code: wsCloseTokenExpired, reason: "token expired"}
		if a.status != http.StatusUnauthorized {
			w.code, w.reason = wsCloseOf(revoked.err, a.status)
		}
		return w
	case shuttingDown(err):
		return wsAnswer{code: wsCloseRestart, reason: "server restarting"}
	}
	a := answerOf(err)
	w := wsAnswer{status: a.status, step: a.step, msg: a.msg}
	if admission {
		w.code, w.reason = wsCloseOf(err, a.status)
	}
	return w
}

// wsCloseOf returns the close code and reason of a connection whose
// hello failed with err (after the error message, see answerOf): 1012
// when the server shuts down, 4400 for a version the document never had
// (the client reloads), 4404 for a document that does not exist (without
// collab.Config.AutoCreate), 4029 over a rate limit, 1011 when the document
// is unavailable, 1008 for other refusals (the policy's, the document
// limit).
func wsCloseOf(err error, status int) (websocket.StatusCode, string) {
	switch {
	case shuttingDown(err):
		return wsCloseRestart, "server restarting"
	case errors.Is(err, collab.ErrInvalidVersion):
		return wsCloseInvalidVersion, "invalid version: reload"
	case errors.Is(err, collab.ErrNotFound):
		return wsCloseNotFound, "document not found"
	case status == http.StatusTooManyRequests:
		return wsCloseTooManyRequests, "too many requests"
	case status == http.StatusInsufficientStorage:
		return websocket.StatusPolicyViolation, "too many documents"
	case status >= 500:
		return websocket.StatusInternalError, "document unavailable"
	}
	return websocket.StatusPolicyViolation, "request refused"
}

// wsHubCloseOf returns the close code and reason of the connections of a
// document hub that failed with err: 1012 when the authority closed, 4404
// when the document was deleted, else 1011 (the document is unavailable:
// its store failed).
func wsHubCloseOf(err error) (websocket.StatusCode, string) {
	switch {
	case errors.Is(err, collab.ErrClosed):
		return wsCloseRestart, "server restarting"
	case errors.Is(err, collab.ErrNotFound):
		return wsCloseNotFound, "document deleted"
	}
	return websocket.StatusInternalError, "document unavailable"
}

// wsCloseRestart (1012, service restart) closes the connections of a
// server that shuts down or drains: the client reconnects, to this server
// once it is back or to another, and sends its unconfirmed steps again.
const wsCloseRestart = websocket.StatusServiceRestart

// Close codes of the protocol beyond RFC 6455's.
const (
	wsCloseTooSlow         websocket.StatusCode = 4008
	wsCloseTooManyRequests websocket.StatusCode = 4029
	wsCloseInvalidVersion  websocket.StatusCode = 4400
	wsCloseTokenExpired    websocket.StatusCode = 4401
	wsCloseNotFound        websocket.StatusCode = 4404
)
