package apply

import (
	"errors"
	"fmt"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// StepOptions bound and check the steps that Steps applies.
type StepOptions struct {
	// MaxDocSize is the largest document content size (in positions)
	// allowed after a step; 0 means no limit.
	MaxDocSize int
	// MaxDocBytes is the largest document allowed after a step, in bytes
	// of its JSON (Node.JSONSize, cached per node, so that a step costs
	// only the measure of what it changed); 0 means no limit.
	MaxDocBytes int64
	// Strict checks the result as Node.check() does, which the steps do
	// not: a result that fails the check fails at the first step after
	// which the document fails it.
	Strict bool
	// Done, when it is closed, stops Steps before the next step (for a
	// context's Done channel). Nil means never.
	Done <-chan struct{}
}

// StepError is the failure of Steps at one step.
type StepError struct {
	// Index is the index of the failing step.
	Index int
	// Kind is the kind of failure: ErrStepFailed (the step does not
	// decode, apply or pass the strict check, or visit failed),
	// ErrTooDeep (its JSON nests deeper than jsonscan.DefaultMaxDepth),
	// ErrDocTooLarge or ErrCanceled (Done was closed before the step).
	Kind error
	// Err is why the step failed (nil for ErrDocTooLarge and
	// ErrCanceled).
	Err error
	// Size and Limit are, with ErrDocTooLarge, the content size the step
	// made and StepOptions.MaxDocSize, or, when Bytes is set, the length
	// of the document's JSON and StepOptions.MaxDocBytes.
	Size, Limit int
	// Bytes tells that Size and Limit are bytes of JSON (MaxDocBytes)
	// rather than positions (MaxDocSize).
	Bytes bool
}

// Error returns "step i: " followed by why it failed.
func (e *StepError) Error() string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("step %d: %v", e.Index, e.Err)
	case e.Kind == ErrDocTooLarge && e.Bytes:
		return fmt.Sprintf("step %d: document too large: its JSON is %d bytes, over the limit of %d bytes", e.Index, e.Size, e.Limit)
	case e.Kind == ErrDocTooLarge:
		return fmt.Sprintf("step %d: document too large: content size %d, over the limit of %d positions", e.Index, e.Size, e.Limit)
	}
	return fmt.Sprintf("step %d: %v", e.Index, e.Kind)
}

// Unwrap returns Kind and Err.
func (e *StepError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Steps applies n steps to doc, in order, and returns the resulting
// document. stepJSON(i) is the JSON of step i, which is decoded with
// doc's schema; visit, when not nil, is called after each step that
// applied within the limits, with the document before and after it.
//
// Steps is all or nothing: it stops at the first step that fails (to
// decode, to apply, within opts, or in visit) and returns a *StepError
// naming it, and no document. doc itself is never modified (nodes are
// immutable).
func Steps(doc *model.Node, n int, stepJSON func(i int) []byte, opts StepOptions,
	visit func(i int, step transform.Step, before, after *model.Node) error) (*model.Node, error) {
	schema := doc.Type.Schema
	return run(doc, n, func(i int) (transform.Step, *StepError) {
		step, err := transform.StepFromJSON(schema, stepJSON(i))
		if err != nil {
			if errors.Is(err, jsonscan.ErrTooDeep) {
				return nil, &StepError{Index: i, Kind: ErrTooDeep, Err: err}
			}
			return nil, &StepError{Index: i, Kind: ErrStepFailed, Err: err}
		}
		return step, nil
	}, opts, visit)
}

// Decoded is Steps for steps already decoded (with doc's schema).
func Decoded(doc *model.Node, steps []transform.Step, opts StepOptions,
	visit func(i int, step transform.Step, before, after *model.Node) error) (*model.Node, error) {
	return run(doc, len(steps), func(i int) (transform.Step, *StepError) { return steps[i], nil }, opts, visit)
}

// run is Steps with stepAt(i) giving step i.
func run(doc *model.Node, n int, stepAt func(i int) (transform.Step, *StepError), opts StepOptions,
	visit func(i int, step transform.Step, before, after *model.Node) error) (*model.Node, error) {
	cur := doc
	for i := range n {
		if opts.Done != nil {
			select {
			case <-opts.Done:
				return nil, &StepError{Index: i, Kind: ErrCanceled}
			default:
			}
		}
		step, serr := stepAt(i)
		if serr != nil {
			return nil, serr
		}
		next, err := step.Apply(cur)
		if err != nil {
			return nil, &StepError{Index: i, Kind: ErrStepFailed, Err: err}
		}
		if lim := opts.MaxDocSize; lim > 0 && next.Content.Size() > lim {
			return nil, &StepError{Index: i, Kind: ErrDocTooLarge, Size: next.Content.Size(), Limit: lim}
		}
		if lim := opts.MaxDocBytes; lim > 0 && int64(next.JSONSize()) > lim {
			return nil, &StepError{Index: i, Kind: ErrDocTooLarge, Size: next.JSONSize(), Limit: int(lim), Bytes: true}
		}
		if visit != nil {
			if err := visit(i, step, cur, next); err != nil {
				return nil, &StepError{Index: i, Kind: ErrStepFailed, Err: err}
			}
		}
		cur = next
	}
	if opts.Strict && n > 0 {
		if err := cur.Check(); err != nil {
			return nil, firstInvalid(doc, n, stepAt, err)
		}
	}
	return cur, nil
}

// firstInvalid returns the failure of the first of n steps after which
// doc fails Node.check(), given that it fails after all of them with err.
// The steps are known to decode and apply: this runs only when a strict
// check failed, so that valid steps check the document once.
func firstInvalid(doc *model.Node, n int, stepAt func(i int) (transform.Step, *StepError), err error) *StepError {
	i, cur := n-1, doc
	for j := range n - 1 {
		step, _ := stepAt(j)
		cur, _ = step.Apply(cur)
		if e := cur.Check(); e != nil {
			i, err = j, e
			break
		}
	}
	return &StepError{Index: i, Kind: ErrStepFailed, Err: fmt.Errorf("the step makes the document invalid: %w", err)}
}
