package transform

import (
	"strings"
	"testing"
)

// benchDoc is a document of 200 paragraphs.
func benchDoc() string {
	var b strings.Builder
	b.WriteString(`{"type":"doc","content":[`)
	for i := range 200 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"paragraph","content":[{"type":"text","text":"The quick brown fox jumps over the lazy dog."},{"type":"text","marks":[{"type":"em"}],"text":" Emphasis."}]}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

var benchSteps = []struct{ name, json string }{
	{"typing", `{"stepType":"replace","from":12,"to":12,"slice":{"content":[{"type":"text","text":"a"}]}}`},
	{"delete", `{"stepType":"replace","from":12,"to":13}`},
	{"split", `{"stepType":"replace","from":20,"to":20,"slice":{"content":[{"type":"paragraph"},{"type":"paragraph"}],"openStart":1,"openEnd":1}}`},
	{"addMark", `{"stepType":"addMark","mark":{"type":"strong"},"from":3,"to":40}`},
	{"wrap", `{"stepType":"replaceAround","from":0,"to":56,"gapFrom":0,"gapTo":56,"insert":1,"slice":{"content":[{"type":"blockquote"}]},"structure":true}`},
}

func BenchmarkStepFromJSON(b *testing.B) {
	schema := testSchema(b, "basic")
	for _, s := range benchSteps {
		b.Run(s.name, func(b *testing.B) {
			data := []byte(s.json)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := StepFromJSON(schema, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkApplyStep(b *testing.B) {
	schema := testSchema(b, "basic")
	doc := mustDoc(b, schema, benchDoc())
	for _, s := range benchSteps {
		b.Run(s.name, func(b *testing.B) {
			st := mustStep(b, schema, s.json)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := st.Apply(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkStepAppendJSON(b *testing.B) {
	schema := testSchema(b, "basic")
	for _, s := range benchSteps {
		b.Run(s.name, func(b *testing.B) {
			st := mustStep(b, schema, s.json)
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				buf = st.AppendJSON(buf[:0])
			}
		})
	}
}
