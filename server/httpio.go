package server

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pmauthority/pmauthority/internal/applyreq"
	"github.com/pmauthority/pmauthority/model"
)

// exchange is the state of one request: its buffers, reused through a
// pool, and what the access log reports.
type exchange struct {
	body []byte // the request body
	out  []byte // the answer

	start  time.Time
	status int
	bytes  int
	steps  int
	err    string
	waited time.Duration // of a long poll: the time spent waiting for news
}

// Buffers up to maxPooledBuffer are kept for reuse; larger ones (rare
// requests near the body limit) are left to the garbage collector.
const maxPooledBuffer = 4 << 20

// largeRequest is the body size from which requests take turns.
const largeRequest = 16 << 10

// preallocBody is the largest declared Content-Length read into a buffer
// of that size at once; a larger body grows its buffer as it arrives, so
// that a client declaring a large body costs memory only as it sends it.
const preallocBody = 1 << 20

func (s *Server) getExchange() *exchange {
	if x, ok := s.exchanges.Get().(*exchange); ok {
		return x
	}
	return &exchange{}
}

func (s *Server) putExchange(x *exchange) {
	if cap(x.body) > maxPooledBuffer {
		x.body = nil
	}
	if cap(x.out) > maxPooledBuffer {
		x.out = nil
	}
	*x = exchange{body: x.body[:0], out: x.out[:0]}
	s.exchanges.Put(x)
}

// apply answers an apply request.
func (s *Server) apply(w http.ResponseWriter, r *http.Request, x *exchange) {
	body, ok := s.readJSONBody(w, r, x)
	if !ok {
		return
	}
	out, n, err := s.applyBody(r.Context(), x.out[:0], body)
	x.steps = n
	if err != nil {
		var f *applyreq.Failure
		if !errors.As(err, &f) {
			panic(err) // Apply returns only Failures
		}
		s.writeError(w, x, failureStatus(f), f.Step, f.Message)
		return
	}
	x.out = out
	s.write(w, x, http.StatusOK, out)
}

// applyBody runs the request in body. Large requests take turns (see
// Config.ApplyWorkers); the turn ends before the answer is written, so
// that a client slow to read it holds no worker.
func (s *Server) applyBody(ctx context.Context, buf, body []byte) ([]byte, int, error) {
	if len(body) >= largeRequest {
		select {
		case s.workers <- struct{}{}:
			defer func() { <-s.workers }()
		case <-ctx.Done():
			return buf, 0, &applyreq.Failure{Step: -1, Message: "request canceled while waiting for a worker", Err: applyreq.ErrCanceled}
		}
	}
	return s.app.Apply(ctx, buf, body)
}

// failureStatus returns the status code of an apply failure.
func failureStatus(f *applyreq.Failure) int {
	switch f.Err {
	case applyreq.ErrStepFailed, applyreq.ErrInvalidDoc:
		return http.StatusUnprocessableEntity
	case applyreq.ErrTooManySteps, applyreq.ErrDocTooLarge:
		return http.StatusRequestEntityTooLarge
	case applyreq.ErrCanceled:
		// The client went away; nobody reads this answer.
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest // ErrMalformed, ErrTooDeep, ErrInvalidRequest, ErrUnknownSchema
}

// isJSON reports whether a Content-Type is JSON: application/json, with
// parameters, of which a charset must be UTF-8 (JSON is UTF-8, RFC 8259).
func isJSON(ct string) bool {
	if ct == "application/json" {
		return true
	}
	typ, params, err := mime.ParseMediaType(ct)
	if err != nil || typ != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8") || strings.EqualFold(cs, "utf8")
}

// readJSONBody checks that the request is JSON and reads its body. When
// either fails it answers the request (415, or readBody's status) and
// returns false.
func (s *Server) readJSONBody(w http.ResponseWriter, r *http.Request, x *exchange) ([]byte, bool) {
	if ct := r.Header["Content-Type"]; len(ct) > 0 && !isJSON(ct[0]) {
		s.writeError(w, x, http.StatusUnsupportedMediaType, -1,
			"unsupported Content-Type "+strconv.Quote(ct[0])+": send application/json (UTF-8)")
		return nil, false
	}
	body, status, msg := s.readBody(r, x)
	if status != 0 {
		s.writeError(w, x, status, -1, msg)
		return nil, false
	}
	return body, true
}

// readBody reads the request body into x.body, up to the limit. On
// failure it returns the status and message of the answer.
func (s *Server) readBody(r *http.Request, x *exchange) ([]byte, int, string) {
	limit := s.limits.MaxBodyBytes
	tooLarge := func() ([]byte, int, string) {
		return nil, http.StatusRequestEntityTooLarge,
			"request body too large: over the limit of " + strconv.FormatInt(limit, 10) + " bytes"
	}
	n := r.ContentLength
	if n > limit {
		return tooLarge()
	}
	buf := x.body[:0]
	if n >= 0 && n <= preallocBody {
		// The common case: the whole body in one read into a buffer of
		// its size (net/http stops the body at Content-Length).
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			x.body = buf
			return nil, http.StatusBadRequest, "reading the request body: " + err.Error()
		}
		x.body = buf
		return buf, 0, ""
	}
	// No Content-Length (chunked), or a large one: grow as it arrives,
	// reading up to one byte over the limit to notice a body over it.
	for {
		if len(buf) == cap(buf) {
			more := max(cap(buf), 64<<10)
			if n > 0 {
				more = min(more, int(n)+1-len(buf)) // room to read EOF
			}
			more = min(more, int(limit)+1-len(buf))
			buf = slices.Grow(buf, more)
		}
		m, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		x.body = buf
		if int64(len(buf)) > limit {
			return tooLarge()
		}
		if err == io.EOF {
			return buf, 0, ""
		}
		if err != nil {
			return nil, http.StatusBadRequest, "reading the request body: " + err.Error()
		}
	}
}

// write sends an answer: one Write with its Content-Length.
func (s *Server) write(w http.ResponseWriter, x *exchange, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = s.jsonType
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	x.status, x.bytes = status, len(body)
	w.Write(body)
}

// writeError sends the error answer {"error":{"step":i,"message":"…"}}
// ("step" when step >= 0).
func (s *Server) writeError(w http.ResponseWriter, x *exchange, status, step int, msg string) {
	buf := append(x.out[:0], `{"error":{`...)
	if step >= 0 {
		buf = append(buf, `"step":`...)
		buf = strconv.AppendInt(buf, int64(step), 10)
		buf = append(buf, ',')
	}
	buf = append(buf, `"message":`...)
	buf = model.AppendJSONString(buf, msg)
	buf = append(buf, "}}"...)
	x.out = buf
	x.err = msg
	s.write(w, x, status, buf)
}
