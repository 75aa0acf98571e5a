package changeset

import (
	"errors"
	"testing"

	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

// FuzzAddSteps adds arbitrary step maps, which need not fit the
// documents, to a set, in several calls, and simplifies the changes.
// Inconsistent input may fail with ErrInconsistent, with no other error;
// it must never panic.
func FuzzAddSteps(f *testing.F) {
	f.Add([]byte{1, 0, 3, 4, 2, 1, 1, 9})
	f.Add([]byte{0, 0, 0, 0, 17, 0, 0, 5, 2, 1, 3})
	f.Add([]byte("\x02\x05\x01\x00\x01\x02\x03\x04\x05\x06\x07\x08"))
	schema, err := schemas.Get("basic")
	if err != nil {
		f.Fatal(err)
	}
	docs := []string{
		`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"ab cd😀 ef"}]},{"type":"paragraph","content":[{"type":"text","text":"ghij klm"}]}]}`,
		`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"xyz"}]},{"type":"horizontal_rule"},{"type":"blockquote","content":[{"type":"paragraph"}]}]}`,
	}
	authors := []string{"a", "b", ""}
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		doc, err := schema.NodeFromJSON([]byte(docs[next()%len(docs)]))
		if err != nil {
			t.Fatal(err)
		}
		other, _ := schema.NodeFromJSON([]byte(docs[next()%len(docs)]))
		set := Create(doc, Options[string]{})
		for calls := next()%3 + 1; calls > 0 && len(data) > 0; calls-- {
			var maps []*transform.StepMap
			var stepData []string
			for n := next() % 4; n > 0; n-- {
				var ranges []int
				for k := next()%2 + 1; k > 0; k-- {
					ranges = append(ranges, next()%24, next()%8, next()%8)
				}
				maps = append(maps, transform.NewStepMap(ranges, next()%5 == 0))
				stepData = append(stepData, authors[next()%len(authors)])
			}
			set, err = set.AddSteps(other, maps, stepData)
			if errors.Is(err, ErrInconsistent) {
				return
			}
			if err != nil {
				t.Fatalf("AddSteps: %v", err)
			}
		}
		// Maps that do not fit the documents can make changes whose spans
		// do not cover them (as in JS): simplifying them may fail, but
		// not panic.
		if _, err := SimplifyChanges(set.Changes(), other); err != nil && !errors.Is(err, ErrInconsistent) {
			t.Errorf("SimplifyChanges: %v", err)
		}
	})
}
