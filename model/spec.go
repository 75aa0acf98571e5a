package model

import (
	"errors"
	"fmt"
	"io"
)

// ParseSchemaSpec reads a schema spec from JSON: an object with "nodes",
// "marks" and "topNode", mirroring prosemirror-model's SchemaSpec minus
// its functions (toDOM, parseDOM, leafText …):
//
//	{"topNode": "doc",
//	 "nodes": {"doc": {"content": "block+"},
//	           "paragraph": {"content": "inline*", "group": "block"},
//	           "text": {"group": "inline"}},
//	 "marks": {"em": {}, "link": {"attrs": {"href": {}}, "inclusive": false}}}
//
// The order of "nodes" and "marks" matters (the first node type is the
// default, the mark order is the mark rank). When given as objects, they
// are read as JavaScript sees the result of JSON.parse: a repeated key
// keeps its first position and takes its last value, and array-index keys
// ("0", "10") come first in ascending order, as for...in visits them. The
// same holds for the "attrs" of a node or mark. Both may also be arrays of
// [name, spec] pairs, which keep the order given; a name may not repeat
// there. And both may be given as JavaScript serializes an OrderedMap,
// which is what JSON.stringify(editor.schema.spec) writes (prosemirror-model
// keeps them as OrderedMaps in Schema.spec, Tiptap's editor.schema too):
// {"content": [name, spec, name, spec, …]}, an object with the one key
// "content" holding an array, in the order given; a name may not repeat
// there either. (A node or mark named "content" has an object as its
// spec, never an array, so the two forms do not overlap.)
//
// Node spec keys: content, marks, group, whitespace (strings); inline,
// atom, selectable, draggable, code, definingAsContext,
// definingForContent, defining, isolating, linebreakReplacement
// (booleans); attrs. Mark spec keys: attrs, excludes, group (strings),
// inclusive, spanning, code (booleans). An attribute spec has "default"
// (any JSON value; absent means the attribute is required) and
// "validate" (a type string such as "string|null"). Other keys are kept
// in Extra (node and mark specs) or ignored (attribute and schema specs).
//
// Where JavaScript would apply truthiness to a value of the wrong type
// ("inline": "yes", "content": 5), ParseSchemaSpec fails with an error
// naming the node or mark and the key. A JSON null is read as an absent
// key, which is what every use of these keys in JavaScript amounts to.
// Specs and attribute specs must be objects.
//
// ParseSchemaSpec checks only the form of the spec; NewSchema checks its
// meaning.
func ParseSchemaSpec(data []byte) (*SchemaSpec, error) {
	v, err := ParseJSONValue(data)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errors.New("schema spec: unexpected end of JSON input")
	}
	if err != nil {
		return nil, fmt.Errorf("schema spec: %w", err)
	}
	obj, ok := v.(JSONObject)
	if !ok {
		return nil, fmt.Errorf("schema spec: expected an object, got %s", jsonKind(v))
	}
	spec := &SchemaSpec{}
	for _, p := range obj {
		switch p.Key {
		case "nodes":
			entries, err := specEntries("nodes", p.Value)
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				ns, err := parseNodeSpec(e.Key, e.Value)
				if err != nil {
					return nil, err
				}
				spec.Nodes = append(spec.Nodes, NamedNodeSpec{Name: e.Key, Spec: ns})
			}
		case "marks":
			entries, err := specEntries("marks", p.Value)
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				ms, err := parseMarkSpec(e.Key, e.Value)
				if err != nil {
					return nil, err
				}
				spec.Marks = append(spec.Marks, NamedMarkSpec{Name: e.Key, Spec: ms})
			}
		case "topNode":
			switch t := p.Value.(type) {
			case string:
				spec.TopNode = t
			case nil:
			default:
				return nil, fmt.Errorf("schema spec: \"topNode\" must be a string, got %s", jsonKind(p.Value))
			}
		}
	}
	return spec, nil
}

// LoadSchema parses a JSON schema spec (see ParseSchemaSpec), builds the
// schema (see NewSchema) and checks that documents of it can exist (see
// CheckSatisfiable), which prosemirror-model does not check.
func LoadSchema(data []byte) (*Schema, error) {
	spec, err := ParseSchemaSpec(data)
	if err != nil {
		return nil, err
	}
	s, err := NewSchema(spec)
	if err != nil {
		return nil, err
	}
	if err := s.CheckSatisfiable(); err != nil {
		return nil, err
	}
	return s, nil
}

