package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// sizeLine is the text of every paragraph (must match js/applysize.mjs).
const sizeLine = "The quick brown fox jumps over the lazy dog, then naps in the sun."

// sizeDoc returns the JSON of a document of n paragraphs of sizeLine.
func sizeDoc(n int) []byte {
	p := `{"type":"paragraph","content":[{"type":"text","text":"` + sizeLine + `"}]}`
	return []byte(`{"type":"doc","content":[` + strings.Repeat(p+",", n-1) + p + `]}`)
}

// BenchmarkApplyDocSize applies one typical edit to documents of N
// top-level paragraphs: type a character in the middle of the middle
// paragraph (an insertText replace step) and delete it again, so the
// document keeps its size and every apply works on a new document. One
// operation is the pair; ns/step is half of it (cpu-ns/step the same in
// CPU time). Only Apply is timed. The node counterpart is js/applysize.mjs.
func BenchmarkApplyDocSize(b *testing.B) {
	for _, n := range []int{10, 100, 1_000, 10_000} {
		b.Run(fmt.Sprintf("paragraphs=%d", n), func(b *testing.B) {
			schema := basicSchema(b)
			doc, err := schema.NodeFromJSON(sizeDoc(n))
			if err != nil {
				b.Fatal(err)
			}
			pos := n/2*(len(sizeLine)+2) + 1 + len(sizeLine)/2
			insert := mustStep(b, schema, fmt.Sprintf(`{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"text","text":"x"}]}}`, pos, pos))
			del := mustStep(b, schema, fmt.Sprintf(`{"stepType":"replace","from":%d,"to":%d}`, pos, pos+1))
			d := doc
			cpu := cpuTime(b)
			for b.Loop() {
				a, err := insert.Apply(d)
				if err != nil {
					b.Fatal(err)
				}
				if d, err = del.Apply(a); err != nil {
					b.Fatal(err)
				}
			}
			cpu = cpuTime(b) - cpu
			if !d.Eq(doc) {
				b.Fatal("insert + delete did not give the document back")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/step")
			reportCPU(b, cpu, 2)
		})
	}
}

// mustStep decodes a step from its JSON.
func mustStep(b *testing.B, schema *model.Schema, data string) transform.Step {
	s, err := transform.StepFromJSON(schema, []byte(data))
	if err != nil {
		b.Fatalf("%s: %v", data, err)
	}
	return s
}
