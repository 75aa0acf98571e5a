package server

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store"
)

// The documents API: routes for an application's backend to create and
// delete documents, read past versions and the step log, pin versions
// with checkpoints, restore them and see who wrote what (docs/api.md).

// DefaultStepsLimit is the steps of a page of GET /docs/{id}/steps
// without ?limit (at most Limits.MaxStepsPage).
const DefaultStepsLimit = 100

// decodeBody reads a JSON object body into v (a pointer to a struct):
// 400 for a body that is not JSON or nests deeper than Limits.MaxDepth,
// that is not an object, or that has fields of the wrong type or
// unknown fields. An empty body is an empty object.
func (s *api) decodeBody(x *exchange, r *http.Request, v any) error {
	body, err := s.readJSONBody(x, r)
	if err != nil {
		return err
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	var d jsonscan.Decoder
	d.Reset(body)
	d.SetMaxDepth(s.limits.MaxDepth)
	k, err := d.Peek()
	if err == nil {
		if err = d.Skip(); err == nil {
			err = d.End()
		}
	}
	if err != nil {
		return &httpError{http.StatusBadRequest, syntaxMessage(&d, err)}
	}
	if k != jsonscan.Object {
		return &httpError{http.StatusBadRequest, "invalid request: the request must be a JSON object (found " + k.String() + ")"}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &httpError{http.StatusBadRequest, "invalid request: " + jsonProblem(err)}
	}
	return nil
}

// jsonProblem says what encoding/json found wrong, naming the field.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%q must be %s (found %s)", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

// jsonKind names a Go kind as JSON's.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "int64", "int":
		return "an integer"
	}
	return kind
}

// createRequest is the body of POST /docs.
type createRequest struct {
	ID     *string         `json:"id"`
	Schema string          `json:"schema"`
	Doc    json.RawMessage `json:"doc"`
}

