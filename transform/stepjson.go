package transform

import (
	"math"
	"strconv"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
)

// Step JSON is read in one pass: scan walks the object once, decoding the
// value of every key a built-in step kind knows (slices, marks and values
// straight from the scanner) and skipping the others. Of duplicate keys
// the last wins, as with JSON.parse. Errors in a slice or mark are kept
// with the field rather than returned at once, so that each fromJSON can
// then check its fields in the order of its JavaScript original and fail
// with the error JavaScript would raise first, whatever the key order.
// Malformed JSON fails the scan, as JSON.parse fails before fromJSON runs.
//
// Errors about step JSON are *model.JSONError: Msg is the JavaScript
// message, Path names the field ("from", "slice.content[0].type",
// "steps[1].mark").
//
// The checks of the JavaScript fromJSON methods come first. Then this port
// rejects what JavaScript accepts but cannot give a meaning to: positions
// that are negative, fractional or beyond 2^53-1. JavaScript throws
// "Position -1 out of range" when applying most such steps, but not all
// (a negative ReplaceAroundStep insert can land inside an open slice, and
// fractional positions resolve to nonsense), so they are refused outright.

// field is a key of step JSON known to a built-in step kind.
type field uint8

const (
	fStepType field = iota
	fFrom
	fTo
	fSlice
	fStructure
	fGapFrom
	fGapTo
	fInsert
	fMark
	fPos
	fAttr
	fValue
	fSteps
	numFields
)

var fieldNames = [numFields]string{
	"stepType", "from", "to", "slice", "structure", "gapFrom", "gapTo", "insert", "mark", "pos", "attr", "value", "steps",
}

func fieldOf(key []byte) (field, bool) {
	switch string(key) {
	case "stepType":
		return fStepType, true
	case "from":
		return fFrom, true
	case "to":
		return fTo, true
	case "slice":
		return fSlice, true
	case "structure":
		return fStructure, true
	case "gapFrom":
		return fGapFrom, true
	case "gapTo":
		return fGapTo, true
	case "insert":
		return fInsert, true
	case "mark":
		return fMark, true
	case "pos":
		return fPos, true
	case "attr":
		return fAttr, true
	case "value":
		return fValue, true
	case "steps":
		return fSteps, true
	}
	return 0, false
}

// rawValue locates the value of one field in the input.
type rawValue struct {
	kind       jsonscan.Kind // Invalid when the key is absent
	start, end int           // the value's bytes in jsonObject.data
	num        float64       // for numbers
}

// jsonObject is a scanned step object.
type jsonObject struct {
	data   []byte
	fields [numFields]rawValue

	stepType string // String(stepType), when present
	attr     string // when a string

	slice    model.Slice
	sliceErr error
	mark     *model.Mark
	markErr  error
	value    any

	steps []stepsElem // the elements of an array "steps"
}

// stepsElem is an element of "steps" (a markSet's steps).
type stepsElem struct {
	kind jsonscan.Kind
	obj  *jsonObject // for objects
}

// builtinStepTypes are the IDs of the built-in steps, which
// stepFromObject decodes without going through the registry.
var builtinStepTypes = [...]string{"replace", "replaceAround", "addMark", "removeMark", "markSet",
	"addNodeMark", "removeNodeMark", "attr", "docAttr"}

func isBuiltinStepType(id string) bool {
	for _, s := range builtinStepTypes {
		if id == s {
			return true
		}
	}
	return false
}

// internStepType returns b as a string, without allocating for the IDs
// of built-in steps.
func internStepType(b []byte) string {
	for _, s := range builtinStepTypes {
		if string(b) == s {
			return s
		}
	}
	return string(b)
}

