package apply

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// The kinds of failure, for callers to branch on (with errors.Is on a
// *Failure).
var (
	// ErrMalformed is a request that is not well-formed JSON.
	ErrMalformed = errors.New("malformed JSON")
	// ErrTooDeep is a request whose arrays and objects nest deeper than
	// Applier.MaxDepth.
	ErrTooDeep = errors.New("JSON nested too deeply")
	// ErrInvalidRequest is well-formed JSON that is not a request: not an
	// object, no "doc", or a field of the wrong type.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrUnknownSchema is a request naming a schema that Schemas does not
	// have.
	ErrUnknownSchema = errors.New("unknown schema")
	// ErrTooManySteps is a request with more than Limits.MaxSteps steps.
	ErrTooManySteps = errors.New("too many steps")
	// ErrDocTooLarge is a document whose content size or JSON, as given
	// or after a step, is over Limits.MaxDocSize or Limits.MaxDocBytes.
	ErrDocTooLarge = errors.New("document too large")
	// ErrInvalidDoc is a document that the schema rejects, as
	// Node.fromJSON would throw.
	ErrInvalidDoc = errors.New("invalid document")
	// ErrStepFailed is a step that cannot be decoded or applied.
	ErrStepFailed = errors.New("step failed")
	// ErrCanceled is a request whose context ended before all its steps
	// were applied.
	ErrCanceled = errors.New("request canceled")
)

// Failure is the error answer: the index of the failing step (-1 when the
// request or its document is at fault), why, and the kind of failure.
type Failure struct {
	Step    int
	Message string
	// Err is the kind of failure: one of the Err… values of this package.
	Err error
}

func (f *Failure) Error() string {
	if f.Step < 0 {
		return f.Message
	}
	return fmt.Sprintf("step %d: %s", f.Step, f.Message)
}

// Unwrap returns the kind of failure.
func (f *Failure) Unwrap() error { return f.Err }

