package server

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
)

// exchange is the state of one request: the ResponseWriter its handlers
// write to (recording the status and size of the answer), its buffers,
// reused through a pool, and what the access log reports.
type exchange struct {
	http.ResponseWriter

	body []byte // the request body
	out  []byte // the answer

	start  time.Time
	status int
	bytes  int
	steps  int
	err    string
	waited time.Duration // of a long poll: the time spent waiting for news
	// reserved is the bytes of the body budget (Limits.MaxBodyMemory)
	// that the request holds, released when it ends.
	reserved int64
	// mem is the memory budget that the request holds for its answer
	// (answers.go), and largeClient the client whose large answer it is
	// counted as ("" when it is not one).
	mem         *collab.Reservation
	largeClient string

	principal Principal // as the policy authenticated the request

	route     string // the route's label for Observer.Request ("" for none)
	doc       string // the route's document id, once checked (for the log)
	requestID string // X-Request-Id, the client's or generated (log.go)
	submits   bool   // a submission of the collab API (Observer.Submission)
	// expected marks a 5xx that is the server working as meant (/readyz
	// while draining): logged at INFO, not ERROR.
	expected bool
}

// WriteHeader records the status and sends it.
func (x *exchange) WriteHeader(status int) {
	if x.status == 0 {
		x.status = status
	}
	x.ResponseWriter.WriteHeader(status)
}

// Write records the size of the answer and sends b.
func (x *exchange) Write(b []byte) (int, error) {
	if x.status == 0 {
		x.status = http.StatusOK
	}
	n, err := x.ResponseWriter.Write(b)
	x.bytes += n
	return n, err
}

// Unwrap gives http.ResponseController the underlying writer.
func (x *exchange) Unwrap() http.ResponseWriter { return x.ResponseWriter }

// httpIO reads requests and writes answers: the pool of exchanges, the
// body limit and budget, and the error answers.
type httpIO struct {
	exchanges sync.Pool   // of *exchange
	bodies    *bodyBudget // Limits.MaxBodyMemory
	maxBody   int64       // Limits.MaxBodyBytes
	names     settingNames
	jsonType  []string // the Content-Type of answers (never modified)
}

// Buffers up to maxPooledBuffer are kept for reuse; larger ones (rare
// requests near the body limit) are left to the garbage collector.
const maxPooledBuffer = 4 << 20

// preallocBody is the largest declared Content-Length read into a buffer
// of that size at once; a larger body grows its buffer as it arrives, so
// that a client declaring a large body costs memory only as it sends it.
const preallocBody = 1 << 20

func (s *httpIO) getExchange(w http.ResponseWriter) *exchange {
	x, ok := s.exchanges.Get().(*exchange)
	if !ok {
		x = &exchange{}
	}
	x.ResponseWriter = w
	return x
}

func (s *httpIO) putExchange(x *exchange) {
	if cap(x.body) > maxPooledBuffer {
		x.body = nil
	}
	if cap(x.out) > maxPooledBuffer {
		x.out = nil
	}
	*x = exchange{body: x.body[:0], out: x.out[:0]}
	s.exchanges.Put(x)
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

// readJSONBody checks that the request is JSON (415 otherwise) and reads
// its body (readBody).
func (s *httpIO) readJSONBody(x *exchange, r *http.Request) ([]byte, error) {
	if ct := r.Header["Content-Type"]; len(ct) > 0 && !isJSON(ct[0]) {
		return nil, &httpError{http.StatusUnsupportedMediaType,
			"unsupported Content-Type " + strconv.Quote(ct[0]) + ": send application/json (UTF-8)"}
	}
	return s.readBody(x, r)
}

// readBody reads the request body into x.body, up to the limit (413
// above); a body that cannot be read is a 400. It first reserves the
// body's size in the budget of request bodies (503 when there is no room
// in time), which the request holds until it ends.
func (s *httpIO) readBody(x *exchange, r *http.Request) ([]byte, error) {
	limit := s.maxBody
	tooLarge := func() ([]byte, error) {
		return nil, &httpError{http.StatusRequestEntityTooLarge,
			"request body too large: over the limit of " + strconv.FormatInt(limit, 10) + " bytes"}
	}
	unreadable := func(err error) ([]byte, error) {
		return nil, &httpError{http.StatusBadRequest, "reading the request body: " + err.Error()}
	}
	n := r.ContentLength
	if n > limit {
		return tooLarge()
	}
	reserve := n
	if n < 0 {
		reserve = limit
	}
	if !s.bodies.reserve(r.Context(), reserve) {
		return nil, &bodyMemoryError{limit: s.bodies.limit}
	}
	x.reserved += reserve
	buf := x.body[:0]
	if n >= 0 && n <= preallocBody {
		// The common case: the whole body in one read into a buffer of
		// its size (net/http stops the body at Content-Length).
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		x.body = buf
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return unreadable(err)
		}
		return buf, nil
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
			if held := int64(cap(buf)); n < 0 && held < reserve {
				// The body's real size, now known.
				s.bodies.release(reserve - held)
				x.reserved -= reserve - held
			}
			return buf, nil
		}
		if err != nil {
			return unreadable(err)
		}
	}
}

// write sends a JSON answer: one Write with its Content-Length.
func (s *httpIO) write(x *exchange, status int, body []byte) {
	h := x.Header()
	h["Content-Type"] = s.jsonType
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	x.WriteHeader(status)
	x.Write(body)
}

// writeError sends the error answer {"error":{"step":i,"message":"…"}}
// ("step" when step >= 0), the settings that msg names named as
// Config.SettingName names them (names.go). Errors are answered through
// fail, which gives their status, step and message (errors.go).
func (s *httpIO) writeError(x *exchange, status, step int, msg string) {
	msg = s.names.named(msg)
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
	s.write(x, status, buf)
}

// fail answers err: its status, its headers (Allow, Retry-After,
// WWW-Authenticate) and {"error":{"step"?: i, "message": …}}.
func (s *httpIO) fail(x *exchange, err error) {
	a := answerOf(err)
	h := x.Header()
	var me *methodError
	switch {
	case a.status == http.StatusMethodNotAllowed && errors.As(err, &me):
		h["Allow"] = me.allow
	case a.status == http.StatusUnauthorized:
		h["Www-Authenticate"] = wwwAuthenticate
	case errors.Is(err, collab.ErrUnavailable) || errors.Is(err, collab.ErrContended):
		h.Set("Retry-After", retryAfterStorage)
	case errors.Is(err, collab.ErrOverloaded):
		h.Set("Retry-After", retryAfterMemory)
	case a.status == http.StatusTooManyRequests:
		var rate *collab.RateError
		if errors.As(err, &rate) {
			h.Set("Retry-After", retryAfter(rate.RetryAfter))
		}
	case errors.Is(err, collab.ErrStorageQuota):
		var q *collab.QuotaError
		if errors.As(err, &q) && q.RetryAfter > 0 {
			h.Set("Retry-After", retryAfter(q.RetryAfter))
		}
	}
	s.writeError(x, a.status, a.step, a.msg)
	if a.logCause {
		x.err = err.Error()
	}
}
