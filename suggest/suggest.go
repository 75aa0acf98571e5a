package suggest

import (
	"errors"
	"fmt"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// Marks are the suggestion mark types of a schema.
type Marks struct {
	Insertion, Deletion, Modification *model.MarkType
}

// MarksOf returns the suggestion mark types of schema, or an error naming
// the first one it lacks (the package's getSuggestionMarks).
func MarksOf(schema *model.Schema) (Marks, error) {
	m := Marks{schema.MarkType("insertion"), schema.MarkType("deletion"), schema.MarkType("modification")}
	for _, t := range []struct {
		typ  *model.MarkType
		name string
	}{{m.Insertion, "insertion"}, {m.Deletion, "deletion"}, {m.Modification, "modification"}} {
		if t.typ == nil {
			return Marks{}, fmt.Errorf("Failed to find %s mark in schema. Did you forget to add it?", t.name)
		}
	}
	return m, nil
}

// ErrUnknownModification is returned when reverting a modification mark
// whose type is none of "attr" (with a string attrName), "mark" and
// "nodeType".
var ErrUnknownModification = errors.New("Unknown modification type")

// Revert returns the transform that reverts every suggestion of doc:
// inserted content deleted, deletion marks removed, modifications undone.
// Its Doc is the result.
func Revert(doc *model.Node) (*transform.Transform, error) {
	return run(doc, nil, true)
}

// Apply returns the transform that applies every suggestion of doc:
// deleted content deleted, insertion and modification marks removed. Its
// Doc is the result.
func Apply(doc *model.Node) (*transform.Transform, error) {
	return run(doc, nil, false)
}

// RevertID returns the transform that reverts the suggestion id of doc:
// its insertions deleted, its deletion marks removed, its modifications
// undone; other suggestions are left alone. id is the marks' id
// attribute as model attributes hold it (a float64 or a string); a number
// never equals a string.
func RevertID(doc *model.Node, id any) (*transform.Transform, error) {
	return run(doc, &id, true)
}

// ApplyID returns the transform that applies the suggestion id of doc:
// its deletions deleted, its insertion and modification marks removed;
// other suggestions are left alone.
func ApplyID(doc *model.Node, id any) (*transform.Transform, error) {
	return run(doc, &id, false)
}

// run makes the transform of Revert (revert true) or Apply, of the
// suggestion *id or of all when id is nil. On an error it returns no
// transform: steps made before it are not a meaningful edit.
func run(doc *model.Node, id *any, revert bool) (*transform.Transform, error) {
	marks, err := MarksOf(doc.Type.Schema)
	if err != nil {
		return nil, err
	}
	tr := transform.New(doc)
	p := pass{tr: tr, id: id, remove: marks.Deletion, drop: marks.Insertion}
	if !revert {
		p.remove, p.drop = marks.Insertion, marks.Deletion
	}
	if err := p.content(doc); err != nil {
		return nil, err
	}
	if err := p.modifications(tr.Doc, marks.Modification, revert); err != nil {
		return nil, err
	}
	return tr, nil
}

// pass holds what the two passes of a run share: the transform, the id
// (nil for all), the mark type whose content is kept without it (remove)
// and the one whose content is deleted (drop).
type pass struct {
	tr           *transform.Transform
	id           *any
	remove, drop *model.MarkType
}

// find returns the first mark of t in set, when it has the pass's id.
func (p *pass) find(set []*model.Mark, t *model.MarkType) *model.Mark {
	m := t.IsInSet(set)
	if m == nil || p.id != nil && !sameID(m.Attrs, *p.id) {
		return nil
	}
	return m
}

// sameID reports whether the id attribute in attrs is id, as JavaScript's
// === compares them: numbers and strings only, never equal to each other.
func sameID(attrs model.Attrs, id any) bool {
	v, _ := attrs.Get("id")
	switch v := v.(type) {
	case float64:
		w, ok := id.(float64)
		return ok && v == w
	case string:
		w, ok := id.(string)
		return ok && v == w
	}
	return false
}

// content is the package's applySuggestionsToTransform: the nodes of doc
// (positions of doc, mapped through the steps made so far) marked with
// p.drop are deleted up to the end of their suggestion, with a space when
// the suggestion stands between two; p.remove marks are removed, and a
// zero-width space they marked (the package's placeholder) is deleted.
func (p *pass) content(doc *model.Node) error {
	tr := p.tr
	if p.find(doc.Marks, p.remove) != nil {
		if err := tr.RemoveNodeMarkType(0, p.remove); err != nil {
			return err
		}
	}
	var err error
	doc.Descendants(func(child *model.Node, pos int, _ *model.Node, _ int) bool {
		if err != nil {
			return false
		}
		dropped, removed := p.find(child.Marks, p.drop), p.find(child.Marks, p.remove)
		if dropped == nil && removed == nil {
			return true
		}
		if dropped != nil {
			err = p.drop1(child, pos)
			return false
		}
		from := tr.Mapping.Map(pos, 1)
		if !child.IsInline() {
			err = tr.RemoveNodeMarkType(from, p.remove)
			return true
		}
		to := from + child.NodeSize()
		if err = tr.RemoveMarkType(from, to, p.remove); err == nil && child.Text == "\u200B" {
			err = tr.Delete(from, to)
		}
		return true
	})
	return err
}

// drop1 deletes child, at pos in the pass's starting document, and what
// follows it in the same suggestion.
func (p *pass) drop1(child *model.Node, pos int) error {
	tr := p.tr
	mapped := tr.Mapping.MapResult(pos, 1)
	if mapped.Deleted() {
		return nil
	}
	from := mapped.Pos
	end, err := tr.Doc.Resolve(from + child.NodeSize())
	if err != nil {
		return err
	}
	to, err := markEnd(end, p.drop)
	if err != nil {
		return err
	}
	// A suggestion between two spaces takes one of them along. The
	// JavaScript reads the character after to even when to is the end of
	// the document (and throws); there is none.
	before := tr.Doc.TextBetween(from-1, from, "x", "x")
	var after string
	if to < tr.Doc.Content.Size() {
		after = tr.Doc.TextBetween(to, to+1, "x", "x")
	}
	if before == " " && after == " " {
		to++
	}
	return tr.DeleteRange(from, to)
}

// modifications is the package's applyModificationsToTransform on doc,
// the document after the content pass: the modification marks (of the
// pass's id) are removed, and with revert what they record is undone.
// Without an id, every modification mark of a node that has one is
// removed and undone, as in the JavaScript.
func (p *pass) modifications(doc *model.Node, t *model.MarkType, revert bool) error {
	if err := p.modifyNode(doc, 0, t, revert); err != nil {
		return err
	}
	var err error
	doc.Descendants(func(child *model.Node, pos int, _ *model.Node, _ int) bool {
		if err == nil {
			err = p.modifyNode(child, pos, t, revert)
		}
		return err == nil
	})
	return err
}

// modifyNode removes (and with revert undoes) the modification marks of
// node (of the pass's id: all of them, where the JavaScript looks only at
// the node's first modification mark), at pos in doc. The document itself (pos 0 with node the top node)
// is handled as the JavaScript does: its marks are looked for on it and
// removed from the node at position 0, its first child.
func (p *pass) modifyNode(node *model.Node, pos int, t *model.MarkType, revert bool) error {
	var mods []*model.Mark
	for _, m := range node.Marks {
		if m.Type == t && (p.id == nil || sameID(m.Attrs, *p.id)) {
			mods = append(mods, m)
		}
	}
	if len(mods) == 0 {
		return nil
	}
	tr := p.tr
	if p.id == nil {
		for {
			n := len(tr.Steps)
			if err := tr.RemoveNodeMarkType(pos, t); err != nil {
				return err
			}
			if len(tr.Steps) == n {
				break
			}
		}
	} else {
		for _, m := range mods {
			if err := tr.RemoveNodeMark(pos, m); err != nil {
				return err
			}
		}
	}
	if !revert {
		return nil
	}
	for _, m := range mods {
		if err := undo(tr, node, pos, m); err != nil {
			return err
		}
	}
	return nil
}

// undo restores what the modification mod of node (at pos) records, as
// the package's revertModifications does: an attribute's previous value;
// a previous node mark, added to the node at position 0 (sic), or, when
// there was none, an error (the JavaScript reads a mark from null); the
// previous node type, with default attributes.
func undo(tr *transform.Transform, node *model.Node, pos int, mod *model.Mark) error {
	typ, _ := mod.Attrs.Get("type")
	name, _ := mod.Attrs.Get("attrName")
	prev, _ := mod.Attrs.Get("previousValue")
	schema := node.Type.Schema
	switch {
	case typ == "attr" && isString(name):
		return tr.SetNodeAttribute(pos, name.(string), prev)
	case typ == "mark":
		if !model.JSTruthy(prev) {
			return errors.New("Invalid input for Mark.fromJSON")
		}
		mark, err := schema.MarkFromJSON(model.AppendJSONValue(nil, prev))
		if je := (*model.JSONError)(nil); errors.As(err, &je) {
			return errors.New(je.Msg) // the JavaScript message, without the JSON path
		} else if err != nil {
			return err
		}
		return tr.AddNodeMark(0, mark)
	case typ == "nodeType":
		return tr.SetNodeMarkup(pos, schema.NodeType(model.JSString(prev)), nil, nil)
	}
	return ErrUnknownModification
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}
