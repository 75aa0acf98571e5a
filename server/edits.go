package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/edit"
	"github.com/pmauthority/pmauthority/export"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// editDoc answers POST /docs/{id}/edits {"base", "edits", "name"?}:
// {"version", "steps"} once the edits, found in the document at base,
// were made on the current document as one submission of the server's
// client by the principal (collab.TransactSince). A target that a
// change since base touched is a 409 naming the edit, one not found (or
// not once) a 422; either way nothing is applied.
func (s *api) editDoc(x *exchange, r *http.Request, id string) {
	var raw json.RawMessage
	if err := s.decodeBody(x, r, &raw); err != nil {
		s.fail(x, err)
		return
	}
	req, err := edit.Parse(raw)
	if err != nil {
		s.fail(x, err)
		return
	}
	// Each edit that changes something makes a step or more.
	if limit := s.collab.Limits().MaxSteps; len(req.Edits) > limit {
		s.fail(x, &collab.LimitError{What: "edits", Limit: limit, Value: len(req.Edits)})
		return
	}
	for _, e := range req.Edits {
		if e.Markdown != nil && len(*e.Markdown) > s.editMarkdown {
			s.fail(x, &collab.LimitError{What: "bytes of an edit's Markdown (Limits.MaxEditMarkdown)", Limit: s.editMarkdown, Value: len(*e.Markdown)})
			return
		}
	}
	if model.UTF16Len(req.Name) > maxNameLength {
		s.fail(x, &httpError{http.StatusBadRequest, `invalid request: "name" is longer than 64 characters`})
		return
	}
	client := s.client(r, x.principal)
	if err := s.takeSubmission(client); err != nil {
		s.fail(x, err)
		return
	}
	ctx := r.Context()
	// The document at base, rebuilt from the history when it is not the
	// current one, is held in the memory budget like a read of it.
	base, err := s.collab.DocAtReserved(ctx, id, req.Base, s.answerMemory(x))
	if err != nil {
		s.fail(x, err)
		return
	}
	plan, err := edit.Prepare(base, req, s.markdown)
	if err != nil {
		s.fail(x, err)
		return
	}
	var steps int
	var at int // where the last edit ended, for the presence
	res, err := s.collab.TransactSince(ctx, id, x.principal.ID, req.Base, func(tr *transform.Transform, since *transform.Mapping) error {
		if err := plan.MakeSince(tr, since); err != nil {
			return err
		}
		steps = len(tr.Steps)
		if _, to, ok := tr.ChangedRange(); ok {
			at = to
		}
		return nil
	})
	s.answerEdit(x, id, req.Name, res, err, steps, at)
}

// editInfo returns the presence info of the server's client editing as
// name: {"name", "color": null, "data": {"server": true}}.
func editInfo(name string) []byte {
	buf := append([]byte(`{"name":`), model.AppendJSONString(nil, name)...)
	return append(buf, `,"color":null,"data":{"server":true}}`...)
}

// markdown parses the Markdown of an edit, as prosemirror-markdown's
// defaultMarkdownParser does with the document's schema.
func (s *api) markdown(schema *model.Schema, src string) (*model.Node, error) {
	return export.ParseMarkdown(schema, []byte(src))
}

// transformDoc answers POST /docs/{id}/transform {"version", "ops",
// "name"?}: {"version", "steps"} once the ops (the Transform API's
// methods in JSON, transform.Op) were run on the document at version and
// their steps submitted as the server's client by the principal. The
// ops' positions are the document's at version, so a version that is
// not the current one is a 409, as is one that editors' steps overtake.
func (s *api) transformDoc(x *exchange, r *http.Request, id string) {
	var req struct {
		Version *int64         `json:"version"`
		Ops     []transform.Op `json:"ops"`
		Name    string         `json:"name"`
	}
	if err := s.decodeBody(x, r, &req); err != nil {
		s.fail(x, err)
		return
	}
	switch {
	case req.Version == nil:
		s.fail(x, &httpError{http.StatusBadRequest, `invalid request: "version" (the version the ops' positions are in) is missing`})
		return
	case len(req.Ops) == 0:
		s.fail(x, &httpError{http.StatusBadRequest, `invalid request: "ops" is missing or empty`})
		return
	case model.UTF16Len(req.Name) > maxNameLength:
		s.fail(x, &httpError{http.StatusBadRequest, `invalid request: "name" is longer than 64 characters`})
		return
	}
	if limit := s.collab.Limits().MaxSteps; len(req.Ops) > limit {
		s.fail(x, &collab.LimitError{What: "ops", Limit: limit, Value: len(req.Ops)})
		return
	}
	client := s.client(r, x.principal)
	if err := s.takeSubmission(client); err != nil {
		s.fail(x, err)
		return
	}
	var steps, at int
	res, err := s.collab.TransactSince(r.Context(), id, x.principal.ID, *req.Version, func(tr *transform.Transform, since *transform.Mapping) error {
		if len(since.Maps()) > 0 {
			return collab.ErrConflict // the positions are another document's
		}
		for i, op := range req.Ops {
			if err := tr.Apply(op); err != nil {
				return &transform.OpError{Index: i, Op: op.Op, Err: err}
			}
		}
		steps = len(tr.Steps)
		if _, to, ok := tr.ChangedRange(); ok {
			at = to
		}
		return nil
	})
	s.answerEdit(x, id, req.Name, res, err, steps, at)
}

// answerEdit answers an edit (or transform) request that ended with res
// and err: {"version", "steps"}, after showing the server's client as
// name, with its cursor at at, when the request made steps.
func (s *api) answerEdit(x *exchange, id, name string, res collab.Result, err error, steps, at int) {
	if err != nil {
		s.fail(x, err)
		return
	}
	if steps > 0 && name != "" {
		s.collab.ShowEdit(id, editInfo(name), res.Version, at)
	}
	x.out = appendEditResult(x.out[:0], res.Version, steps)
	s.write(x, http.StatusOK, x.out)
}

// appendEditResult appends {"version", "steps"}.
func appendEditResult(buf []byte, version int64, steps int) []byte {
	buf = append(buf, `{"version":`...)
	buf = strconv.AppendInt(buf, version, 10)
	buf = append(buf, `,"steps":`...)
	buf = strconv.AppendInt(buf, int64(steps), 10)
	return append(buf, '}')
}
