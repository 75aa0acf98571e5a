package server

import (
	"net/http"
	"strconv"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/suggest"
	"github.com/pmauthority/pmauthority/transform"
)

// acceptSuggestion answers POST /docs/{id}/suggestions/{sid}/accept.
func (s *api) acceptSuggestion(x *exchange, r *http.Request, id string) {
	s.settleSuggestion(x, r, id, true)
}

// rejectSuggestion answers POST /docs/{id}/suggestions/{sid}/reject.
func (s *api) rejectSuggestion(x *exchange, r *http.Request, id string) {
	s.settleSuggestion(x, r, id, false)
}

// settleSuggestion accepts (suggest.ApplyID) or rejects
// (suggest.RevertID) the suggestion sid of the document id, its
// insertions, deletions and modifications and nothing else, as one
// submission of the server's client by the principal
// (collab.Transact): {"version", "steps"}. sid is a number when it reads
// as one, a string otherwise, as the plugin's parseSuggestionId reads
// ids. A suggestion the document does not have is a 404; a schema
// without the suggestion marks a 422.
func (s *api) settleSuggestion(x *exchange, r *http.Request, id string, accept bool) {
	sid := suggestionIDOf(r.PathValue("sid"))
	client := s.client(r, x.principal)
	if err := s.takeSubmission(client); err != nil {
		s.fail(x, err)
		return
	}
	var steps int
	res, err := s.collab.Transact(r.Context(), id, x.principal.ID, func(tr *transform.Transform) error {
		marks, err := suggestionMarks(tr.Doc)
		if err != nil {
			return err
		}
		if !hasSuggestion(tr.Doc, marks, sid) {
			return &httpError{http.StatusNotFound, "document " + strconv.Quote(id) + " has no suggestion " + r.PathValue("sid")}
		}
		if err := settle(tr, sid, accept); err != nil {
			return err
		}
		steps = len(tr.Steps)
		return nil
	})
	s.answerEdit(x, id, "", res, err, steps, 0)
}

// acceptSuggestions answers POST /docs/{id}/suggestions/accept.
func (s *api) acceptSuggestions(x *exchange, r *http.Request, id string) {
	s.settleSuggestions(x, r, id, true)
}

// rejectSuggestions answers POST /docs/{id}/suggestions/reject.
func (s *api) rejectSuggestions(x *exchange, r *http.Request, id string) {
	s.settleSuggestions(x, r, id, false)
}

// settleSuggestions accepts or rejects, as settleSuggestion does one,
// the suggestions of the document id whose ids {"author": SUB} first
// used (collab.Authority.SuggestionIDs), or with {"all": true} every
// suggestion (suggest.Apply, suggest.Revert), as one submission:
// {"version", "steps"} (no step when there is nothing to do).
func (s *api) settleSuggestions(x *exchange, r *http.Request, id string, accept bool) {
	var req struct {
		Author *string `json:"author"`
		All    bool    `json:"all"`
	}
	if err := s.decodeBody(x, r, &req); err != nil {
		s.fail(x, err)
		return
	}
	if (req.Author == nil) == !req.All {
		s.fail(x, &httpError{http.StatusBadRequest, `invalid request: want {"author": SUB} or {"all": true}`})
		return
	}
	client := s.client(r, x.principal)
	if err := s.takeSubmission(client); err != nil {
		s.fail(x, err)
		return
	}
	var ids []any
	if req.Author != nil {
		var err error
		if ids, err = s.collab.SuggestionIDs(r.Context(), id, *req.Author); err != nil {
			s.fail(x, err)
			return
		}
	}
	var steps int
	res, err := s.collab.Transact(r.Context(), id, x.principal.ID, func(tr *transform.Transform) error {
		marks, err := suggestionMarks(tr.Doc)
		if err != nil {
			return err
		}
		if req.All {
			if err := settle(tr, nil, accept); err != nil {
				return err
			}
		}
		for _, sid := range ids {
			if hasSuggestion(tr.Doc, marks, sid) {
				if err := settle(tr, sid, accept); err != nil {
					return err
				}
			}
		}
		steps = len(tr.Steps)
		return nil
	})
	s.answerEdit(x, id, "", res, err, steps, 0)
}

// settle adds to tr the steps that accept or reject the suggestion sid
// of tr.Doc (every suggestion when sid is nil).
func settle(tr *transform.Transform, sid any, accept bool) error {
	var t *transform.Transform
	var err error
	switch {
	case sid == nil && accept:
		t, err = suggest.Apply(tr.Doc)
	case sid == nil:
		t, err = suggest.Revert(tr.Doc)
	case accept:
		t, err = suggest.ApplyID(tr.Doc, sid)
	default:
		t, err = suggest.RevertID(tr.Doc, sid)
	}
	if err != nil {
		return &httpError{http.StatusUnprocessableEntity, "the suggestions cannot be settled: " + err.Error()}
	}
	for _, st := range t.Steps {
		if err := tr.Step(st); err != nil {
			return err
		}
	}
	return nil
}

// suggestionMarks returns the suggestion marks of doc's schema, or a 422
// naming the one it lacks.
func suggestionMarks(doc *model.Node) (suggest.Marks, error) {
	marks, err := suggest.MarksOf(doc.Type.Schema)
	if err != nil {
		return marks, &httpError{http.StatusUnprocessableEntity, "the document's schema has no suggestions: " + err.Error()}
	}
	return marks, nil
}

// suggestionIDOf reads a suggestion id of a path: a number when it is
// one, a string otherwise.
func suggestionIDOf(s string) any {
	if n, err := strconv.ParseFloat(s, 64); err == nil && strconv.FormatFloat(n, 'f', -1, 64) == s {
		return n
	}
	return s
}

// hasSuggestion reports whether a node of doc carries a suggestion mark
// of id.
func hasSuggestion(doc *model.Node, marks suggest.Marks, id any) bool {
	found := false
	check := func(n *model.Node) {
		for _, m := range n.Marks {
			if m.Type == marks.Insertion || m.Type == marks.Deletion || m.Type == marks.Modification {
				if v, _ := m.Attrs.Get("id"); v == id {
					found = true
				}
			}
		}
	}
	check(doc)
	doc.Descendants(func(n *model.Node, _ int, _ *model.Node, _ int) bool {
		check(n)
		return !found
	})
	return found
}