// scan reads one JSON object from d.
func (o *jsonObject) scan(schema *model.Schema, d *jsonscan.Decoder) error {
	o.data = d.Data()
	if err := d.BeginObject(); err != nil {
		return err
	}
	for {
		key, more, err := d.NextKey()
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
		f, known := fieldOf(key)
		if !known {
			if err := d.Skip(); err != nil {
				return err
			}
			continue
		}
		kind, err := d.Peek()
		if err != nil {
			return err
		}
		v := rawValue{kind: kind, start: d.Pos()}
		if err := o.scanField(schema, d, f, &v); err != nil {
			return err
		}
		v.end = d.Pos()
		o.fields[f] = v
	}
}

// scanField reads the value of f, whose kind is v.kind.
func (o *jsonObject) scanField(schema *model.Schema, d *jsonscan.Decoder, f field, v *rawValue) error {
	var err error
	switch f {
	case fStepType:
		if v.kind == jsonscan.Number {
			v.num, _, err = d.ReadNumber()
			o.stepType = model.JSString(v.num)
		} else {
			o.stepType, err = scanPropertyKey(d, v.kind)
		}
	case fSlice:
		o.slice, o.sliceErr = schema.SliceFromDecoder(d)
		err = keepJSONError(&o.sliceErr, "slice")
	case fMark:
		o.mark, o.markErr = schema.MarkFromDecoder(d)
		err = keepJSONError(&o.markErr, "mark")
	case fValue:
		o.value, err = model.ValueFromDecoder(d)
	case fAttr:
		if v.kind == jsonscan.String {
			o.attr, err = d.ReadString()
		} else {
			err = d.Skip()
		}
	case fSteps:
		o.steps = nil
		if v.kind == jsonscan.Array {
			o.steps, err = scanSteps(schema, d)
		} else {
			err = d.Skip()
		}
	default:
		if v.kind == jsonscan.Number {
			v.num, _, err = d.ReadNumber()
		} else {
			err = d.Skip()
		}
	}
	return err
}

// keepJSONError leaves in *errp a *model.JSONError (which the decoder
// returns after reading the whole value), with path in front of its path,
// and returns any other error, after which scanning cannot go on.
func keepJSONError(errp *error, path string) error {
	if *errp == nil {
		return nil
	}
	if _, ok := (*errp).(*model.JSONError); ok {
		*errp = underPath(*errp, path)
		return nil
	}
	err := *errp
	*errp = nil
	return err
}

// underPath returns err with seg put in front of its path when it is a
// *model.JSONError, and err itself otherwise.
func underPath(err error, seg string) error {
	jerr, ok := err.(*model.JSONError)
	if !ok {
		return err
	}
	path := seg
	switch {
	case jerr.Path == "":
	case jerr.Path[0] == '[':
		path += jerr.Path
	default:
		path += "." + jerr.Path
	}
	return &model.JSONError{Msg: jerr.Msg, Path: path}
}

// scanPropertyKey reads a stepType that is not a number and returns the
// property key JavaScript makes of it: String(value).
func scanPropertyKey(d *jsonscan.Decoder, kind jsonscan.Kind) (string, error) {
	switch kind {
	case jsonscan.String:
		b, err := d.ReadStringBytes()
		return internStepType(b), err
	case jsonscan.Object:
		return "[object Object]", d.Skip()
	}
	v, err := model.ValueFromDecoder(d)
	return model.JSString(v), err
}

// scanSteps reads the array "steps", scanning the objects in it as steps.
func scanSteps(schema *model.Schema, d *jsonscan.Decoder) ([]stepsElem, error) {
	if err := d.BeginArray(); err != nil {
		return nil, err
	}
	elems := []stepsElem{}
	for {
		more, err := d.NextElem()
		if err != nil {
			return nil, err
		}
		if !more {
			return elems, nil
		}
		kind, err := d.Peek()
		if err != nil {
			return nil, err
		}
		elem := stepsElem{kind: kind}
		if kind == jsonscan.Object {
			elem.obj = &jsonObject{}
			err = elem.obj.scan(schema, d)
		} else {
			err = d.Skip()
		}
		if err != nil {
			return nil, err
		}
		elems = append(elems, elem)
	}
}