// specEntries returns the named specs of "nodes" or "marks": an object,
// an array of [name, spec] pairs, or the JSON of an OrderedMap.
func specEntries(what string, v any) (JSONObject, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case JSONObject:
		if content, ok := orderedMapContent(x); ok {
			return orderedMapEntries(what, content)
		}
		for _, p := range x {
			if _, isArray := p.Value.([]any); isArray && p.Key == "content" {
				return nil, fmt.Errorf("schema spec: %q has a \"content\" array beside other keys: an OrderedMap's JSON ({\"content\": [name, spec, …]}) has no other key, and a node or mark spec must be an object", what)
			}
		}
		return x, nil
	case []any:
		out := make(JSONObject, 0, len(x))
		seen := make(map[string]bool, len(x))
		for i, e := range x {
			pair, ok := e.([]any)
			if !ok || len(pair) != 2 {
				return nil, fmt.Errorf("schema spec: %s[%d] must be a [name, spec] pair", what, i)
			}
			name, ok := pair[0].(string)
			if !ok {
				return nil, fmt.Errorf("schema spec: %s[%d]: the name must be a string, got %s", what, i, jsonKind(pair[0]))
			}
			if seen[name] {
				return nil, fmt.Errorf("schema spec: %s[%d]: duplicate name %q", what, i, name)
			}
			seen[name] = true
			out = append(out, JSONProp{Key: name, Value: pair[1]})
		}
		return out, nil
	}
	return nil, fmt.Errorf("schema spec: %q must be an object, an OrderedMap's JSON ({\"content\": [name, spec, …]}) or an array of [name, spec] pairs, got %s", what, jsonKind(v))
}

// orderedMapContent returns the array of {"content": [...]}, the JSON of
// an OrderedMap (JSON.stringify(schema.spec) writes "nodes" and "marks"
// so). An object with other keys, or whose "content" is not an array, is
// the object form (a node or mark spec is never an array).
func orderedMapContent(obj JSONObject) ([]any, bool) {
	if len(obj) != 1 || obj[0].Key != "content" {
		return nil, false
	}
	content, ok := obj[0].Value.([]any)
	return content, ok
}

// orderedMapEntries returns the entries of an OrderedMap's content array:
// name, spec, name, spec, … in order. A name may not repeat.
func orderedMapEntries(what string, content []any) (JSONObject, error) {
	if len(content)%2 != 0 {
		return nil, fmt.Errorf("schema spec: %q is an OrderedMap ({\"content\": [name, spec, …]}) whose content has an odd length (%d): every name needs its spec", what, len(content))
	}
	out := make(JSONObject, 0, len(content)/2)
	seen := make(map[string]bool, len(content)/2)
	for i := 0; i < len(content); i += 2 {
		name, ok := content[i].(string)
		if !ok {
			return nil, fmt.Errorf("schema spec: %s.content[%d]: a name must be a string, got %s (an OrderedMap's content alternates names and specs)", what, i, jsonKind(content[i]))
		}
		if seen[name] {
			return nil, fmt.Errorf("schema spec: %s.content[%d]: duplicate name %q", what, i, name)
		}
		seen[name] = true
		out = append(out, JSONProp{Key: name, Value: content[i+1]})
	}
	return out, nil
}

// specReader reads the keys of one node or mark spec.
type specReader struct {
	kind, name string // "node" / "mark" and the type's name
	err        error
}

func (r *specReader) fail(key, want string, v any) {
	if r.err == nil {
		r.err = fmt.Errorf("schema spec: %s %q: %q must be %s, got %s", r.kind, r.name, key, want, jsonKind(v))
	}
}

func (r *specReader) str(key string, v any) string {
	s, _ := r.strPtr(key, v)
	return s
}

func (r *specReader) strPtr(key string, v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case nil:
		return "", false
	}
	r.fail(key, "a string", v)
	return "", false
}

func (r *specReader) boolean(key string, v any) bool {
	b, _ := r.boolPtr(key, v)
	return b
}

func (r *specReader) boolPtr(key string, v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case nil:
		return false, false
	}
	r.fail(key, "a boolean", v)
	return false, false
}

func optStr(s string, ok bool) *string {
	if !ok {
		return nil
	}
	return &s
}

