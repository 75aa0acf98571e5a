package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/edit"
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
	base, err := s.collab.DocAt(ctx, id, req.Base)
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
	if err != nil {
		s.fail(x, err)
		return
	}
	if steps > 0 && req.Name != "" {
		s.collab.ShowEdit(id, editInfo(req.Name), res.Version, at)
	}
	buf := append(x.out[:0], `{"version":`...)
	buf = strconv.AppendInt(buf, res.Version, 10)
	buf = append(buf, `,"steps":`...)
	buf = strconv.AppendInt(buf, int64(steps), 10)
	x.out = append(buf, '}')
	s.write(x, http.StatusOK, x.out)
}

// editInfo returns the presence info of the server's client editing as
// name: {"name", "color": null, "data": {"server": true}}.
func editInfo(name string) []byte {
	buf := append([]byte(`{"name":`), model.AppendJSONString(nil, name)...)
	return append(buf, `,"color":null,"data":{"server":true}}`...)
}

// markdown parses the Markdown of an edit.
func (s *api) markdown(schema *model.Schema, src string) (*model.Node, error) {
	return nil, errors.New("Markdown in is not available yet")
}
