package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/export"
	"github.com/pmauthority/pmauthority/model"
)

// exportDoc answers GET /docs/{id}/export?format=text|markdown|html
// (&version=N: the document at version N, see exportSource) with the
// document rendered by package export: 400 for a missing or unknown
// format, 404 for a document that does not exist (an export creates
// nothing), 422 when the document cannot be written in the format (a node
// type the Markdown serializer does not know, a schema without toDOM
// templates for HTML).
func (s *api) exportDoc(x *exchange, r *http.Request, id string) {
	q := r.URL.Query()
	name := q.Get("format")
	if !q.Has("format") {
		s.fail(x, &httpError{http.StatusBadRequest, `missing query parameter "format": want text, markdown or html`})
		return
	}
	format, err := export.ParseFormat(name)
	if err != nil {
		s.fail(x, &httpError{http.StatusBadRequest, err.Error()})
		return
	}
	doc, err := s.exportSource(r.Context(), r, id, s.answerMemory(x))
	if err == nil {
		// The text is at most about as long as the JSON, and the HTML of
		// nodes and marks can be longer; it is written from a copy.
		size := 2 * int64(doc.JSONSize())
		if format == export.FormatHTML {
			size *= 2
		}
		err = s.holdAnswer(x, r, size)
	}
	if err != nil {
		s.fail(x, err)
		return
	}
	out, err := export.Export(doc, format)
	if err != nil {
		s.fail(x, &httpError{http.StatusUnprocessableEntity, fmt.Sprintf("document %q cannot be exported as %s: %v", id, format, err)})
		return
	}
	h := x.Header()
	h["Content-Type"] = []string{format.ContentType()}
	h["Content-Length"] = []string{strconv.Itoa(len(out))}
	h["X-Content-Type-Options"] = []string{"nosniff"}
	if format == export.FormatHTML {
		// The HTML is escaped (package export); this keeps a browser that
		// opens it directly from running anything even so.
		h["Content-Security-Policy"] = []string{"script-src 'none'; object-src 'none'; base-uri 'none'"}
	}
	x.WriteHeader(http.StatusOK)
	x.Write([]byte(out))
}

// exportSource returns the document that an export of id renders: its
// current version, or with &version=N the document at N as GET
// /docs/{id}?version=N reads it (400 for a version the document never
// had, 410 for one whose steps are pruned); collab.ErrNotFound when it
// does not exist. A past version's document is held in mem.
func (s *api) exportSource(ctx context.Context, r *http.Request, id string, mem *collab.Reservation) (*model.Node, error) {
	if _, ok := queryValue(r.URL.RawQuery, "version"); ok {
		version, err := queryVersion(r.URL.RawQuery, "version")
		if err != nil {
			return nil, err
		}
		return s.collab.DocAtReserved(ctx, id, version, mem)
	}
	ok, err := s.collab.Exists(ctx, id)
	if err == nil && !ok {
		err = fmt.Errorf("collab: %q: %w", id, collab.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	st, err := s.collab.Get(ctx, id, "")
	if err != nil {
		return nil, err
	}
	return st.Doc, nil
}
