package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/pmauthority/pmauthority/collab"
)

// Answers in the memory budget. A request of the collab API or the
// documents API reserves the memory of its answer, and of what it reads to
// build it (steps, a past version), in the authority's memory budget
// (collab.Reservation) before it builds it, and holds it until the answer
// is written: a client that reads slowly holds memory that is counted,
// and an answer that does not fit is refused with 503 and Retry-After. A
// large answer (LargeAnswer bytes or more) also takes one of its
// client's Limits.MaxClientAnswers, so that one client cannot take the
// budget from everyone with answers it does not read.

// answerMemory returns the request's reservation in the memory budget,
// made at its first use; nil without an authority.
func (s *api) answerMemory(x *exchange) *collab.Reservation {
	if x.mem == nil && s.collab != nil {
		x.mem = s.collab.Reserve("the answer of " + x.route)
	}
	return x.mem
}

// holdAnswer reserves n more bytes of the memory budget for the answer of
// the request (or what it holds to build it) until the request ends. It
// fails with a *collab.RateError (429) when the request's reservation
// reaches LargeAnswer and its client has Limits.MaxClientAnswers large
// answers already (after waiting up to largeAnswerWait for one of them),
// and with an error matching collab.ErrOverloaded (503) when the budget
// has no room.
func (s *api) holdAnswer(x *exchange, r *http.Request, n int64) error {
	mem := s.answerMemory(x)
	if err := s.takeLargeAnswer(x, r, mem.Size()+n); err != nil {
		return err
	}
	return mem.Grow(n)
}

// takeLargeAnswer counts the request's answer, of size bytes, as a large
// one of its client when it is (once per request), or refuses it with a
// *collab.RateError when the client has Limits.MaxClientAnswers.
func (s *api) takeLargeAnswer(x *exchange, r *http.Request, size int64) error {
	if size < LargeAnswer || x.largeClient != "" {
		return nil
	}
	client := s.client(r, x.principal)
	if client == "" {
		client = "-"
	}
	if err := s.large.take(r.Context(), client, s.large.wait); err != nil {
		return err
	}
	x.largeClient = client
	return nil
}

// releaseAnswer gives back what the request reserved for its answer, once
// it is written.
func (s *api) releaseAnswer(x *exchange) {
	if x.mem != nil {
		x.mem.Release()
		x.mem = nil
	}
	if x.largeClient != "" {
		s.large.drop(x.largeClient)
		x.largeClient = ""
	}
}

// wsHeld is the memory and the large answer that a WebSocket's welcome or
// snapshot holds until its writer has written it.
type wsHeld struct {
	mem    *collab.Reservation
	client string
}

// holdWelcome reserves, for a welcome or snapshot of n bytes to a
// WebSocket of user on document doc, the memory budget and, when it is large, one of its client's
// large answers, as holdAnswer does for an HTTP answer; nil for a small
// one (a connection's queue bounds those).
func (s *api) holdWelcome(user, doc string, n int) (*wsHeld, error) {
	if n < LargeAnswer || s.collab == nil {
		return nil, nil
	}
	client := user
	if client == "" {
		client = "-"
	}
	// Its hub is locked: it waits for nothing.
	if err := s.large.take(context.Background(), client, 0); err != nil {
		return nil, err
	}
	h := &wsHeld{mem: s.collab.Reserve("the welcome of a WebSocket of " + strconv.Quote(doc)), client: client}
	if err := h.mem.Resize(int64(n)); err != nil {
		s.large.drop(client)
		return nil, err
	}
	return h, nil
}

// releaseHeld gives back what h holds (nothing for nil).
func (s *api) releaseHeld(h *wsHeld) {
	if h != nil {
		h.mem.Release()
		s.large.drop(h.client)
	}
}

// Estimates of answers' sizes, before they are built: the JSON of their
// parts plus a little for the keys and punctuation.

// stateSize returns about the bytes of st's JSON (GET /docs/{id}).
func stateSize(st collab.State) int64 {
	n := int64(len(st.DocJSON)) + 128
	if st.DocJSON == nil && st.Doc != nil {
		n += int64(st.Doc.JSONSize())
	}
	return n + commentsSize(st.Comments)
}

// commentsSize returns about the bytes of the JSON of comments and their
// replies.
func commentsSize(comments []collab.Comment) int64 {
	n := int64(0)
	for _, c := range comments {
		n += int64(len(c.Text)+len(c.Author)) + 200
		for _, r := range c.Replies {
			n += int64(len(r.Text)+len(r.Author)) + 128
		}
	}
	return n
}

// eventsSize returns about the bytes of ev's JSON (an events answer).
func eventsSize(ev collab.Events) int64 {
	n := int64(128)
	for _, st := range ev.Steps {
		n += int64(len(st.JSON)+len(st.ClientID)) + 2
	}
	for _, c := range ev.Comment {
		n += int64(len(c.Text)+len(c.Author)) + 140
	}
	return n + commentsSize(ev.Threads)
}