// newDocID returns a random document id: 16 characters of base64url (96
// bits).
func newDocID() string {
	var b [12]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// createDoc answers POST /docs: 201 {"id", "version"}, the version the
// document starts at (0 unless a deleted document had the id); 429 or 507
// over the client's creation limits. The route was
// authorized for ActionCreate with no document id before the body was
// read; it is authorized again for the new document's id once it is
// known (generated when the body has none).
func (s *api) createDoc(x *exchange, r *http.Request, _ string) {
	var req createRequest
	if err := s.decodeBody(x, r, &req); err != nil {
		s.fail(x, err)
		return
	}
	id := newDocID()
	if req.ID != nil {
		var err error
		if id, err = docID(*req.ID); err != nil {
			s.fail(x, err)
			return
		}
	}
	if err := s.policy.Authorize(r.Context(), x.principal, id, ActionCreate); err != nil {
		s.fail(x, err)
		return
	}
	schema, name, ok := s.collab.Schema(req.Schema)
	if !ok {
		s.fail(x, &httpError{http.StatusBadRequest, "unknown schema " + strconv.Quote(name)})
		return
	}
	var doc *model.Node
	if len(req.Doc) > 0 && !bytes.Equal(req.Doc, []byte("null")) {
		var err error
		if doc, err = schema.NodeFromJSON(req.Doc); err != nil {
			s.fail(x, &httpError{http.StatusBadRequest, "invalid document: " + err.Error()})
			return
		}
	}
	// The client's creations count against its limits
	// (collab.Limits.MaxCreatesPerHour, MaxClientDocuments).
	version, err := s.collab.CreateFor(r.Context(), id, s.client(r, x.principal), name, doc)
	if err != nil {
		s.fail(x, err)
		return
	}
	buf := append(x.out[:0], `{"id":`...)
	buf = model.AppendJSONString(buf, id)
	buf = append(buf, `,"version":`...)
	buf = strconv.AppendInt(buf, version, 10)
	x.out = append(buf, '}')
	s.write(x, http.StatusCreated, x.out)
}

// deleteDoc answers DELETE /docs/{id}: 204. Its WebSockets are closed
// with 4404 and its waiting polls answered 404.
func (s *api) deleteDoc(x *exchange, r *http.Request, id string) {
	if err := s.collab.Delete(r.Context(), id); err != nil {
		s.fail(x, err)
		return
	}
	x.WriteHeader(http.StatusNoContent)
}

// getSteps answers GET /docs/{id}/steps?from=V&limit=K: {"steps":
// [{"version", "step", "clientID", "author", "time"}, …], "version",
// "oldest", "next"?}, "next" being the from of the next page when there
// are more steps. A page has at most K steps (Limits.MaxStepsPage) and
// stops at Limits.MaxStepsPageBytes of them, after its first.
func (s *api) getSteps(x *exchange, r *http.Request, id string) {
	q := r.URL.RawQuery
	var from, limit int64 = -1, DefaultStepsLimit // from the oldest kept step
	var err error
	if _, ok := queryValue(q, "from"); ok {
		from, err = queryVersion(q, "from")
	}
	if _, ok := queryValue(q, "limit"); ok && err == nil {
		if limit, err = queryVersion(q, "limit"); err == nil && limit == 0 {
			err = &httpError{http.StatusBadRequest, `query parameter "limit" must be at least 1`}
		}
	}
	if err != nil {
		s.fail(x, err)
		return
	}
	page, err := s.collab.StepLog(r.Context(), id, from, int(min(limit, int64(s.stepsPage))), s.stepsPageBytes, s.answerMemory(x))
	if err == nil {
		size := int64(128)
		for _, st := range page.Steps {
			size += int64(len(st.JSON)+len(st.ClientID)+2*len(st.Author)) + 128
		}
		err = s.holdAnswer(x, r, size)
	}
	if err != nil {
		s.fail(x, err)
		return
	}
	buf := append(x.out[:0], `{"steps":[`...)
	for i, st := range page.Steps {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendStep(buf, st)
	}
	buf = append(buf, `],"version":`...)
	buf = strconv.AppendInt(buf, page.Version, 10)
	buf = append(buf, `,"oldest":`...)
	buf = strconv.AppendInt(buf, page.Oldest, 10)
	if n := len(page.Steps); n > 0 && page.Steps[n-1].Version < page.Version {
		buf = append(buf, `,"next":`...)
		buf = strconv.AppendInt(buf, page.Steps[n-1].Version, 10)
	}
	x.out = append(buf, '}')
	s.write(x, http.StatusOK, x.out)
}

// appendStep appends a logged step's JSON: {"version", "step",
// "clientID", "author", "time"} (author null when none).
func appendStep(buf []byte, st store.Step) []byte {
	buf = append(buf, `{"version":`...)
	buf = strconv.AppendInt(buf, st.Version, 10)
	buf = append(buf, `,"step":`...)
	buf = append(buf, st.JSON...)
	buf = append(buf, `,"clientID":`...)
	buf = appendRaw(buf, st.ClientID)
	buf = append(buf, `,"author":`...)
	buf = appendAuthor(buf, st.Author)
	buf = append(buf, `,"time":`...)
	buf = appendTime(buf, st.Time)
	return append(buf, '}')
}

// appendRaw appends raw JSON, or null when there is none.
func appendRaw(buf, raw []byte) []byte {
	if len(raw) == 0 {
		return append(buf, "null"...)
	}
	return append(buf, raw...)
}

// appendAuthor appends a principal id as a JSON string, or null for "".
func appendAuthor(buf []byte, author string) []byte {
	if author == "" {
		return append(buf, "null"...)
	}
	return model.AppendJSONString(buf, author)
}

// appendTime appends t in RFC 3339 (UTC, nanoseconds) as a JSON string.
func appendTime(buf []byte, t time.Time) []byte {
	buf = append(buf, '"')
	buf = t.UTC().AppendFormat(buf, time.RFC3339Nano)
	return append(buf, '"')
}

// appendCheckpoint appends {"name", "version", "author", "time"}.
func appendCheckpoint(buf []byte, cp store.Checkpoint) []byte {
	buf = append(buf, `{"name":`...)
	buf = model.AppendJSONString(buf, cp.Name)
	buf = append(buf, `,"version":`...)
	buf = strconv.AppendInt(buf, cp.Version, 10)
	buf = append(buf, `,"author":`...)
	buf = appendAuthor(buf, cp.Author)
	buf = append(buf, `,"time":`...)
	buf = appendTime(buf, cp.Time)
	return append(buf, '}')
}

// addCheckpoint answers POST /docs/{id}/checkpoints {"name"}: 201 with
// the checkpoint.
func (s *api) addCheckpoint(x *exchange, r *http.Request, id string) {
	var req struct {
		Name *string `json:"name"`
	}
	if err := s.decodeBody(x, r, &req); err != nil {
		s.fail(x, err)
		return
	}
	if req.Name == nil {
		s.fail(x, &httpError{http.StatusBadRequest, `invalid request: "name" is missing`})
		return
	}
	cp, err := s.collab.Checkpoint(r.Context(), id, s.client(r, x.principal), *req.Name, x.principal.ID)
	if err != nil {
		s.fail(x, err)
		return
	}
	x.out = appendCheckpoint(x.out[:0], cp)
	s.write(x, http.StatusCreated, x.out)
}

// listCheckpoints answers GET /docs/{id}/checkpoints: {"checkpoints":
// [{"name", "version", "author", "time"}, …]}, ordered by version.
func (s *api) listCheckpoints(x *exchange, r *http.Request, id string) {
	list, err := s.collab.Checkpoints(r.Context(), id)
	if err != nil {
		s.fail(x, err)
		return
	}
	buf := append(x.out[:0], `{"checkpoints":[`...)
	for i, cp := range list {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendCheckpoint(buf, cp)
	}
	x.out = append(buf, "]}"...)
	s.write(x, http.StatusOK, x.out)
}

// restoreDoc answers POST /docs/{id}/restore {"version"} or
// {"checkpoint"}: {"version", "commentVersion"} after the restoring
// step (a new submission by the principal).
func (s *api) restoreDoc(x *exchange, r *http.Request, id string) {
	var req struct {
		Version    *int64  `json:"version"`
		Checkpoint *string `json:"checkpoint"`
	}
	if err := s.decodeBody(x, r, &req); err != nil {
		s.fail(x, err)
		return
	}
	if (req.Version == nil) == (req.Checkpoint == nil) {
		s.fail(x, &httpError{http.StatusBadRequest, `invalid request: give one of "version" and "checkpoint"`})
		return
	}
	var version int64
	if req.Checkpoint != nil {
		var err error
		if version, err = s.collab.CheckpointVersion(r.Context(), id, *req.Checkpoint); err != nil {
			s.fail(x, err)
			return
		}
	} else {
		version = *req.Version
	}
	client := s.client(r, x.principal)
	if err := s.takeSubmission(client); err != nil {
		s.fail(x, err)
		return
	}
	res, err := s.collab.Restore(r.Context(), id, client, version, x.principal.ID)
	if err != nil {
		s.fail(x, err)
		return
	}
	x.out = appendResult(x.out[:0], res)
	s.write(x, http.StatusOK, x.out)
}

// getAuthors answers GET /docs/{id}/authors: {"version", "oldest",
// "ranges": [{"from", "to", "version", "author", "clientID"}, …]}, where
// author is the principal, else the client id, and null for content
// older than the kept steps.
func (s *api) getAuthors(x *exchange, r *http.Request, id string) {
	au, err := s.collab.Authors(r.Context(), id)
	if err == nil {
		size := int64(128)
		for _, rg := range au.Ranges {
			size += int64(2*len(rg.Author)+2*len(rg.ClientID)) + 128
		}
		err = s.holdAnswer(x, r, size)
	}
	if err != nil {
		s.fail(x, err)
		return
	}
	buf := append(x.out[:0], `{"version":`...)
	buf = strconv.AppendInt(buf, au.Version, 10)
	buf = append(buf, `,"oldest":`...)
	buf = strconv.AppendInt(buf, au.Oldest, 10)
	buf = append(buf, `,"ranges":[`...)
	for i, rg := range au.Ranges {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"from":`...)
		buf = strconv.AppendInt(buf, int64(rg.From), 10)
		buf = append(buf, `,"to":`...)
		buf = strconv.AppendInt(buf, int64(rg.To), 10)
		buf = append(buf, `,"version":`...)
		buf = strconv.AppendInt(buf, rg.Version, 10)
		buf = append(buf, `,"author":`...)
		switch {
		case rg.Author != "":
			buf = model.AppendJSONString(buf, rg.Author)
		case len(rg.ClientID) > 0:
			buf = model.AppendJSONString(buf, clientIDText(rg.ClientID))
		default:
			buf = append(buf, "null"...)
		}
		buf = append(buf, `,"clientID":`...)
		buf = appendRaw(buf, rg.ClientID)
		buf = append(buf, '}')
	}
	x.out = append(buf, "]}"...)
	s.write(x, http.StatusOK, x.out)
}

// clientIDText returns a client id as text: a number's digits, a
// string's value.
func clientIDText(id collab.ClientID) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return string(id)
}
