package changeset

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

// BenchmarkAddStepsScattered adds 20,000 one-character replacements
// three positions apart in one long text, by two authors, and simplifies
// the changes: every change is diffed in the same text node, and
// simplification reads them as one group.
func BenchmarkAddStepsScattered(b *testing.B) {
	schema, err := schemas.Get("basic")
	if err != nil {
		b.Fatal(err)
	}
	const n = 20_000
	doc, err := schema.NodeFromJSON(fmt.Appendf(nil, `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":%q}]}]}`, strings.Repeat("abc", n)))
	if err != nil {
		b.Fatal(err)
	}
	start := doc
	maps := make([]*transform.StepMap, n)
	data := make([]string, n)
	for i := range n {
		step, err := transform.StepFromJSON(schema, fmt.Appendf(nil, `{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"text","text":"xy"}]}}`, 1+3*i, 2+3*i))
		if err != nil {
			b.Fatal(err)
		}
		if doc, err = step.Apply(doc); err != nil {
			b.Fatal(err)
		}
		maps[i], data[i] = step.GetMap(), []string{"a", "b"}[i%2]
	}
	b.ResetTimer()
	for range b.N {
		set, err := Create(start, Options[string]{}).AddSteps(doc, maps, data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := SimplifyChanges(set.Changes(), doc); err != nil {
			b.Fatal(err)
		}
	}
}
