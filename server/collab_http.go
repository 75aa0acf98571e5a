package server

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// DefaultPollTimeout is how long GET /docs/{id}/events waits for news
// before answering {}.
const DefaultPollTimeout = 60 * time.Second

// maxDocID is the longest document id, in bytes.
const maxDocID = 128

// maxSafeInt is the largest integer a JavaScript number holds exactly
// (Number.MAX_SAFE_INTEGER + 1, which is still exact).
const maxSafeInt = 1 << 53

var allowGetPost = []string{"GET, POST"}

// collabScratch is the memory a POST /docs/{id}/events decodes into,
// reused through a pool.
type collabScratch struct {
	d        jsonscan.Decoder
	steps    [][]byte
	comments []collab.CommentEvent
}

// serveCollab answers a request for the collab API, the routes of the
// ProseMirror website's collab demo server:
//
//	GET  /docs               [{"id": …, "users": n}, …]
//	GET  /docs/{id}          {"doc": …, "users": n, "version": v, "comments": […], "commentVersion": c}
//	GET  /docs/{id}/events   ?version=V&commentVersion=C: the events after them, at once or as soon as
//	                         there are some, or when the user count changes (with no steps; {} after
//	                         Config.PollTimeout)
//	POST /docs/{id}/events   {"version": V, "steps": […], "clientID": id, "comment": […]}
//	                         → {"version": …, "commentVersion": …}
//
// As in the demo, one trailing slash is allowed. It reports false for a
// path that is none of these, leaving the answer to the caller.
func (s *Server) serveCollab(w http.ResponseWriter, r *http.Request, x *exchange) bool {
	// Split the escaped path, so that an id holding an escaped '/' stays
	// one segment (and is then refused as an id).
	p := r.URL.EscapedPath()
	rest, ok := strings.CutPrefix(p, "/docs")
	if !ok {
		return false
	}
	if rest == "" || rest == "/" {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.methodNotAllowed(w, r, x, s.allowGet)
			return true
		}
		s.listDocs(w, r, x)
		return true
	}
	if rest[0] != '/' {
		return false
	}
	rest = strings.TrimSuffix(rest[1:], "/")
	seg, tail, hasTail := strings.Cut(rest, "/")
	switch {
	case !hasTail:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.methodNotAllowed(w, r, x, s.allowGet)
			return true
		}
	case tail == "events":
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			s.methodNotAllowed(w, r, x, allowGetPost)
			return true
		}
	default:
		return false
	}
	id, msg := docID(seg)
	if msg != "" {
		s.writeError(w, x, http.StatusBadRequest, -1, msg)
		return true
	}
	switch {
	case !hasTail:
		s.getDoc(w, r, x, id)
	case r.Method == http.MethodGet:
		s.pollEvents(w, r, x, id)
	default:
		s.submitEvents(w, r, x, id)
	}
	return true
}

// docID unescapes and checks the id segment of a path: 1 to 128 bytes of
// A-Z a-z 0-9 . _ ~ -. On failure it returns the error message.
func docID(seg string) (string, string) {
	id := seg
	if strings.IndexByte(seg, '%') >= 0 {
		var err error
		if id, err = url.PathUnescape(seg); err != nil {
			id = seg
		}
	}
	ok := len(id) >= 1 && len(id) <= maxDocID
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '.' || c == '_' || c == '~' || c == '-'
	}
	// Browsers and proxies resolve "." and ".." in URLs, so no client
	// could reach such a document.
	if id == "." || id == ".." {
		return "", "invalid document id " + strconv.Quote(id) + ": not . or .."
	}
	if !ok {
		if len(id) > maxDocID {
			id = id[:maxDocID] + "…"
		}
		return "", "invalid document id " + strconv.Quote(id) + ": want 1 to 128 characters of A-Z a-z 0-9 . _ ~ -"
	}
	return id, ""
}

