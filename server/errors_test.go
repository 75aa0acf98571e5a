package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/changeset"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/transform"
)

// TestAnswerOf checks the error table: status, step, message, headers
// and WebSocket close code of each kind of error.
func TestAnswerOf(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		step   int
		msg    string
		header string // "Name: value" set by fail
		close  websocket.StatusCode
	}{
		{&httpError{415, "bad type"}, 415, -1, "bad type", "", websocket.StatusPolicyViolation},
		{&methodError{"PUT", "/x", []string{"GET, HEAD"}}, 405, -1, "method PUT not allowed for /x (allowed: GET, HEAD)", "Allow: GET, HEAD", websocket.StatusPolicyViolation},
		{&notFoundError{"/x"}, 404, -1, "not found: no route for /x", "", websocket.StatusPolicyViolation},
		{&apply.Failure{Step: 2, Message: "Position 9 out of range", Err: apply.ErrStepFailed}, 422, 2, "Position 9 out of range", "", websocket.StatusPolicyViolation},
		{&apply.Failure{Step: -1, Message: "too many", Err: apply.ErrTooManySteps}, 413, -1, "too many", "", websocket.StatusPolicyViolation},
		{&apply.Failure{Step: -1, Message: "bad", Err: apply.ErrMalformed}, 400, -1, "bad", "", websocket.StatusPolicyViolation},
		{fmt.Errorf("expired: %w", ErrUnauthenticated), 401, -1, "expired: unauthenticated", `Www-Authenticate: Bearer error="invalid_token"`, websocket.StatusPolicyViolation},
		{fmt.Errorf("read only: %w", ErrForbidden), 403, -1, "read only: forbidden", "", websocket.StatusPolicyViolation},
		{&collab.RefusedError{Err: fmt.Errorf("not yours: %w", collab.ErrForbidden)}, 403, -1, "not yours: forbidden", "", websocket.StatusPolicyViolation},
		{&collab.RefusedError{Err: errors.New("no images")}, 422, -1, "no images", "", websocket.StatusPolicyViolation},
		{fmt.Errorf("x: %w", collab.ErrConflict), 409, -1, "Version not current", "", websocket.StatusPolicyViolation},
		{fmt.Errorf("Invalid version 9: %w", collab.ErrInvalidVersion), 400, -1, "Invalid version 9: Invalid version", "", wsCloseInvalidVersion},
		{collab.ErrHistoryGone, 410, -1, "History no longer available", "", websocket.StatusPolicyViolation},
		{fmt.Errorf("collab: %q: %w", "d", collab.ErrNotFound), 404, -1, `collab: "d": document not found`, "", wsCloseNotFound},
		{fmt.Errorf("collab: create %q: %w", "d", collab.ErrExists), 409, -1, `collab: create "d": document already exists`, "", websocket.StatusPolicyViolation},
		{fmt.Errorf("collab: checkpoint %q: %w", "c", collab.ErrCheckpointExists), 409, -1, `collab: checkpoint "c": checkpoint already exists`, "", websocket.StatusPolicyViolation},
		{collab.ErrClosed, 503, -1, "shutting down", "", websocket.StatusServiceRestart},
		{fmt.Errorf("disk full: %w", collab.ErrUnavailable), 503, -1, "storage unavailable: try again later", "Retry-After: 1", websocket.StatusInternalError},
		{fmt.Errorf("no room: %w", collab.ErrOverloaded), 503, -1, "no room: memory budget exhausted", "Retry-After: 2", websocket.StatusInternalError},
		{&transform.StepError{Index: 1, Err: errors.New("boom")}, 422, 1, "boom", "", websocket.StatusPolicyViolation},
		{fmt.Errorf("%w: spans", changeset.ErrInconsistent), 422, -1, "the changes between these versions cannot be computed (prosemirror-changeset fails on this history): changeset: inconsistent changes: spans", "", websocket.StatusPolicyViolation},
		{&collab.LimitError{What: "steps", Limit: 3, Value: 4}, 413, -1, "steps over the limit: 4 > 3", "", websocket.StatusPolicyViolation},
		{context.DeadlineExceeded, 503, -1, "request canceled: context deadline exceeded", "", websocket.StatusInternalError},
		{context.Canceled, 503, -1, "request canceled: context canceled", "", websocket.StatusServiceRestart},
		{errors.New("a bug"), 500, -1, "internal server error", "", websocket.StatusInternalError},
	} {
		a := answerOf(tc.err)
		if a.status != tc.status || a.step != tc.step || a.msg != tc.msg {
			t.Errorf("%v: %d %d %q, want %d %d %q", tc.err, a.status, a.step, a.msg, tc.status, tc.step, tc.msg)
		}
		if code, _ := wsCloseOf(tc.err, a.status); code != tc.close {
			t.Errorf("%v: close %d, want %d", tc.err, code, tc.close)
		}
		s, _ := newServer(t, Config{Logger: slog.New(slog.DiscardHandler)})
		rec := httptest.NewRecorder()
		x := s.getExchange(rec)
		s.fail(x, tc.err)
		if rec.Code != tc.status {
			t.Errorf("%v: answered %d", tc.err, rec.Code)
		}
		if want := `{"error":{` + stepField(tc.step) + `"message":` + strconv.Quote(tc.msg) + `}}`; rec.Body.String() != want {
			t.Errorf("%v: answer %s, want %s", tc.err, rec.Body, want)
		}
		for _, name := range []string{"Allow", "Www-Authenticate", "Retry-After"} {
			got := rec.Header().Get(name)
			want := ""
			if len(tc.header) > len(name) && tc.header[:len(name)] == name {
				want = tc.header[len(name)+2:]
			}
			if got != want {
				t.Errorf("%v: %s %q, want %q", tc.err, name, got, want)
			}
		}
		if a.status == http.StatusInternalServerError && x.err != tc.err.Error() {
			t.Errorf("%v: logged as %q", tc.err, x.err)
		}
	}
}

// stepField returns the "step" field of an error answer ("" for none).
func stepField(step int) string {
	if step < 0 {
		return ""
	}
	return `"step":` + strconv.Itoa(step) + ","
}
