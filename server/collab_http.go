package server

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/docid"
	"github.com/pmauthority/pmauthority/model"
)

// DefaultPollTimeout is how long GET /docs/{id}/events waits for news
// before answering {}.
const DefaultPollTimeout = 60 * time.Second

// docID checks a document id (a path segment, unescaped) by the one rule
// of internal/docid: any name of 1 to 512 bytes of UTF-8 without control
// characters (NUL, C0, DEL, C1), other than "." and "..". The id is data
// everywhere (the store keeps it as text, URLs carry it percent-encoded),
// never a file path, so spaces, accents, emoji and "/" (as %2F) are names
// like others. Its error is a 400.
func docID(id string) (string, error) {
	if err := docid.Check(id); err != nil {
		shown := id
		if len(shown) > 64 {
			shown = strings.ToValidUTF8(shown[:64], "") + "…"
		}
		return "", &httpError{http.StatusBadRequest, "invalid document id " + strconv.Quote(shown) + ": " + err.Error()}
	}
	return id, nil
}

// getDocAt answers GET /docs/{id}?version=N: {"doc", "version"}.
func (s *api) getDocAt(x *exchange, r *http.Request, id string) {
	version, err := queryVersion(r.URL.RawQuery, "version")
	if err != nil {
		s.fail(x, err)
		return
	}
	doc, err := s.collab.DocAtReserved(r.Context(), id, version, s.answerMemory(x))
	if err == nil {
		err = s.holdAnswer(x, r, int64(doc.JSONSize())+64)
	}
	if err != nil {
		s.fail(x, err)
		return
	}
	buf := append(x.out[:0], `{"doc":`...)
	buf = doc.AppendJSON(buf)
	buf = append(buf, `,"version":`...)
	buf = strconv.AppendInt(buf, version, 10)
	x.out = append(buf, '}')
	s.write(x, http.StatusOK, x.out)
}