// user returns who is asking, for the user counts: the client's IP
// address, or with Config.TrustProxy the first address of
// X-Forwarded-For when it holds one.
func (s *Server) user(r *http.Request) string {
	if s.trustProxy {
		if v := r.Header["X-Forwarded-For"]; len(v) > 0 {
			first, _, _ := strings.Cut(v[0], ",")
			first = strings.TrimSpace(first)
			if _, err := netip.ParseAddr(first); err == nil {
				return first
			}
			if ap, err := netip.ParseAddrPort(first); err == nil {
				return ap.Addr().String()
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// listDocs answers GET /docs.
func (s *Server) listDocs(w http.ResponseWriter, r *http.Request, x *exchange) {
	docs, err := s.collab.List(r.Context())
	if err != nil {
		s.collabError(w, x, err)
		return
	}
	buf := append(x.out[:0], '[')
	for i, d := range docs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"id":`...)
		buf = model.AppendJSONString(buf, d.ID)
		buf = append(buf, `,"users":`...)
		buf = strconv.AppendInt(buf, int64(d.Users), 10)
		buf = append(buf, '}')
	}
	x.out = append(buf, ']')
	s.write(w, x, http.StatusOK, x.out)
}

// getDoc answers GET /docs/{id}.
func (s *Server) getDoc(w http.ResponseWriter, r *http.Request, x *exchange, id string) {
	st, err := s.collab.Get(r.Context(), id, s.user(r))
	if err != nil {
		s.collabError(w, x, err)
		return
	}
	x.out = st.AppendJSON(x.out[:0])
	s.write(w, x, http.StatusOK, x.out)
}

// pollEvents answers GET /docs/{id}/events: at once when the client is
// behind, otherwise when something is published or the user count
// changes, the poll times out ({}), the client goes away or the server
// shuts down ({} too).
func (s *Server) pollEvents(w http.ResponseWriter, r *http.Request, x *exchange, id string) {
	version, status, msg := queryVersion(r.URL.RawQuery, "version")
	if status == 0 {
		var cv int64
		cv, status, msg = queryVersion(r.URL.RawQuery, "commentVersion")
		if status == 0 {
			s.waitEvents(w, r, x, id, version, cv)
			return
		}
	}
	s.writeError(w, x, status, -1, msg)
}

// waitEvents answers a long poll: at once when there are steps or comment
// events after version and cv, else when the next change is published or
// when the document's user count changes (the events answer without steps,
// with the new count, as the demo server sends so that clients update
// their "N users"), or with {} after the poll timeout, when the client
// goes away, or at shutdown.
func (s *Server) waitEvents(w http.ResponseWriter, r *http.Request, x *exchange, id string, version, cv int64) {
	user := s.user(r)
	// First without waiting: a client that is behind (after every edit)
	// is answered without the timer and deadlines a wait needs.
	ev, err := s.collab.Events(r.Context(), id, user, version, cv, false)
	if err == nil && len(ev.Steps) == 0 && len(ev.Comment) == 0 {
		// Nothing to tell (collab.Events decides as the demo does):
		// wait for news or a new user count. The connection's read and
		// write deadlines (Timeouts) would cut a wait longer than they
		// are, so this request gets its own.
		rc := http.NewResponseController(w)
		deadline := time.Now().Add(s.pollTimeout + s.timeouts.Write)
		rc.SetReadDeadline(deadline)
		rc.SetWriteDeadline(deadline)
		ctx, cancel := context.WithTimeout(r.Context(), s.pollTimeout)
		stop := context.AfterFunc(s.polls, cancel)
		start := time.Now()
		ev, err = s.collab.Events(ctx, id, user, version, cv, true)
		x.waited = time.Since(start)
		stop()
		cancel()
		if err != nil && ctx.Err() != nil {
			// Timed out, the client went away, or shutdown: {} asks the
			// client to poll again.
			s.write(w, x, http.StatusOK, emptyObject)
			return
		}
	}
	if err != nil {
		s.collabError(w, x, err)
		return
	}
	x.steps = len(ev.Steps)
	x.out = ev.AppendJSON(x.out[:0])
	s.write(w, x, http.StatusOK, x.out)
}

var emptyObject = []byte("{}")

// queryVersion reads the query parameter name (the first of that name)
// as a non-negative integer. Digits too many for an int64 read as
// math.MaxInt64, a version ahead of any document's. On failure it returns
// the status and message of the answer.
func queryVersion(rawQuery, name string) (int64, int, string) {
	val, found := "", false
	for q := rawQuery; q != "" && !found; {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		key, v, _ := strings.Cut(pair, "=")
		if strings.ContainsAny(key, "%+") {
			key, _ = url.QueryUnescape(key)
		}
		if key == name {
			val, found = v, true
			if strings.ContainsAny(v, "%+") {
				var err error
				if val, err = url.QueryUnescape(v); err != nil {
					val = v
				}
			}
		}
	}
	if !found {
		return 0, http.StatusBadRequest, "missing query parameter " + strconv.Quote(name) +
			": want ?version=V&commentVersion=C (non-negative integers)"
	}
	ok := val != ""
	for i := 0; ok && i < len(val); i++ {
		ok = '0' <= val[i] && val[i] <= '9'
	}
	if !ok {
		if len(val) > 64 {
			val = val[:64] + "…"
		}
		return 0, http.StatusBadRequest, "Not a non-negative integer: " + val + " (query parameter " + strconv.Quote(name) + ")"
	}
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil {
		n = math.MaxInt64
	}
	return n, 0, ""
}

// submitEvents answers POST /docs/{id}/events.
func (s *Server) submitEvents(w http.ResponseWriter, r *http.Request, x *exchange, id string) {
	body, ok := s.readJSONBody(w, r, x)
	if !ok {
		return
	}
	sc, _ := s.collabScratch.Get().(*collabScratch)
	if sc == nil {
		sc = &collabScratch{}
	}
	defer s.putCollabScratch(sc, len(body))
	sub, n, status, msg := s.decodeSubmission(sc, body)
	x.steps = n
	if status != 0 {
		s.writeError(w, x, status, -1, msg)
		return
	}
	res, err := s.collab.Submit(r.Context(), id, s.user(r), sub)
	if err != nil {
		s.collabError(w, x, err)
		return
	}
	buf := append(x.out[:0], `{"version":`...)
	buf = strconv.AppendInt(buf, res.Version, 10)
	buf = append(buf, `,"commentVersion":`...)
	buf = strconv.AppendInt(buf, res.CommentVersion, 10)
	x.out = append(buf, '}')
	s.write(w, x, http.StatusOK, x.out)
}

func (s *Server) putCollabScratch(sc *collabScratch, n int) {
	sc.d.Reset(nil)
	clear(sc.steps)
	clear(sc.comments)
	sc.steps, sc.comments = sc.steps[:0], sc.comments[:0]
	if n <= maxPooledBuffer {
		s.collabScratch.Put(sc)
	}
}

var (
	submitKeys  = jsonscan.NewKeys("version", "steps", "clientID", "comment")
	commentKeys = jsonscan.NewKeys("type", "id", "from", "to", "text")
)

// decodeSubmission reads a POST /docs/{id}/events body: {"version": V,
// "steps": […], "clientID": id, "comment": […]}, where a missing or null
// "steps", "clientID" or "comment" is none. Other keys are ignored; of
// duplicate keys the last wins, as with JSON.parse. The authority checks
// the values (a client id is an integer from 0 to 2^53 or a short string,
// needed with steps); this checks the JSON types. The submission's steps
// point into body. On failure it returns the status and message of the
// answer; n is the number of steps.
func (s *Server) decodeSubmission(sc *collabScratch, body []byte) (sub collab.Submission, n, status int, msg string) {
	bad := func(m string) (collab.Submission, int, int, string) {
		return collab.Submission{}, n, http.StatusBadRequest, m
	}
	d := &sc.d
	d.Reset(body)
	d.SetMaxDepth(s.limits.MaxDepth)
	if len(body) == 0 {
		return bad(`empty request: expected {"version": V, "steps": […], "clientID": ID, "comment": […]}`)
	}
	var (
		problems   [4]string // of version, steps, clientID, comment: the field's type is wrong
		hasVersion bool
		truncated  bool // over Limits.MaxSteps
	)
	k, err := d.Peek()
	if err != nil {
		return bad(syntaxMessage(d, err))
	}
	if k != jsonscan.Object {
		if err = d.Skip(); err == nil {
			err = d.End()
		}
		if err != nil {
			return bad(syntaxMessage(d, err))
		}
		return bad("invalid request: the request must be a JSON object (found " + k.String() + ")")
	}
	if err := d.BeginObject(); err != nil {
		return bad(syntaxMessage(d, err))
	}
	for {
		i, _, more, err := d.NextKeyIndex(submitKeys)
		if err != nil {
			return bad(syntaxMessage(d, err))
		}
		if !more {
			break
		}
		if i < 0 {
			if err := d.Skip(); err != nil {
				return bad(syntaxMessage(d, err))
			}
			continue
		}
		problems[i] = ""
		k, err := d.Peek()
		if err != nil {
			return bad(syntaxMessage(d, err))
		}
		switch i {
		case 0: // version
			hasVersion = false
			if k != jsonscan.Number {
				problems[i] = `"version" must be a non-negative integer (found ` + k.String() + ")"
				err = d.Skip()
				break
			}
			var f float64
			var raw []byte
			if f, raw, err = d.ReadNumber(); err != nil {
				break
			}
			if f != math.Trunc(f) || f < 0 {
				problems[i] = `"version" must be a non-negative integer (found ` + string(raw) + ")"
				break
			}
			// A version too large for an int64 is ahead of any document.
			sub.Version, hasVersion = math.MaxInt64, true
			if f < math.MaxInt64 {
				sub.Version = int64(f)
			}
		case 1: // steps
			sc.steps, n, truncated = sc.steps[:0], 0, false
			switch k {
			case jsonscan.Null:
				err = d.ReadNull()
			case jsonscan.Array:
				n, truncated, err = s.scanSteps(sc, d)
			default:
				problems[i] = `"steps" must be an array (found ` + k.String() + ")"
				err = d.Skip()
			}
		case 2: // clientID
			sub.ClientID = nil
			switch k {
			case jsonscan.Null:
				err = d.ReadNull()
			case jsonscan.Number, jsonscan.String:
				start := d.Pos()
				if err = d.Skip(); err == nil {
					// A copy: the authority keeps it, and body is reused.
					sub.ClientID = append(collab.ClientID(nil), body[start:d.Pos()]...)
				}
			default:
				problems[i] = `"clientID" must be a number or a string (found ` + k.String() + ")"
				err = d.Skip()
			}
		case 3: // comment
			sc.comments = sc.comments[:0]
			switch k {
			case jsonscan.Null:
				err = d.ReadNull()
			case jsonscan.Array:
				problems[i], err = scanComments(sc, d)
			default:
				problems[i] = `"comment" must be an array of comment events (found ` + k.String() + ")"
				err = d.Skip()
			}
		}
		if err != nil {
			return bad(syntaxMessage(d, err))
		}
	}
	if err := d.End(); err != nil {
		return bad(syntaxMessage(d, err))
	}
	for _, p := range problems {
		if p != "" {
			return bad("invalid request: " + p)
		}
	}
	if !hasVersion {
		return bad(`invalid request: missing "version"`)
	}
	if truncated {
		return collab.Submission{}, n, http.StatusRequestEntityTooLarge,
			"too many steps: the request has " + strconv.Itoa(n) + ", over the limit of " +
				strconv.Itoa(s.limits.MaxSteps) + " steps per request"
	}
	sub.Steps = sc.steps
	sub.Comments = sc.comments
	return sub, n, 0, ""
}

// scanSteps reads the "steps" array, noting each step (up to
// Limits.MaxSteps: the others are only counted, and truncated is set).
// Steps are decoded by the authority, with the document's schema.
func (s *Server) scanSteps(sc *collabScratch, d *jsonscan.Decoder) (n int, truncated bool, err error) {
	if err := d.BeginArray(); err != nil {
		return 0, false, err
	}
	data := d.Data()
	for {
		more, err := d.NextElem()
		if err != nil || !more {
			return n, truncated, err
		}
		if _, err := d.Peek(); err != nil {
			return n, truncated, err
		}
		start := d.Pos()
		if err := d.Skip(); err != nil {
			return n, truncated, err
		}
		n++
		if n > s.limits.MaxSteps {
			truncated = true
			continue
		}
		sc.steps = append(sc.steps, data[start:d.Pos():d.Pos()])
	}
}

// scanComments reads the "comment" array of comment events:
// {"type": "create", "id": n, "from": p, "to": p, "text": "…"} and
// {"type": "delete", "id": n}. It returns the first problem with a
// field's type, or a syntax error.
func scanComments(sc *collabScratch, d *jsonscan.Decoder) (problem string, err error) {
	if err := d.BeginArray(); err != nil {
		return "", err
	}
	for i := 0; ; i++ {
		more, err := d.NextElem()
		if err != nil || !more {
			return problem, err
		}
		ev, p, err := scanComment(d, i)
		if err != nil {
			return "", err
		}
		if problem == "" {
			problem = p
		}
		sc.comments = append(sc.comments, ev)
	}
}

// scanComment reads comment event i.
func scanComment(d *jsonscan.Decoder, i int) (ev collab.CommentEvent, problem string, err error) {
	field := func(name string) string {
		return `"comment[` + strconv.Itoa(i) + `]` + name + `"`
	}
	k, err := d.Peek()
	if err != nil {
		return ev, "", err
	}
	if k != jsonscan.Object {
		return ev, field("") + " must be an object (found " + k.String() + ")", d.Skip()
	}
	if err := d.BeginObject(); err != nil {
		return ev, "", err
	}
	var seen [5]bool // type, id, from, to, text
	var problems [5]string
	names := [5]string{".type", ".id", ".from", ".to", ".text"}
	for {
		j, _, more, err := d.NextKeyIndex(commentKeys)
		if err != nil {
			return ev, "", err
		}
		if !more {
			break
		}
		if j < 0 {
			if err := d.Skip(); err != nil {
				return ev, "", err
			}
			continue
		}
		k, err := d.Peek()
		if err != nil {
			return ev, "", err
		}
		seen[j], problems[j] = true, ""
		switch {
		case j == 0 && k == jsonscan.String:
			t, err := d.ReadStringBytes()
			if err != nil {
				return ev, "", err
			}
			switch string(t) {
			case collab.CommentCreate:
				ev.Type = collab.CommentCreate
			case collab.CommentDelete:
				ev.Type = collab.CommentDelete
			default:
				problems[j] = field(names[j]) + ` must be "create" or "delete"`
			}
		case j == 4 && k == jsonscan.String:
			if ev.Text, err = d.ReadString(); err != nil {
				return ev, "", err
			}
		case j >= 1 && j <= 3 && k == jsonscan.Number:
			f, raw, err := d.ReadNumber()
			if err != nil {
				return ev, "", err
			}
			lo, hi := 0.0, float64(math.MaxInt32) // positions
			if j == 1 {
				lo, hi = -maxSafeInt, maxSafeInt // ids
			}
			if f != math.Trunc(f) || f < lo || f > hi {
				what := "a non-negative integer position"
				if j == 1 {
					what = "an integer from -2^53 to 2^53"
				}
				problems[j] = field(names[j]) + " must be " + what + " (found " + string(raw) + ")"
				break
			}
			switch j {
			case 1:
				ev.ID = int64(f)
			case 2:
				ev.From = int(f)
			case 3:
				ev.To = int(f)
			}
		default:
			want := [5]string{"a string", "an integer", "a number", "a number", "a string"}[j]
			problems[j] = field(names[j]) + " must be " + want + " (found " + k.String() + ")"
			if err := d.Skip(); err != nil {
				return ev, "", err
			}
		}
	}
	for _, p := range problems {
		if p != "" {
			return ev, p, nil
		}
	}
	need := seen[:2] // type, id
	if ev.Type == collab.CommentCreate {
		need = seen[:]
	}
	for j, ok := range need {
		if !ok {
			return ev, "missing " + field(names[j]), nil
		}
	}
	return ev, "", nil
}

// syntaxMessage is the message of an error of d (a *jsonscan.SyntaxError).
func syntaxMessage(d *jsonscan.Decoder, err error) string {
	if errors.Is(err, jsonscan.ErrTooDeep) {
		return "JSON nested too deeply: over the limit of " + strconv.Itoa(d.MaxDepth()) + " levels of arrays and objects"
	}
	return err.Error()
}

// retryAfterStorage is the Retry-After of a 503 for a store failure, in
// seconds: a full disk or a lost database connection may take a while.
const retryAfterStorage = "1"

// collabError answers an error of the authority.
func (s *Server) collabError(w http.ResponseWriter, x *exchange, err error) {
	status, step, msg := collabStatus(err)
	if errors.Is(err, collab.ErrUnavailable) {
		w.Header().Set("Retry-After", retryAfterStorage)
	}
	s.writeError(w, x, status, step, msg)
	if status == http.StatusInternalServerError || errors.Is(err, collab.ErrUnavailable) {
		x.err = err.Error() // for the log
	}
}

// collabStatus maps an error of the authority to the status, step (-1
// when none) and message of the collab API's answer. The messages of 409,
// 410 and "Invalid version N" (400) are the demo server's, which clients
// test for.
func collabStatus(err error) (status, step int, msg string) {
	var stepErr *transform.StepError
	var limitErr *collab.LimitError
	switch {
	case errors.Is(err, collab.ErrConflict):
		return http.StatusConflict, -1, collab.ErrConflict.Error()
	case errors.Is(err, collab.ErrInvalidVersion):
		return http.StatusBadRequest, -1, err.Error()
	case errors.Is(err, collab.ErrHistoryGone):
		return http.StatusGone, -1, collab.ErrHistoryGone.Error()
	case errors.Is(err, collab.ErrNotFound):
		return http.StatusNotFound, -1, err.Error()
	case errors.Is(err, collab.ErrInvalidRequest):
		return http.StatusBadRequest, -1, err.Error()
	case errors.Is(err, collab.ErrClosed):
		return http.StatusServiceUnavailable, -1, "shutting down"
	case errors.Is(err, collab.ErrUnavailable):
		// The cause (the store's error) goes to the log, not to clients.
		return http.StatusServiceUnavailable, -1, "storage unavailable: try again later"
	case errors.As(err, &stepErr):
		return http.StatusUnprocessableEntity, stepErr.Index, stepErr.Err.Error()
	case errors.As(err, &limitErr):
		return http.StatusRequestEntityTooLarge, -1, err.Error()
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		// The client went away; nobody reads this answer.
		return http.StatusServiceUnavailable, -1, "request canceled: " + err.Error()
	}
	return http.StatusInternalServerError, -1, "internal server error"
}
