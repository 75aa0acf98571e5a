package collab

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/suggest"
	"github.com/pmauthority/pmauthority/transform"
)

// Suggestions (the marks of package suggest): a document whose schema
// has them records which principal first used each suggestion id, from
// the steps that bring the id in, and a suggest-only submission
// (Submission.SuggestOnly) is checked against that record and the
// document before and after it (checkSuggestOnly).
//
// The record is kept in memory and rebuilt, when a document is loaded or
// catches up with other writers, from the authors of the steps it
// replays (those after the latest snapshot): an id that only steps
// before the snapshot brought in has no recorded owner after a reload,
// and only editors may change its suggestion then.

// suggestionOwners is who first used each suggestion id of a document. It
// is a value that is never modified in place.
type suggestionOwners struct {
	ids map[any]string // a float64 or string id to the principal
}

// owner returns the principal that first used id, and whether one did.
func (o suggestionOwners) owner(id any) (string, bool) {
	p, ok := o.ids[id]
	return p, ok
}

// len returns the number of ids recorded.
func (o suggestionOwners) len() int { return len(o.ids) }

// ownedBy returns the ids that author first used.
func (o suggestionOwners) ownedBy(author string) []any {
	var out []any
	for id, p := range o.ids {
		if p == author {
			out = append(out, id)
		}
	}
	return out
}

// with returns o with the ids of added that it does not have recorded as
// author's.
func (o suggestionOwners) with(added []any, author string) suggestionOwners {
	var next map[any]string
	for _, id := range added {
		if _, ok := o.ids[id]; ok {
			continue
		}
		if next == nil {
			next = maps.Clone(o.ids)
			if next == nil {
				next = make(map[any]string, len(added))
			}
		}
		next[id] = author
	}
	if next == nil {
		return o
	}
	return suggestionOwners{ids: next}
}

// suggestionID returns the id of a suggestion mark as the record keys it
// (a float64 or a string), and false for a mark that is not one or has
// no such id.
func suggestionID(m *model.Mark, marks suggest.Marks) (any, bool) {
	if m.Type != marks.Insertion && m.Type != marks.Deletion && m.Type != marks.Modification {
		return nil, false
	}
	switch id, _ := m.Attrs.Get("id"); id := id.(type) {
	case float64, string:
		return id, true
	}
	return nil, false
}

// suggestionMarks returns the suggestion marks of schema, and false when
// it lacks one of them.
func suggestionMarks(schema *model.Schema) (suggest.Marks, bool) {
	marks, err := suggest.MarksOf(schema)
	return marks, err == nil
}

// newSuggestionIDs returns the suggestion ids that step brings into the
// document (in the content it inserts, or the marks it adds) and that
// owners has not recorded.
func newSuggestionIDs(step transform.Step, marks suggest.Marks, owners suggestionOwners, out []any) []any {
	add := func(m *model.Mark) {
		if id, ok := suggestionID(m, marks); ok {
			if _, known := owners.owner(id); !known {
				out = append(out, id)
			}
		}
	}
	slice := func(s model.Slice) {
		s.Content.Descendants(func(n *model.Node, _ int, _ *model.Node, _ int) bool {
			for _, m := range n.Marks {
				add(m)
			}
			return true
		})
	}
	switch s := step.(type) {
	case *transform.ReplaceStep:
		slice(s.Slice)
	case *transform.ReplaceAroundStep:
		slice(s.Slice)
	case *transform.AddMarkStep:
		add(s.Mark)
	case *transform.AddNodeMarkStep:
		add(s.Mark)
	case *transform.MarkSetStep:
		for _, sub := range s.Steps {
			out = newSuggestionIDs(sub, marks, owners, out)
		}
	}
	return out
}

// recordSuggestions returns owners with the new suggestion ids of steps,
// by author, and the ids added.
func recordSuggestions(owners suggestionOwners, marks suggest.Marks, steps []transform.Step, author string) (suggestionOwners, []any) {
	var added []any
	for _, st := range steps {
		added = newSuggestionIDs(st, marks, owners, added)
	}
	return owners.with(added, author), added
}

// suggestOnlyError refuses a suggest-only submission: it matches
// ErrForbidden, and names the rule.
func suggestOnlyError(format string, args ...any) error {
	return fmt.Errorf("%w: a suggest-only submission %s", ErrForbidden, fmt.Sprintf(format, args...))
}