func optBool(b bool, ok bool) *bool {
	if !ok {
		return nil
	}
	return &b
}

func (r *specReader) object(v any) JSONObject {
	obj, ok := v.(JSONObject)
	if !ok && r.err == nil {
		r.err = fmt.Errorf("schema spec: the spec of %s %q must be an object, got %s", r.kind, r.name, jsonKind(v))
	}
	return obj
}

func (r *specReader) attrs(v any) []AttributeSpec {
	if v == nil {
		return nil
	}
	obj, ok := v.(JSONObject)
	if !ok {
		r.fail("attrs", "an object", v)
		return nil
	}
	out := make([]AttributeSpec, 0, len(obj))
	for _, p := range obj {
		as := AttributeSpec{Name: p.Key}
		spec, ok := p.Value.(JSONObject)
		if !ok {
			if r.err == nil {
				r.err = fmt.Errorf("schema spec: %s %q: attribute %q must be an object, got %s", r.kind, r.name, p.Key, jsonKind(p.Value))
			}
			return nil
		}
		for _, q := range spec {
			switch q.Key {
			case "default":
				as.HasDefault = true
				as.Default = q.Value
			case "validate":
				switch x := q.Value.(type) {
				case string:
					as.Validate = x
					as.hasValidate = true
				case nil:
				default:
					if r.err == nil {
						r.err = fmt.Errorf("schema spec: %s %q: attribute %q: \"validate\" must be a string, got %s", r.kind, r.name, p.Key, jsonKind(x))
					}
				}
			}
		}
		out = append(out, as)
	}
	return out
}

func parseNodeSpec(name string, v any) (*NodeSpec, error) {
	r := &specReader{kind: "node", name: name}
	obj := r.object(v)
	ns := &NodeSpec{}
	for _, p := range obj {
		switch p.Key {
		case "content":
			ns.Content = r.str(p.Key, p.Value)
		case "marks":
			ns.Marks = optStr(r.strPtr(p.Key, p.Value))
		case "group":
			ns.Group = r.str(p.Key, p.Value)
		case "inline":
			ns.Inline = r.boolean(p.Key, p.Value)
		case "atom":
			ns.Atom = r.boolean(p.Key, p.Value)
		case "attrs":
			ns.Attrs = r.attrs(p.Value)
		case "selectable":
			ns.Selectable = optBool(r.boolPtr(p.Key, p.Value))
		case "draggable":
			ns.Draggable = r.boolean(p.Key, p.Value)
		case "code":
			ns.Code = r.boolean(p.Key, p.Value)
		case "whitespace":
			ns.Whitespace = r.str(p.Key, p.Value)
		case "definingAsContext":
			ns.DefiningAsContext = optBool(r.boolPtr(p.Key, p.Value))
		case "definingForContent":
			ns.DefiningForContent = optBool(r.boolPtr(p.Key, p.Value))
		case "defining":
			ns.Defining = r.boolean(p.Key, p.Value)
		case "isolating":
			ns.Isolating = r.boolean(p.Key, p.Value)
		case "linebreakReplacement":
			ns.LinebreakReplacement = r.boolean(p.Key, p.Value)
		default:
			ns.Extra = append(ns.Extra, RawProp{Key: p.Key, Value: appendJSONValue(nil, p.Value)})
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return ns, nil
}

func parseMarkSpec(name string, v any) (*MarkSpec, error) {
	r := &specReader{kind: "mark", name: name}
	obj := r.object(v)
	ms := &MarkSpec{}
	for _, p := range obj {
		switch p.Key {
		case "attrs":
			ms.Attrs = r.attrs(p.Value)
		case "inclusive":
			ms.Inclusive = optBool(r.boolPtr(p.Key, p.Value))
		case "excludes":
			ms.Excludes = optStr(r.strPtr(p.Key, p.Value))
		case "group":
			ms.Group = r.str(p.Key, p.Value)
		case "spanning":
			ms.Spanning = optBool(r.boolPtr(p.Key, p.Value))
		case "code":
			ms.Code = r.boolean(p.Key, p.Value)
		default:
			ms.Extra = append(ms.Extra, RawProp{Key: p.Key, Value: appendJSONValue(nil, p.Value)})
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return ms, nil
}

// jsonKind names the JSON type of v for error messages.
func jsonKind(v any) string {
	if _, ok := v.([]any); ok {
		return "array"
	}
	return jsTypeof(v)
}