// listDocs answers GET /docs: with a policy that is a ReadFilter, only
// the documents that the request's principal may read.
func (s *api) listDocs(x *exchange, r *http.Request, _ string) {
	docs, err := s.collab.List(r.Context())
	if err == nil {
		size := int64(2)
		for _, d := range docs {
			size += int64(len(d.ID)) + 96
		}
		err = s.holdAnswer(x, r, size)
	}
	if err != nil {
		s.fail(x, err)
		return
	}
	filter, _ := s.policy.(ReadFilter)
	buf := append(x.out[:0], '[')
	n := 0
	for _, d := range docs {
		if filter != nil && !filter.MayRead(x.principal, d.ID) {
			continue
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		n++
		buf = append(buf, `{"id":`...)
		buf = model.AppendJSONString(buf, d.ID)
		buf = append(buf, `,"users":`...)
		buf = strconv.AppendInt(buf, int64(d.Users), 10)
		buf = append(buf, `,"version":`...)
		buf = strconv.AppendInt(buf, d.Version, 10)
		if !d.Updated.IsZero() {
			buf = append(buf, `,"updated":"`...)
			buf = d.Updated.UTC().AppendFormat(buf, time.RFC3339Nano)
			buf = append(buf, '"')
		}
		buf = append(buf, '}')
	}
	x.out = append(buf, ']')
	s.write(x, http.StatusOK, x.out)
}

// getDoc answers GET /docs/{id}, and with ?version=N getDocAt.
func (s *api) getDoc(x *exchange, r *http.Request, id string) {
	if r.Method == http.MethodHead {
		// A HEAD reads: unlike GET (as in the demo), it creates nothing.
		ok, err := s.collab.Exists(r.Context(), id)
		if err == nil && !ok {
			err = fmt.Errorf("collab: %q: %w", id, collab.ErrNotFound)
		}
		if err != nil {
			s.fail(x, err)
			return
		}
	}
	if _, ok := queryValue(r.URL.RawQuery, "version"); ok && r.Method == http.MethodGet {
		s.getDocAt(x, r, id)
		return
	}
	st, err := s.collab.Get(r.Context(), id, s.client(r, x.principal))
	if err == nil {
		err = s.holdAnswer(x, r, stateSize(st))
	}
	if err != nil {
		s.fail(x, err)
		return
	}
	x.out = st.AppendJSON(x.out[:0])
	s.write(x, http.StatusOK, x.out)
}

// pollEvents answers GET /docs/{id}/events: at once when the client is
// behind, otherwise when something is published or the user count
// changes, the poll times out ({}), the client goes away or the server
// shuts down ({} too). With threadVersion=T, the answer follows threads
// after T, and changed threads alone answer too
// (collab.Subscription.FollowThreads).
func (s *api) pollEvents(x *exchange, r *http.Request, id string) {
	version, err := queryVersion(r.URL.RawQuery, "version")
	var cv int64
	if err == nil {
		cv, err = queryVersion(r.URL.RawQuery, "commentVersion")
	}
	if err != nil {
		s.fail(x, err)
		return
	}
	tv := int64(-1)
	if _, found := queryValue(r.URL.RawQuery, "threadVersion"); found && err == nil {
		tv, err = queryVersion(r.URL.RawQuery, "threadVersion")
	}
	if err != nil {
		s.fail(x, err)
		return
	}
	s.waitEvents(x, r, id, version, cv, tv)
}

// waitEvents answers a long poll: at once when there are steps or comment
// events after version and cv, else when the next change is published or
// when the document's user count changes (the events answer without steps,
// with the new count, as the demo server sends so that clients update
// their "N users"), or with {} after the poll timeout, when the client
// goes away, or at shutdown. With a thread version tv (-1: none), the
// threads changed after it are news too.
func (s *api) waitEvents(x *exchange, r *http.Request, id string, version, cv, tv int64) {
	user := s.client(r, x.principal)
	// First without waiting: a client that is behind (after every edit)
	// is answered without the timer and deadlines a wait needs.
	ev, err := s.events(r.Context(), id, user, version, cv, tv)
	if err == nil && len(ev.Steps) == 0 && len(ev.Comment) == 0 && !(tv >= 0 && ev.ThreadVersion != tv) {
		// Nothing to tell (collab.Events decides as the demo does):
		// wait for news or a new user count. The connection's read and
		// write deadlines (Timeouts) would cut a wait longer than they
		// are, so this request gets its own. A waiting poll counts as a
		// connection (Limits.MaxConns, MaxClientConns).
		if err := s.takeConn(user); err != nil {
			s.fail(x, err)
			return
		}
		defer s.dropConn(user)
		if s.obs != nil {
			s.obs.Connections(TransportLongPoll, 1)
			defer s.obs.Connections(TransportLongPoll, -1)
		}
		rc := http.NewResponseController(x)
		deadline := time.Now().Add(s.pollTimeout + s.writeTimeout)
		rc.SetReadDeadline(deadline)
		rc.SetWriteDeadline(deadline)
		ctx, cancel := context.WithTimeout(r.Context(), s.pollTimeout)
		stop := context.AfterFunc(s.polls, cancel)
		start := time.Now()
		ev, err = s.nextEvents(ctx, id, user, version, cv, tv)
		x.waited = time.Since(start)
		done := ctx.Err() // before cancel, which sets it
		stop()
		cancel()
		if err != nil && done != nil {
			// Timed out, the client went away, or shutdown: {} asks the
			// client to poll again.
			s.write(x, http.StatusOK, emptyObject)
			return
		}
	}
	if err == nil {
		err = s.holdAnswer(x, r, eventsSize(ev))
	}
	if err != nil {
		s.fail(x, err)
		return
	}
	x.steps = len(ev.Steps)
	x.out = ev.AppendJSON(x.out[:0])
	s.write(x, http.StatusOK, x.out)
}

// events returns the events of the document id after version and cv,
// and the threads after tv unless it is negative.
func (s *api) events(ctx context.Context, id, user string, version, cv, tv int64) (collab.Events, error) {
	if tv < 0 {
		return s.collab.Events(ctx, id, user, version, cv)
	}
	return s.collab.EventsWithThreads(ctx, id, user, version, cv, tv)
}

// nextEvents waits, on a subscription of user to the document id at
// version and cv (following threads after tv unless it is negative), for
// its first news, and returns it.
func (s *api) nextEvents(ctx context.Context, id, user string, version, cv, tv int64) (collab.Events, error) {
	sub, err := s.collab.Subscribe(ctx, id, user, version, cv)
	if err != nil {
		return collab.Events{}, err
	}
	defer sub.Close()
	if tv >= 0 {
		sub.FollowThreads(tv)
	}
	if s.pollWaiting != nil {
		s.pollWaiting(id, 1)
		defer s.pollWaiting(id, -1)
	}
	return sub.Next(ctx)
}

var emptyObject = []byte("{}")

// queryVersion reads the query parameter name (the first of that name)
// as a non-negative integer. Digits too many for an int64 read as
// math.MaxInt64, a version ahead of any document's. Its error is a 400.
func queryVersion(rawQuery, name string) (int64, error) {
	val, found := queryValue(rawQuery, name)
	if !found {
		return 0, &httpError{http.StatusBadRequest, "missing query parameter " + strconv.Quote(name) +
			": want ?version=V&commentVersion=C (non-negative integers)"}
	}
	ok := val != ""
	for i := 0; ok && i < len(val); i++ {
		ok = '0' <= val[i] && val[i] <= '9'
	}
	if !ok {
		if len(val) > 64 {
			val = val[:64] + "…"
		}
		return 0, &httpError{http.StatusBadRequest, "Not a non-negative integer: " + val + " (query parameter " + strconv.Quote(name) + ")"}
	}
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil {
		n = math.MaxInt64
	}
	return n, nil
}

// queryValue returns the value of the query parameter name (the first
// of that name), unescaped, and whether there is one.
func queryValue(rawQuery, name string) (val string, found bool) {
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
	return val, found
}

// submitEvents answers POST /docs/{id}/events. The route is authorized
// for ActionComment before the body is read; a submission with steps is
// authorized for ActionEdit too, or ActionSuggest (authorizeSteps).
func (s *api) submitEvents(x *exchange, r *http.Request, id string) { s.submit(x, r, id, false) }

// submitCommit answers POST /docs/{id}/commits (commit mode), authorized
// as submitEvents is.
func (s *api) submitCommit(x *exchange, r *http.Request, id string) { s.submit(x, r, id, true) }

// submit answers a submission, or with commit a commit.
func (s *api) submit(x *exchange, r *http.Request, id string, commit bool) {
	client := s.client(r, x.principal)
	if err := s.takeSubmission(client); err != nil {
		s.fail(x, err)
		return
	}
	body, err := s.readJSONBody(x, r)
	if err != nil {
		s.fail(x, err)
		return
	}
	sc := getCollabScratch()
	defer putCollabScratch(sc, len(body))
	sub, n, err := decodeSubmission(sc, body, s.limits.MaxDepth, s.collab.Limits().MaxSteps, commit)
	x.steps = n
	if err == nil && len(sub.Steps) > 0 {
		sub.SuggestOnly, err = authorizeSteps(r.Context(), s.policy, x.principal, id)
	}
	if err != nil {
		s.fail(x, err)
		return
	}
	sub.Author = x.principal.ID
	sub.OwnComments = s.ownCommentsOnly(r.Context(), x.principal, id, sub)
	res, err := s.collab.Submit(r.Context(), id, client, sub)
	if err != nil {
		s.fail(x, err)
		return
	}
	if commit {
		x.out = appendCommitResult(x.out[:0], res)
	} else {
		x.out = appendResult(x.out[:0], res)
	}
	s.write(x, http.StatusOK, x.out)
}

// ownCommentsOnly reports whether p may edit and delete only the
// comments and replies it created with sub
// (collab.Submission.OwnComments): when sub edits or deletes some and the
// policy point does not authorize p for ActionAdmin on the document id
// (admins change anyone's).
func (s *api) ownCommentsOnly(ctx context.Context, p Principal, id string, sub collab.Submission) bool {
	changes := slices.ContainsFunc(sub.Comments, func(e collab.CommentEvent) bool {
		return e.Type == collab.CommentDelete || e.Type == collab.CommentDeleteReply || e.Type == collab.CommentEdit
	})
	return changes && s.policy.Authorize(ctx, p, id, ActionAdmin) != nil
}

// appendResult appends a submission's answer: {"version",
// "commentVersion"}.
func appendResult(buf []byte, res collab.Result) []byte {
	buf = append(buf, `{"version":`...)
	buf = strconv.AppendInt(buf, res.Version, 10)
	buf = append(buf, `,"commentVersion":`...)
	buf = strconv.AppendInt(buf, res.CommentVersion, 10)
	return append(buf, '}')
}

// appendCommitResult appends a commit's answer: {"from", "version",
// "steps", "dropped", "commentVersion"}.
func appendCommitResult(buf []byte, res collab.Result) []byte {
	c := res.Commit
	if c == nil { // not a commit: nothing was rebased
		c = &collab.Committed{From: res.Version}
	}
	buf = append(buf, `{"from":`...)
	buf = strconv.AppendInt(buf, c.From, 10)
	buf = append(buf, `,"version":`...)
	buf = strconv.AppendInt(buf, res.Version, 10)
	buf = append(buf, `,"steps":[`...)
	for i, st := range c.Steps {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, st...)
	}
	buf = append(buf, `],"dropped":[`...)
	for i, d := range c.Dropped {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, int64(d), 10)
	}
	buf = append(buf, `],"commentVersion":`...)
	buf = strconv.AppendInt(buf, res.CommentVersion, 10)
	return append(buf, '}')
}
