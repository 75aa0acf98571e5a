package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Attrs holds a node's or mark's attributes as name/value pairs in the
// order of the type's attribute spec. Values are JSON values: nil, bool,
// float64, string, []any, or JSONObject (recursively).
type Attrs []Attr

// Attr is one attribute value.
type Attr struct {
	Name  string
	Value any
}

// JSONObject is a JSON object value with its keys in JavaScript property
// order (array-index keys ascending first, then the others in insertion
// order), so that it encodes as JSON.stringify would.
type JSONObject []JSONProp

// JSONProp is one key of a JSONObject.
type JSONProp struct {
	Key   string
	Value any
}

// Get returns the value of the attribute called name and whether it is
// present.
func (a Attrs) Get(name string) (any, bool) {
	for i := range a {
		if a[i].Name == name {
			return a[i].Value, true
		}
	}
	return nil, false
}

// equalAttrs compares two attribute sets as prosemirror-model's
// compareDeep compares attribute objects: the same names with deeply
// equal values, in any order.
func equalAttrs(a, b Attrs) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if i < len(b) && b[i].Name == a[i].Name {
			if !compareDeep(a[i].Value, b[i].Value) {
				return false
			}
			continue
		}
		v, ok := b.Get(a[i].Name)
		if !ok || !compareDeep(a[i].Value, v) {
			return false
		}
	}
	return true
}

// newAttribute is JS new Attribute(typeName, attrName, spec).
func newAttribute(owner string, spec AttributeSpec) *Attribute {
	a := &Attribute{Name: spec.Name, HasDefault: spec.HasDefault, Default: spec.Default, owner: owner}
	if spec.Validate != "" || spec.hasValidate {
		a.Validate = strings.Split(spec.Validate, "|")
	}
	return a
}

// validate checks a value given for the attribute against its validate
// type string, as the function JS validateType builds.
func (a *Attribute) validate(v any) error {
	return a.validateTypeof(jsTypeof(v))
}

// validateTypeof checks a value whose JS typeof (with "null" for null) is
// typ.
func (a *Attribute) validateTypeof(typ string) error {
	if a.Validate == nil || slices.Contains(a.Validate, typ) {
		return nil
	}
	return fmt.Errorf("Expected value of type %s for attribute %s on type %s, got %s",
		strings.Join(a.Validate, ","), a.Name, a.owner, typ)
}

// defaultAttrs returns the attribute values of a node or mark created
// without attributes, or nil when some attribute is required. A type
// without attributes gets an empty, non-nil Attrs.
func defaultAttrs(attrs []*Attribute) Attrs {
	out := make(Attrs, 0, len(attrs))
	for _, a := range attrs {
		if !a.HasDefault {
			return nil
		}
		out = append(out, Attr{Name: a.Name, Value: a.Default})
	}
	return out
}

// computeAttrs is JS computeAttrs: the attributes in spec order, taking
// each from given when present (validated) and from the default
// otherwise. A nil given is JS null: every attribute then reads as null
// (and is validated as such), so a required attribute gets null rather
// than an error; a non-nil given without the attribute uses the default or
// fails with "No value supplied for attribute NAME". Names in given that
// the spec lacks are dropped; when given has a name twice, the first
// counts.
//
// Unlike JavaScript, where attrs is a plain object, a name such as
// "constructor" or "toString" is not looked up on Object.prototype.
func computeAttrs(attrs []*Attribute, given Attrs) (Attrs, error) {
	built := make(Attrs, len(attrs))
	for i, a := range attrs {
		var v any
		present := given == nil
		if given != nil {
			v, present = given.Get(a.Name)
		}
		if !present {
			if !a.HasDefault {
				return nil, errors.New("No value supplied for attribute " + a.Name)
			}
			v = a.Default
		} else if err := a.validate(v); err != nil {
			return nil, err
		}
		built[i] = Attr{Name: a.Name, Value: v}
	}
	return built, nil
}

// checkAttrs is node.ts checkAttrs, used by Node.Check: every value must
// belong to a declared attribute (kind is "node" or "mark") and pass its
// validation; a missing value is validated as undefined.
func checkAttrs(attrs []*Attribute, values Attrs, kind, typeName string) error {
	for _, v := range values {
		if !slices.ContainsFunc(attrs, func(a *Attribute) bool { return a.Name == v.Name }) {
			return errors.New("Unsupported attribute " + v.Name + " for " + kind + " of type " + typeName)
		}
	}
	for _, a := range attrs {
		if a.Validate == nil {
			continue
		}
		if v, ok := values.Get(a.Name); ok {
			if err := a.validate(v); err != nil {
				return err
			}
		} else if err := a.validateTypeof("undefined"); err != nil {
			return err
		}
	}
	return nil
}
