package edit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// Request is the body of an edit request: edits found in the document at
// version Base and made, all together, on the current document.
type Request struct {
	Base  int64  `json:"base"`
	Edits []Edit `json:"edits"`
	// Name is shown to the editors as the server client's name.
	Name string `json:"name,omitempty"`
}

// Edit is one edit of a Request. Op says which, and which other fields
// it uses:
//
//   - "insert": Target, At ("before", "after", "start", "end" or
//     "replace"), and Markdown or Content (node JSON or an array of it);
//   - "replaceText": a text Target and Text;
//   - "addMark", "removeMark": a text Target and Mark (a mark's JSON;
//     for removeMark also a mark type's name, as a JSON string);
//   - "deleteBlock": Target;
//   - "setBlockType": Target, Type and optionally Attrs;
//   - "wrapInList": Target, Type ("bullet_list" or "ordered_list") and
//     optionally Attrs;
//   - "liftOutOfList": Target.
//
// A text target stands for its textblock where the edit needs a block.
type Edit struct {
	Op       string          `json:"op"`
	Target   Target          `json:"target"`
	At       string          `json:"at,omitempty"`
	Markdown *string         `json:"markdown,omitempty"`
	Content  json.RawMessage `json:"content,omitempty"`
	Text     *string         `json:"text,omitempty"`
	Mark     json.RawMessage `json:"mark,omitempty"`
	Type     string          `json:"type,omitempty"`
	Attrs    json.RawMessage `json:"attrs,omitempty"`
}

// ErrInvalid is wrapped by the errors of a request that cannot be read:
// malformed JSON, a missing or unknown field.
var ErrInvalid = errors.New("invalid edit request")

// Parse reads an edit request from data.
func Parse(data []byte) (*Request, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var req struct {
		Base  *int64 `json:"base"`
		Edits []Edit `json:"edits"`
		Name  string `json:"name"`
	}
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the request's object", ErrInvalid)
	}
	if req.Base == nil {
		return nil, fmt.Errorf("%w: base (the version the targets were read at) is missing", ErrInvalid)
	}
	if len(req.Edits) == 0 {
		return nil, fmt.Errorf("%w: edits is missing or empty", ErrInvalid)
	}
	return &Request{Base: *req.Base, Edits: req.Edits, Name: req.Name}, nil
}

// TargetError refuses an edit whose target is not found, or not once, in
// the document at the base version, or whose arguments do not fit the
// document (HTTP 422). Nothing was applied.
type TargetError struct {
	Edit int // its index in the request
	Op   string
	Err  error
}

func (e *TargetError) Error() string { return fmt.Sprintf("edit %d (%s): %v", e.Edit, e.Op, e.Err) }

func (e *TargetError) Unwrap() error { return e.Err }

// StaleError refuses a request because a change since its base version
// touched the target of one of its edits: its range was deleted, or its
// text differs (HTTP 409). Nothing was applied.
type StaleError struct {
	Edit int
	Op   string
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("edit %d (%s): its target changed since the base version: read the document again", e.Edit, e.Op)
}

// Markdown parses Markdown into a document of schema s.
type Markdown func(s *model.Schema, src string) (*model.Node, error)

// Plan is a request whose targets were found in the document at its base
// version, ready to be made on a later one (Make).
type Plan struct {
	req   *Request
	found []found
	built []built
}

// built is what an edit brings that does not depend on where it lands:
// content, a mark, a node type.
type built struct {
	content  model.Fragment
	mark     *model.Mark
	markType *model.MarkType
	typ      *model.NodeType
	attrs    model.Attrs
}

// Prepare finds req's targets in doc, the document at req.Base, and
// builds its content (Markdown with md). The errors are *TargetError.
func Prepare(doc *model.Node, req *Request, md Markdown) (*Plan, error) {
	p := &Plan{req: req, found: make([]found, len(req.Edits)), built: make([]built, len(req.Edits))}
	schema := doc.Type.Schema
	for i, e := range req.Edits {
		fail := func(err error) error { return &TargetError{Edit: i, Op: e.Op, Err: err} }
		f, err := locate(doc, e.Target)
		if err != nil {
			return nil, fail(err)
		}
		p.found[i] = f
		b, err := build(schema, e, f, md)
		if err != nil {
			return nil, fail(err)
		}
		p.built[i] = b
	}
	return p, nil
}

