package collab

import (
	"errors"
	"fmt"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// Rebased is what Rebase makes of a commit's steps: those that still
// apply, as they apply to the current document.
type Rebased struct {
	// Steps are the kept steps, mapped onto the current document, in
	// the order of the commit: each applies to the document after the
	// ones before it.
	Steps []transform.Step
	// Dropped are the indexes, ascending, of the commit's steps that were
	// left out: mapped, their range was gone (Step.Map returned nil), or
	// they no longer applied.
	Dropped []int
	// Doc is the current document after Steps.
	Doc *model.Node
	// Mapping maps positions in the document that the commit's steps
	// made from base to positions in Doc.
	Mapping *transform.Mapping
}

// An UndoError is the failure of Rebase to take a commit's steps back
// from the document they made, where rebaseSteps starts. It happens only
// for steps whose inverse does not undo them exactly: a replace with
// from > to (which JS takes), or a mark step on a text whose marks
// exclude each other (which Node.fromJSON keeps).
type UndoError struct {
	// Index is the commit's step whose inverse does not apply, or -1
	// when the inverses applied but did not give back the base document.
	Index int
	// Err is why the inverse did not apply (nil with Index -1).
	Err error
}

// Error says which step cannot be undone and why.
func (e *UndoError) Error() string {
	if e.Index < 0 {
		return "collab: rebase: the inverses of the steps do not give back the document they were made on"
	}
	return fmt.Sprintf("collab: rebase: the inverse of step %d does not apply: %v", e.Index, e.Err)
}

// Unwrap returns Err.
func (e *UndoError) Unwrap() error { return e.Err }

// Rebase is prosemirror-collab's rebaseSteps on the authority's side: it
// brings the steps of a commit made on an older version onto the
// current document. steps were made on base, the document at the
// commit's version (steps[i] applies to base after steps[:i]); over are
// the maps of the steps accepted since, in order, which made current
// from base.
//
// Each step is mapped through the inverses of the commit's earlier steps,
// the steps since base and the commit's steps already rebased, each
// inverse mirrored by its rebased step, so that a position inside what an
// earlier step of the commit inserted maps into the rebased insertion
// instead of collapsing. A step is kept when it maps and applies, and
// dropped otherwise. The result is rebaseSteps', step for step and byte
// for byte (conformance/rebase_test.go).
//
// Rebase does not throw where rebaseSteps does: a mapped step on which
// Transform.maybeStep throws, rather than returning a failed result, is
// dropped like any other that no longer applies (prosemirror-collab's
// client fails in receiveTransaction there).
//
// Rebase fails with a *transform.StepError when a step does not apply
// where it was made, and with an *UndoError when the commit's steps
// cannot be taken back to base: where rebaseSteps throws, or goes on
// from another document than base, which current is not made from.
// With base nil neither is checked: the authority, which does not keep
// the document at the commit's version, rebases from the maps alone, and
// a step that did not apply where it was made is kept only if it applies
// to the current document once mapped. A step with a range that ends
// before it starts (a replace from after to), whose inverse's map is not
// its map inverted, then fails with a *transform.StepError wrapping
// ErrReversedRange.
func Rebase(base *model.Node, steps []transform.Step, over []*transform.StepMap, current *model.Node) (Rebased, error) {
	// The maps of the inverses, last first, then those of the steps since
	// base. Without base, a step's map inverted stands for its inverse's,
	// which it equals for every step whose ranges do not end before they
	// start.
	var mapping transform.Mapping
	if base != nil {
		inverses, err := undo(base, steps)
		if err != nil {
			return Rebased{}, err
		}
		for i := len(inverses) - 1; i >= 0; i-- {
			mapping.AppendMap(inverses[i].GetMap(), -1)
		}
	} else {
		for i, step := range steps {
			if reversed(step.GetMap()) {
				return Rebased{}, &transform.StepError{Index: i, Err: ErrReversedRange}
			}
		}
		for i := len(steps) - 1; i >= 0; i-- {
			mapping.AppendMap(steps[i].GetMap().Invert(), -1)
		}
	}
	for i, m := range over {
		if m == nil {
			return Rebased{}, fmt.Errorf("collab: rebase: no map for step %d since the base", i)
		}
		mapping.AppendMap(m, -1)
	}

	// Redo each step mapped through what came after it, mirrored with
	// its inverse when it applies.
	out := Rebased{Doc: current, Mapping: &mapping}
	for i, mapFrom := 0, len(steps); i < len(steps); i++ {
		mapped := steps[i].Map(mapping.Slice(mapFrom, len(mapping.Maps())))
		mapFrom--
		if mapped == nil {
			out.Dropped = append(out.Dropped, i)
			continue
		}
		next, err := mapped.Apply(out.Doc)
		if err != nil {
			out.Dropped = append(out.Dropped, i)
			continue
		}
		out.Doc = next
		out.Steps = append(out.Steps, mapped)
		// mapFrom is now the index of the step's inverse.
		mapping.AppendMap(mapped.GetMap(), mapFrom)
	}
	return out, nil
}

// undo checks that steps apply to base, one after the other, and that
// their inverses, applied last first, give base back, as rebaseSteps
// assumes of the client's document, and returns the inverses.
func undo(base *model.Node, steps []transform.Step) ([]transform.Step, error) {
	inverses := make([]transform.Step, len(steps))
	doc := base
	for i, step := range steps {
		next, err := step.Apply(doc)
		if err != nil {
			return nil, &transform.StepError{Index: i, Err: err}
		}
		if inverses[i], err = step.Invert(doc); err != nil {
			return nil, &UndoError{Index: i, Err: err}
		}
		doc = next
	}
	for i := len(inverses) - 1; i >= 0; i-- {
		next, err := inverses[i].Apply(doc)
		if err != nil {
			return nil, &UndoError{Index: i, Err: err}
		}
		doc = next
	}
	if !doc.Eq(base) {
		return nil, &UndoError{Index: -1}
	}
	return inverses, nil
}

// ErrReversedRange is why Rebase without a base refuses a step: a range
// of it ends before it starts.
var ErrReversedRange = errors.New("a range of the step ends before it starts")

// reversed reports whether a range of m ends before it starts.
func reversed(m *transform.StepMap) bool {
	rev := false
	m.ForEach(func(oldStart, oldEnd, newStart, newEnd int) {
		rev = rev || oldEnd < oldStart || newEnd < newStart
	})
	return rev
}