// AppendJSON appends {"error":{"step":i,"message":"…"}}, the command
// line's error answer.
func (f *Failure) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"error":{"step":`...)
	buf = strconv.AppendInt(buf, int64(f.Step), 10)
	buf = append(buf, `,"message":`...)
	buf = model.AppendJSONString(buf, f.Message)
	return append(buf, "}}"...)
}

func requestFailure(err error, format string, args ...any) *Failure {
	return &Failure{Step: -1, Message: fmt.Sprintf(format, args...), Err: err}
}

// Applier runs apply requests. Set its fields before first use; it is
// then safe for concurrent use, and must not be copied.
type Applier struct {
	// Schemas resolves the request's "schema" (or its absence).
	Schemas *Schemas
	// Limits bound each request, as given: a zero field means no limit
	// (WithDefaults fills in the defaults). The sizes of the request's
	// body and header are the caller's to bound: the request is already
	// in memory.
	Limits Limits
	// MaxDepth is the deepest nesting of arrays and objects in a request
	// (0 means jsonscan's DefaultMaxDepth, 512). Steps are decoded with
	// that default as well, so a larger MaxDepth does not let deeper steps
	// through.
	MaxDepth int
	// Positions makes requests honour "positions" (the conformance
	// interface of the command line); without it the key is ignored.
	Positions bool
	// Strict also checks documents against their schema as Node.check()
	// does (content, marks, attributes), which prosemirror-model's
	// Node.fromJSON and the steps do not: a request whose document fails
	// the check is refused with ErrInvalidDoc, one whose steps produce a
	// document that fails it with ErrStepFailed naming the first step after
	// which the document is invalid. Off by default, for parity with a
	// JavaScript server.
	Strict bool

	pool sync.Pool // of *scratch
}

// scratch is the memory one request uses besides its document, reused.
type scratch struct {
	d         jsonscan.Decoder
	sub       jsonscan.Decoder
	steps     []span
	positions []float64
	applied   []transform.Step // with positions: the steps, to map through
	inverted  []transform.Step // with positions: their inverses
}

// span is where a value is in the input.
type span struct{ start, end int }

// maxPooledInput is the largest request whose scratch is kept for reuse:
// the decoder's buffer for escaped strings grows with the input.
const maxPooledInput = 1 << 20

// Apply decodes and runs one request, data, appending {"doc": …} (with
// "mapped", "mappedFlags" and "inverted" when Positions is set and the
// request asks for them) to buf. On failure it returns buf unchanged and
// a *Failure. n is the number of steps in the request, as far as it was
// read. The answer does not refer to data, which the caller may reuse.
// The context is checked between steps.
func (a *Applier) Apply(ctx context.Context, buf, data []byte) (out []byte, n int, err error) {
	sc, _ := a.pool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	out, n, f := a.apply(ctx, sc, buf, data)
	sc.d.Reset(nil)
	sc.sub.Reset(nil)
	clear(sc.applied)
	clear(sc.inverted)
	sc.applied, sc.inverted = sc.applied[:0], sc.inverted[:0]
	if len(data) <= maxPooledInput {
		a.pool.Put(sc)
	}
	if f != nil {
		return buf, n, f
	}
	return out, n, nil
}

var requestKeys = jsonscan.NewKeys("doc", "steps", "schema", "positions")

const (
	keyDoc = iota
	keySteps
	keySchema
	keyPositions
)

// request is what the scan of a request found.
type request struct {
	defaultSchema *model.Schema
	schema        *model.Schema // the schema to use; nil when unknown
	schemaFailure *Failure      // a "schema" of the wrong type or unknown

	docKind jsonscan.Kind // Invalid: no "doc"
	docSpan span
	doc     *model.Node
	docErr  error         // a *model.JSONError from decoding the doc
	docWith *model.Schema // the schema doc was decoded with, if any

	stepsKind jsonscan.Kind // Invalid: no "steps"
	nSteps    int

	posProblem  string // "positions" or an element of it of the wrong type
	hasPosition bool   // "positions" is an array: answer with mappings
}

func (a *Applier) apply(ctx context.Context, sc *scratch, buf, data []byte) ([]byte, int, *Failure) {
	req := request{docKind: jsonscan.Invalid}
	schema, err := a.Schemas.lookup(nil)
	req.defaultSchema, req.schema = schema, schema
	if err != nil {
		req.schemaFailure = requestFailure(ErrUnknownSchema, "%v", err)
	}
	if f := a.scan(sc, data, &req); f != nil {
		return nil, req.nSteps, f
	}
	if f := a.check(sc, data, &req); f != nil {
		return nil, req.nSteps, f
	}
	return a.run(ctx, sc, buf, data, &req)
}

// scan reads the request object, decoding the document and locating the
// steps. It fails only for malformed or too deeply nested JSON and for a
// request that is not an object; other problems are left in req for
// check, as the whole input must be read first (a syntax error anywhere
// wins, as JSON.parse runs before anything looks at the value).
func (a *Applier) scan(sc *scratch, data []byte, req *request) *Failure {
	d := &sc.d
	d.Reset(data)
	d.SetMaxDepth(a.MaxDepth)
	sc.steps = sc.steps[:0]
	if len(data) == 0 {
		return requestFailure(ErrMalformed, `empty request: expected {"doc": …, "steps": […]}`)
	}
	k, err := d.Peek()
	if err != nil {
		return syntaxFailure(d, err)
	}
	if k != jsonscan.Object {
		if err := d.Skip(); err != nil {
			return syntaxFailure(d, err)
		}
		if err := d.End(); err != nil {
			return syntaxFailure(d, err)
		}
		return requestFailure(ErrInvalidRequest, "invalid request: the request must be a JSON object, not %s", kindName(k))
	}
	if err := d.BeginObject(); err != nil {
		return syntaxFailure(d, err)
	}
	for {
		i, _, more, err := d.NextKeyIndex(requestKeys)
		if err != nil {
			return syntaxFailure(d, err)
		}
		if !more {
			break
		}
		switch i {
		case keyDoc:
			err = a.scanDoc(d, req)
		case keySteps:
			err = a.scanSteps(sc, d, req)
		case keySchema:
			err = a.scanSchema(d, req)
		case keyPositions:
			if a.Positions {
				err = scanPositions(sc, d, req)
			} else {
				err = d.Skip()
			}
		default:
			err = d.Skip()
		}
		if err != nil {
			return syntaxFailure(d, err)
		}
	}
	if err := d.End(); err != nil {
		return syntaxFailure(d, err)
	}
	return nil
}

// scanDoc reads "doc", decoding it with the schema named so far. Of
// duplicate keys the last wins, as with JSON.parse.
func (a *Applier) scanDoc(d *jsonscan.Decoder, req *request) error {
	k, err := d.Peek()
	if err != nil {
		return err
	}
	req.docKind, req.doc, req.docErr, req.docWith = k, nil, nil, nil
	start := d.Pos()
	if k != jsonscan.Object || req.schema == nil {
		err = d.Skip()
	} else {
		req.doc, err = req.schema.NodeFromDecoder(d)
		if _, ok := err.(*model.JSONError); ok {
			req.docErr, err = err, nil
		}
		req.docWith = req.schema
	}
	req.docSpan = span{start, d.Pos()}
	return err
}

// scanSteps reads "steps", noting where each step is (up to the limit:
// the others are only counted).
func (a *Applier) scanSteps(sc *scratch, d *jsonscan.Decoder, req *request) error {
	k, err := d.Peek()
	if err != nil {
		return err
	}
	req.stepsKind, req.nSteps = k, 0
	sc.steps = sc.steps[:0]
	if k != jsonscan.Array {
		return d.Skip()
	}
	if err := d.BeginArray(); err != nil {
		return err
	}
	for {
		more, err := d.NextElem()
		if err != nil || !more {
			return err
		}
		if _, err := d.Peek(); err != nil {
			return err
		}
		start := d.Pos()
		if err := d.Skip(); err != nil {
			return err
		}
		req.nSteps++
		if a.Limits.MaxSteps <= 0 || req.nSteps <= a.Limits.MaxSteps {
			sc.steps = append(sc.steps, span{start, d.Pos()})
		}
	}
}

// scanSchema reads "schema": a name, or null for the default.
func (a *Applier) scanSchema(d *jsonscan.Decoder, req *request) error {
	k, err := d.Peek()
	if err != nil {
		return err
	}
	req.schemaFailure = nil
	switch k {
	case jsonscan.Null:
		req.schema = req.defaultSchema
		return d.ReadNull()
	case jsonscan.String:
		name, err := d.ReadStringBytes()
		if err != nil {
			return err
		}
		req.schema, err = a.Schemas.lookup(name)
		if err != nil {
			req.schemaFailure = requestFailure(ErrUnknownSchema, "%v", err)
		}
		return nil
	}
	req.schema = nil
	req.schemaFailure = requestFailure(ErrInvalidRequest, `invalid request: "schema" must be a string, not %s`, kindName(k))
	return d.Skip()
}

// scanPositions reads "positions": an array of numbers, or null.
func scanPositions(sc *scratch, d *jsonscan.Decoder, req *request) error {
	k, err := d.Peek()
	if err != nil {
		return err
	}
	req.posProblem, req.hasPosition = "", false
	sc.positions = sc.positions[:0]
	if k != jsonscan.Array {
		if k != jsonscan.Null {
			req.posProblem = `"positions" must be an array of numbers, not ` + kindName(k)
		}
		return d.Skip()
	}
	req.hasPosition = true
	if err := d.BeginArray(); err != nil {
		return err
	}
	for i := 0; ; i++ {
		more, err := d.NextElem()
		if err != nil || !more {
			return err
		}
		k, err := d.Peek()
		if err != nil {
			return err
		}
		if k != jsonscan.Number {
			if req.posProblem == "" {
				req.posProblem = fmt.Sprintf(`"positions[%d]" must be a number, not %s`, i, kindName(k))
			}
			if err := d.Skip(); err != nil {
				return err
			}
			continue
		}
		p, _, err := d.ReadNumber()
		if err != nil {
			return err
		}
		sc.positions = append(sc.positions, p)
	}
}

// check reports what is wrong with a well-formed request, in a fixed
// order, and decodes the document again if a later "schema" key named
// another schema than the one it was decoded with.
func (a *Applier) check(sc *scratch, data []byte, req *request) *Failure {
	if req.schemaFailure != nil {
		return req.schemaFailure
	}
	switch req.docKind {
	case jsonscan.Invalid:
		return requestFailure(ErrInvalidRequest, `invalid request: missing "doc"`)
	case jsonscan.Object:
	default:
		return requestFailure(ErrInvalidRequest, `invalid request: "doc" must be an object, not %s`, kindName(req.docKind))
	}
	switch req.stepsKind {
	case jsonscan.Invalid, jsonscan.Null, jsonscan.Array:
	default:
		return requestFailure(ErrInvalidRequest, `invalid request: "steps" must be an array, not %s`, kindName(req.stepsKind))
	}
	if req.posProblem != "" {
		return requestFailure(ErrInvalidRequest, "invalid request: %s", req.posProblem)
	}
	if lim := a.Limits.MaxSteps; lim > 0 && req.nSteps > lim {
		return requestFailure(ErrTooManySteps, "too many steps: the request has %d, over the limit of %d steps per request", req.nSteps, lim)
	}
	if req.docWith != req.schema {
		sub := &sc.sub
		sub.Reset(data[req.docSpan.start:req.docSpan.end])
		sub.SetMaxDepth(max(sc.d.MaxDepth()-1, 1))
		doc, err := req.schema.NodeFromDecoder(sub)
		if _, ok := err.(*model.JSONError); !ok && err != nil {
			// The same bytes were read without a syntax error before.
			return syntaxFailure(sub, err)
		}
		req.doc, req.docErr, req.docWith = doc, err, req.schema
	}
	if req.docErr != nil {
		return requestFailure(ErrInvalidDoc, "invalid doc: %v", req.docErr)
	}
	if a.Strict {
		if err := req.doc.Check(); err != nil {
			return requestFailure(ErrInvalidDoc, "invalid doc: %v", err)
		}
	}
	if lim := a.Limits.MaxDocSize; lim > 0 && req.doc.Content.Size() > lim {
		return requestFailure(ErrDocTooLarge, "document too large: its content size is %d, over the limit of %d positions", req.doc.Content.Size(), lim)
	}
	if lim := a.Limits.MaxDocBytes; lim > 0 && int64(req.doc.JSONSize()) > lim {
		return requestFailure(ErrDocTooLarge, "document too large: its JSON is %d bytes, over the limit of %d bytes", req.doc.JSONSize(), lim)
	}
	return nil
}

// run applies the steps and writes the answer.
func (a *Applier) run(ctx context.Context, sc *scratch, buf, data []byte, req *request) ([]byte, int, *Failure) {
	stepJSON := func(i int) []byte { return data[sc.steps[i].start:sc.steps[i].end] }
	var visit func(int, transform.Step, *model.Node, *model.Node) error
	withPositions := a.Positions && req.hasPosition
	if withPositions {
		visit = func(_ int, st transform.Step, before, _ *model.Node) error {
			inv, err := st.Invert(before)
			if err != nil {
				return fmt.Errorf("invert: %w", err)
			}
			sc.applied = append(sc.applied, st)
			sc.inverted = append(sc.inverted, inv)
			return nil
		}
	}
	opts := StepOptions{MaxDocSize: a.Limits.MaxDocSize, MaxDocBytes: a.Limits.MaxDocBytes, Strict: a.Strict, Done: ctx.Done()}
	cur, err := Steps(req.doc, len(sc.steps), stepJSON, opts, visit)
	if err != nil {
		return nil, req.nSteps, stepFailure(ctx, err.(*StepError))
	}
	buf = append(buf, `{"doc":`...)
	buf = cur.AppendJSON(buf)
	if withPositions {
		var f *Failure
		if buf, f = appendMappings(buf, sc); f != nil {
			return nil, req.nSteps, f
		}
	}
	return append(buf, '}'), req.nSteps, nil
}

// stepFailure turns a failure of Steps into the answer's Failure.
func stepFailure(ctx context.Context, e *StepError) *Failure {
	f := &Failure{Step: e.Index, Err: e.Kind}
	switch e.Kind {
	case ErrCanceled:
		f.Message = fmt.Sprintf("request canceled before step %d: %v", e.Index, ctx.Err())
	case ErrTooDeep:
		f.Message = tooDeepMessage(jsonscan.DefaultMaxDepth, e.Err)
	case ErrDocTooLarge:
		if e.Bytes {
			f.Message = fmt.Sprintf("document too large: the step makes its JSON %d bytes, over the limit of %d bytes", e.Size, e.Limit)
			break
		}
		f.Message = fmt.Sprintf("document too large: the step makes its content size %d, over the limit of %d positions", e.Size, e.Limit)
	default:
		f.Message = e.Err.Error()
	}
	return f
}

// appendMappings appends the "mapped", "mappedFlags" and "inverted"
// members of an answer to a request with positions.
func appendMappings(buf []byte, sc *scratch) ([]byte, *Failure) {
	positions := make([]int, len(sc.positions))
	for i, p := range sc.positions {
		if p != math.Trunc(p) || p < 0 || p > math.MaxInt32 {
			return nil, requestFailure(ErrInvalidRequest, "positions[%d]: %v is not a non-negative integer", i, p)
		}
		positions[i] = int(p)
	}
	mapping := transform.NewMapping(nil)
	for _, st := range sc.applied {
		mapping.AppendMap(st.GetMap(), -1)
	}
	buf = append(buf, `,"mapped":[`...)
	var flags []byte
	n := 0
	for _, p := range positions {
		for _, assoc := range [2]int{-1, 1} {
			r := mapping.MapResult(p, assoc)
			if n > 0 {
				buf = append(buf, ',')
				flags = append(flags, ',')
			}
			n++
			buf = append(buf, '[')
			buf = strconv.AppendInt(buf, int64(p), 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(assoc), 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(r.Pos), 10)
			buf = append(buf, ',')
			buf = strconv.AppendBool(buf, r.Deleted())
			buf = append(buf, ']')
			flags = append(flags, '[')
			flags = strconv.AppendBool(flags, r.DeletedBefore())
			flags = append(flags, ',')
			flags = strconv.AppendBool(flags, r.DeletedAfter())
			flags = append(flags, ',')
			flags = strconv.AppendBool(flags, r.DeletedAcross())
			flags = append(flags, ']')
		}
	}
	buf = append(buf, `],"mappedFlags":[`...)
	buf = append(buf, flags...)
	buf = append(buf, `],"inverted":[`...)
	for i, inv := range sc.inverted {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = inv.AppendJSON(buf)
	}
	return append(buf, ']'), nil
}

// syntaxFailure turns an error of d (a *jsonscan.SyntaxError) into a
// Failure.
func syntaxFailure(d *jsonscan.Decoder, err error) *Failure {
	if errors.Is(err, jsonscan.ErrTooDeep) {
		return requestFailure(ErrTooDeep, "%s", tooDeepMessage(d.MaxDepth(), err))
	}
	return requestFailure(ErrMalformed, "%v", err)
}

// tooDeepMessage explains a nesting error under the given limit.
func tooDeepMessage(limit int, err error) string {
	msg := fmt.Sprintf("JSON nested too deeply: over the limit of %d levels of arrays and objects", limit)
	var serr *jsonscan.SyntaxError
	if errors.As(err, &serr) {
		msg += fmt.Sprintf(" (at offset %d)", serr.Offset)
	}
	return msg
}

// kindName names a JSON kind in a message: "an array", "null" ….
func kindName(k jsonscan.Kind) string {
	switch k {
	case jsonscan.Null:
		return "null"
	case jsonscan.True, jsonscan.False:
		return "a boolean"
	case jsonscan.Number:
		return "a number"
	case jsonscan.String:
		return "a string"
	case jsonscan.Array:
		return "an array"
	case jsonscan.Object:
		return "an object"
	}
	return k.String()
}