// raw returns the bytes of f's value.
func (o *jsonObject) raw(f field) []byte {
	v := &o.fields[f]
	return o.data[v.start:v.end]
}

// truthy reports whether JavaScript finds f's value truthy (false when
// absent).
func (o *jsonObject) truthy(f field) bool {
	v := &o.fields[f]
	switch v.kind {
	case jsonscan.True, jsonscan.Array, jsonscan.Object:
		return true
	case jsonscan.Number:
		return v.num != 0
	case jsonscan.String:
		return v.end-v.start > 2 // "" is the only way to write the empty string
	}
	return false
}

// stepTypeLooseEquals reports whether stepType == s in JavaScript: strings
// compare as strings, arrays and objects by their String() conversion;
// numbers, booleans and null never equal a step ID (which does not
// convert to a number).
func (o *jsonObject) stepTypeLooseEquals(s string) bool {
	switch o.fields[fStepType].kind {
	case jsonscan.String, jsonscan.Array, jsonscan.Object:
		return o.stepType == s
	}
	return false
}

// sliceField returns the slice under "slice" as Slice.fromJSON reads it:
// absent, falsy and non-object values give the empty slice.
func (o *jsonObject) sliceField() (model.Slice, error) {
	if o.fields[fSlice].kind == jsonscan.Invalid {
		return model.EmptySlice, nil
	}
	return o.slice, o.sliceErr
}

// markField returns the mark under "mark" as Schema.markFromJSON reads it.
func (o *jsonObject) markField(schema *model.Schema) (*model.Mark, error) {
	if o.fields[fMark].kind == jsonscan.Invalid {
		_, err := schema.MarkFromJSON([]byte("null")) // undefined fails as null does
		return nil, underPath(err, "mark")
	}
	return o.mark, o.markErr
}

// valueField returns the value under "value"; noValue reports that it is
// absent (undefined in JavaScript).
func (o *jsonObject) valueField() (value any, noValue bool) {
	if o.fields[fValue].kind == jsonscan.Invalid {
		return nil, true
	}
	return o.value, false
}

// maxPosition is the largest position accepted from JSON
// (Number.MAX_SAFE_INTEGER).
const maxPosition = 1<<53 - 1

// checkNumbers is the typeof check of a JavaScript fromJSON (where) on
// the fields fs: the error of the first that is not a number.
func (o *jsonObject) checkNumbers(where string, fs ...field) error {
	for _, f := range fs {
		if o.fields[f].kind != jsonscan.Number {
			return &model.JSONError{Msg: "Invalid input for " + where, Path: fieldNames[f]}
		}
	}
	return nil
}

// checkPositions checks that the numbers under fs are positions:
// integers from 0 to 2^53-1.
func (o *jsonObject) checkPositions(where string, fs ...field) error {
	for _, f := range fs {
		if n := o.fields[f].num; n < 0 || n > maxPosition || n != math.Trunc(n) {
			return &model.JSONError{
				Msg:  "Invalid input for " + where + ": " + fieldNames[f] + " must be a non-negative integer, not " + string(o.raw(f)),
				Path: fieldNames[f],
			}
		}
	}
	return nil
}

// pos returns the position under f, checked by checkPositions.
func (o *jsonObject) pos(f field) int { return int(o.fields[f].num) }

// checkAttr is the typeof check of a JavaScript fromJSON (where) on
// "attr".
func (o *jsonObject) checkAttr(where string) error {
	if o.fields[fAttr].kind != jsonscan.String {
		return &model.JSONError{Msg: "Invalid input for " + where, Path: "attr"}
	}
	return nil
}

// invalidStep is Step.fromJSON's complaint about input that is not an
// object with a truthy stepType.
func invalidStep(path string) error {
	return &model.JSONError{Msg: "Invalid input for Step.fromJSON", Path: path}
}

// jsonPathIndex returns field[i].
func jsonPathIndex(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }
