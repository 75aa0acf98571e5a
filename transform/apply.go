package transform

import (
	"fmt"

	"github.com/pmauthority/pmauthority/model"
)

// StepError is the failure of one step in ApplySteps.
type StepError struct {
	// Index is the index of the failing step.
	Index int
	// Err is why it failed.
	Err error
}

// Error returns "step i: " followed by Err's message.
func (e *StepError) Error() string { return fmt.Sprintf("step %d: %v", e.Index, e.Err) }

// Unwrap returns Err.
func (e *StepError) Unwrap() error { return e.Err }

// ApplySteps applies steps to doc in order and returns the resulting
// document. It is all or nothing: when a step fails, it returns a
// *StepError naming that step, and no document. doc itself is never
// modified (nodes are immutable).
func ApplySteps(doc *model.Node, steps []Step) (*model.Node, error) {
	for i, step := range steps {
		next, err := step.Apply(doc)
		if err != nil {
			return nil, &StepError{Index: i, Err: err}
		}
		doc = next
	}
	return doc, nil
}