// build checks e's fields for its op and decodes what it brings.
func build(s *model.Schema, e Edit, f found, md Markdown) (built, error) {
	var b built
	switch e.Op {
	case "insert":
		switch e.At {
		case "before", "after", "start", "end", "replace":
		case "":
			return b, errors.New(`at is missing ("before", "after", "start", "end" or "replace")`)
		default:
			return b, fmt.Errorf(`at %q is not "before", "after", "start", "end" or "replace"`, e.At)
		}
		var err error
		if b.content, err = content(s, e, md); err != nil {
			return b, err
		}
		if b.content.Size() == 0 && e.At != "replace" {
			return b, errors.New("nothing to insert")
		}
	case "replaceText":
		if !f.text {
			return b, errors.New("replaceText needs a text target")
		}
		if e.Text == nil {
			return b, errors.New("text is missing")
		}
		if *e.Text != "" {
			t, err := s.Text(*e.Text, nil)
			if err != nil {
				return b, err
			}
			b.content = model.FragmentOf(t)
		}
	case "addMark", "removeMark":
		if !f.text {
			return b, fmt.Errorf("%s needs a text target", e.Op)
		}
		if len(e.Mark) == 0 {
			return b, errors.New("mark is missing")
		}
		var name string
		if e.Op == "removeMark" && json.Unmarshal(e.Mark, &name) == nil {
			if b.markType = s.MarkType(name); b.markType == nil {
				return b, fmt.Errorf("unknown mark type %q", name)
			}
			break
		}
		m, err := s.MarkFromJSON(e.Mark)
		if err != nil {
			return b, fmt.Errorf("mark: %v", err)
		}
		b.mark = m
	case "deleteBlock", "liftOutOfList":
	case "setBlockType", "wrapInList":
		if e.Type == "" {
			return b, errors.New("type is missing")
		}
		if b.typ = s.NodeType(e.Type); b.typ == nil {
			return b, fmt.Errorf("unknown node type %q", e.Type)
		}
		if e.Op == "setBlockType" && !b.typ.IsTextblock() {
			return b, fmt.Errorf("%s is not a textblock type", e.Type)
		}
		if len(e.Attrs) > 0 {
			v, err := model.ParseJSONValue(e.Attrs)
			if err != nil {
				return b, fmt.Errorf("attrs: %v", err)
			}
			obj, ok := v.(model.JSONObject)
			if !ok && v != nil {
				return b, errors.New("attrs is not an object")
			}
			for _, kv := range obj {
				b.attrs = append(b.attrs, model.Attr{Name: kv.Key, Value: kv.Value})
			}
		}
	case "":
		return b, errors.New("op is missing")
	default:
		return b, fmt.Errorf("unknown op %q", e.Op)
	}
	if e.Op != "insert" && (e.Markdown != nil || len(e.Content) > 0) {
		return b, fmt.Errorf("%s takes no markdown or content", e.Op)
	}
	return b, nil
}

// content returns the content an insert brings.
func content(s *model.Schema, e Edit, md Markdown) (model.Fragment, error) {
	switch {
	case e.Markdown != nil && len(e.Content) > 0:
		return model.Fragment{}, errors.New("give markdown or content, not both")
	case e.Markdown != nil:
		if md == nil {
			return model.Fragment{}, errors.New("markdown is not supported here")
		}
		doc, err := md(s, *e.Markdown)
		if err != nil {
			return model.Fragment{}, fmt.Errorf("markdown: %v", err)
		}
		return doc.Content, nil
	case len(e.Content) > 0:
		raw := bytes.TrimSpace(e.Content)
		if len(raw) > 0 && raw[0] == '[' {
			var items []json.RawMessage
			if err := json.Unmarshal(raw, &items); err != nil {
				return model.Fragment{}, fmt.Errorf("content: %v", err)
			}
			nodes := make([]*model.Node, len(items))
			for i, it := range items {
				n, err := s.NodeFromJSON(it)
				if err != nil {
					return model.Fragment{}, fmt.Errorf("content[%d]: %v", i, err)
				}
				nodes[i] = n
			}
			return model.NewFragment(nodes), nil
		}
		n, err := s.NodeFromJSON(raw)
		if err != nil {
			return model.Fragment{}, fmt.Errorf("content: %v", err)
		}
		return model.FragmentOf(n), nil
	}
	return model.Fragment{}, errors.New("markdown or content is missing")
}

// Make makes the plan's edits with tr, a transform of the current
// document, whose steps since the base version since maps (nil: tr's
// document is the base version's). A target that a change since touched
// gives a *StaleError, an edit that cannot be made there a
// *TargetError; tr then holds the steps of the edits before it, and the
// caller drops it.
func (p *Plan) Make(tr *transform.Transform) error { return p.MakeSince(tr, nil) }

// MakeSince is Make for a transform of a document after the base
// version: since maps the steps in between.
func (p *Plan) MakeSince(tr *transform.Transform, since *transform.Mapping) error {
	doc := tr.Doc
	type span struct{ from, to, blockFrom, blockTo int }
	spans := make([]span, len(p.found))
	for i, f := range p.found {
		s := span{f.from, f.to, f.blockFrom, f.blockTo}
		if since != nil {
			s = span{since.Map(f.from, 1), since.Map(f.to, -1), since.Map(f.blockFrom, 1), since.Map(f.blockTo, -1)}
		}
		if !f.still(doc, s.from, s.to) || f.text && !f.blockStill(doc, s.blockFrom, s.blockTo) {
			return &StaleError{Edit: i, Op: p.req.Edits[i].Op}
		}
		spans[i] = s
	}
	for i, e := range p.req.Edits {
		// Through the steps of the edits before this one.
		m := tr.Mapping
		s := span{m.Map(spans[i].from, 1), m.Map(spans[i].to, -1), m.Map(spans[i].blockFrom, 1), m.Map(spans[i].blockTo, -1)}
		f := p.found[i]
		f.from, f.to, f.blockFrom, f.blockTo = s.from, s.to, s.blockFrom, s.blockTo
		if err := p.make(tr, e, f, p.built[i]); err != nil {
			var se *StaleError
			if errors.As(err, &se) {
				return err
			}
			return &TargetError{Edit: i, Op: e.Op, Err: err}
		}
	}
	return nil
}

// blockStill reports whether the textblock of f, a text target, is still
// the block at [from, to) of doc, in its type.
func (f found) blockStill(doc *model.Node, from, to int) bool {
	n := doc.NodeAt(from)
	return from <= to && n != nil && n.Type == f.node.Type && from+n.NodeSize() == to
}