// checkSuggestOnly checks a suggest-only submission by author that made
// after from before, with owners the record before it:
//
//   - the document with every suggestion reverted (suggest.Revert) is the
//     same before and after: nothing outside suggestions changed;
//   - every suggestion id that after has and before had not is new, or
//     author's own;
//   - every suggestion id whose marked content or marks differ between
//     before and after (changed, removed, extended) is author's.
//
// It returns an error matching ErrForbidden naming the rule broken.
func checkSuggestOnly(before, after *model.Node, marks suggest.Marks, owners suggestionOwners, author string) error {
	rb, err := suggest.Revert(before)
	if err != nil {
		return suggestOnlyError("needs a document whose suggestions can be reverted: %v", err)
	}
	ra, err := suggest.Revert(after)
	if err != nil {
		return suggestOnlyError("must leave suggestions that can be reverted: %v", err)
	}
	if !rb.Doc.Eq(ra.Doc) {
		return suggestOnlyError("must not change the document outside suggestions (with every suggestion reverted it differs)")
	}
	sb, sa := suggestionSignatures(before, marks), suggestionSignatures(after, marks)
	mine := func(id any) bool {
		p, ok := owners.owner(id)
		return ok && author != "" && p == author
	}
	for id, sig := range sa {
		old, had := sb[id]
		switch {
		case !had:
			if p, ok := owners.owner(id); ok && (author == "" || p != author) {
				return suggestOnlyError("must not reuse suggestion id %s, which another principal used", idString(id))
			}
		case old != sig && !mine(id):
			return suggestOnlyError("may change only its own suggestions: suggestion %s is not", idString(id))
		}
	}
	for id := range sb {
		if _, kept := sa[id]; !kept && !mine(id) {
			return suggestOnlyError("may remove only its own suggestions: suggestion %s is not", idString(id))
		}
	}
	return nil
}

// suggestionSignatures returns, for each suggestion id of doc, what its
// suggestion is: the marks and content of the nodes that carry a mark of
// that id, in document order, the text of adjacent text nodes with the
// same marks run together (so that content inserted between two parts of
// a suggestion, or before it, changes nothing here).
func suggestionSignatures(doc *model.Node, marks suggest.Marks) map[any]string {
	type run struct {
		sig  []byte
		last string // the marks of the last text node appended
	}
	runs := map[any]*run{}
	visit := func(n *model.Node) {
		var set []byte
		for _, m := range n.Marks {
			id, ok := suggestionID(m, marks)
			if !ok {
				continue
			}
			if set == nil {
				for _, m := range n.Marks {
					set = m.AppendJSON(set)
				}
			}
			r := runs[id]
			if r == nil {
				r = &run{}
				runs[id] = r
			}
			if n.IsText() && r.last == string(set) {
				r.sig = append(r.sig, n.Text...)
				continue
			}
			r.sig = append(append(append(r.sig, 0), set...), 1)
			if n.IsText() {
				r.sig, r.last = append(r.sig, n.Text...), string(set)
			} else {
				r.sig, r.last = n.Copy(model.Fragment{}).AppendJSON(r.sig), ""
			}
		}
	}
	visit(doc)
	doc.Descendants(func(n *model.Node, _ int, _ *model.Node, _ int) bool {
		visit(n)
		return true
	})
	out := make(map[any]string, len(runs))
	for id, r := range runs {
		out[id] = string(r.sig)
	}
	return out
}

// idString returns a suggestion id as JSON writes it.
func idString(id any) string {
	switch id := id.(type) {
	case float64:
		return strconv.FormatFloat(id, 'g', -1, 64)
	case string:
		return strconv.Quote(id)
	}
	return fmt.Sprint(id)
}

// replayedSuggestions returns owners with the new suggestion ids of the
// decoded steps of stored, each by its step's author: the record rebuilt
// from steps read back from the store.
func replayedSuggestions(owners suggestionOwners, marks suggest.Marks, step transform.Step, stored store.Step) suggestionOwners {
	added := newSuggestionIDs(step, marks, owners, nil)
	return owners.with(added, stored.Author)
}

// suggestErr returns why schema lacks the suggestion marks.
func suggestErr(schema *model.Schema) error {
	_, err := suggest.MarksOf(schema)
	return err
}

// SuggestionIDs returns the suggestion ids of the document id that author
// first used (float64 or string values), as recorded for the document.
func (a *Authority) SuggestionIDs(ctx context.Context, id, author string) ([]any, error) {
	st, err := a.current(ctx, id)
	if err != nil {
		return nil, err
	}
	return st.owners.ownedBy(author), nil
}
