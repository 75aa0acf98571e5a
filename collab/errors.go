package collab

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Errors that callers branch on. The texts of ErrConflict and
// ErrHistoryGone are the collab demo server's answers, which clients may
// show.
var (
	// ErrConflict is returned by Submit when the submission's version is
	// not the document's current version (HTTP 409): the client must
	// first receive the steps it has not seen.
	ErrConflict = errors.New("Version not current")
	// ErrInvalidVersion is returned for a version that the document never
	// had: negative or ahead of the current one (HTTP 400). The returned
	// error wraps it and reads "Invalid version N", which is what
	// prosemirror-collab clients look for before reloading.
	ErrInvalidVersion = errors.New("Invalid version")
	// ErrHistoryGone is returned by Events when the steps or comment
	// events after the asked versions are no longer kept (HTTP 410).
	ErrHistoryGone = errors.New("History no longer available")
	// ErrNotFound is returned for a document that does not exist, when
	// Config.AutoCreate is off or the document was deleted meanwhile
	// (HTTP 404).
	ErrNotFound = errors.New("document not found")
	// ErrExists is returned by Create for a document that exists (HTTP
	// 409).
	ErrExists = errors.New("document already exists")
	// ErrCheckpointExists is returned by Checkpoint for a name that the
	// document's checkpoints have (HTTP 409).
	ErrCheckpointExists = errors.New("checkpoint already exists")
	// ErrTooManyDocuments is matched by the refusal to create a document
	// when the store holds Config.MaxDocuments (HTTP 507).
	ErrTooManyDocuments = errors.New("too many documents")
	// ErrInvalidRequest is wrapped by the errors for a malformed request:
	// a bad client id, a comment event that does not fit the document, an
	// unknown schema (HTTP 400). Their texts say what is wrong.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrForbidden is matched by the refusal of a principal that may not
	// do what it asked (HTTP 403): a Config.BeforeSubmit hook refuses a
	// submission as forbidden by returning an error that wraps it, and
	// the server's policy point refuses requests with it.
	ErrForbidden = errors.New("forbidden")
	// ErrClosed is returned by every method after Close, and by waiting
	// subscriptions (Subscription.Wait) when Close is called.
	ErrClosed = errors.New("collab: authority closed")
	// ErrUnavailable is matched by the errors of a store that failed (a
	// full disk, a lost database connection, a closed store) (HTTP 503).
	// They wrap the store's error. Nothing was changed, except that a
	// failed Submit may have been stored nevertheless (an acknowledgement
	// lost on the way): a client that tries again later gets either
	// success or ErrConflict, and then its own steps among the events.
	ErrUnavailable = errors.New("storage unavailable")
	// ErrContended is returned for a commit (Submission.Ref) that lost the
	// store's race for its version to other writers sharing the store
	// each time it was rebased and appended again (HTTP 503, to try again
	// shortly). Nothing was applied.
	ErrContended = errors.New("collab: the commit lost the race for its version to other writers each time: try again")
)

// storeError is a failure of the store, other than its answers that
// callers branch on (not found, conflict …): it matches ErrUnavailable.
type storeError struct {
	op  string // what failed, e.g. `collab: append to "doc"`
	err error  // the store's error
}

func (e *storeError) Error() string { return e.op + ": " + e.err.Error() }

func (e *storeError) Unwrap() error { return e.err }

func (e *storeError) Is(target error) bool { return target == ErrUnavailable }

// storeFailed returns the error of the store operation op that failed
// with err: a *storeError, or err itself when the caller's context ended
// (the store did not fail).
func storeFailed(err error, op string, args ...any) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &storeError{op: fmt.Sprintf(op, args...), err: err}
}

// versionError is the error for a version the document never had.
type versionError struct {
	version int64
	comment bool // the comment version is the culprit
}

func (e *versionError) Error() string {
	if e.comment {
		// Still "Invalid version": the client must reload in this case too.
		return fmt.Sprintf("Invalid version %d (commentVersion)", e.version)
	}
	return fmt.Sprintf("Invalid version %d", e.version)
}

func (e *versionError) Is(target error) bool { return target == ErrInvalidVersion }

// requestError is a malformed request: its text says why, and it matches
// ErrInvalidRequest.
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

func (e *requestError) Is(target error) bool { return target == ErrInvalidRequest }

func invalidf(format string, args ...any) error {
	return &requestError{msg: fmt.Sprintf(format, args...)}
}

// LimitError is returned when a request goes over one of the limits in
// Config (HTTP 413). Nothing was changed.
type LimitError struct {
	// What names the limit: "steps", "comment events", "document size",
	// "document bytes (JSON)", "bytes in the text of comment event N",
	// "comments", "bytes of comments (Limits.MaxCommentBytes)" or
	// "checkpoints (Limits.MaxCheckpoints)".
	What string
	// Limit is the configured maximum.
	Limit int
	// Value is what the request asked for (or would have produced).
	Value int
}

// Error returns a message such as "steps over the limit: 1200 > 1000".
func (e *LimitError) Error() string {
	return fmt.Sprintf("%s over the limit: %d > %d", e.What, e.Value, e.Limit)
}

// RateError is a request refused because its client goes over a rate
// or connection limit (HTTP 429, with Retry-After): it may try again
// after RetryAfter. Nothing changed.
type RateError struct {
	// Msg names the limit and its field, as in
	// "(Limits.MaxCreatesPerHour)".
	Msg string
	// RetryAfter is how long the client should wait.
	RetryAfter time.Duration
}

func (e *RateError) Error() string { return e.Msg }

// RefusedError is a submission refused by Config.BeforeSubmit: Err is the
// hook's error, whose text is the answer's message. It matches
// ErrForbidden when Err does (HTTP 403); other refusals are answered with
// 422. Nothing was stored.
type RefusedError struct {
	Err error
}

func (e *RefusedError) Error() string { return e.Err.Error() }

func (e *RefusedError) Unwrap() error { return e.Err }
