// Package reqtest builds apply requests for tests and benchmarks: a basic
// document of about a given size with a mix of steps that all apply.
package reqtest

import (
	"bytes"
	"fmt"

	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

// Seed is prosemirror-v8-perf's request (text schema), byte for byte.
const Seed = `{"steps":[{"stepType":"replace","from":0,"to":0,"slice":{"content":[{"type":"text","text":"Hello"}]}}],"doc": {"type":"doc"}}`

// SeedAnswer is what prosemirror-v8-perf's node server answers to Seed.
const SeedAnswer = `{"doc":{"type":"doc","content":[{"type":"text","text":"Hello"}]}}`

var words = []string{"Lorem", "ipsum", "dolor", "sit", "amet,", "consectetur", "adipiscing", "elit,",
	"sed", "do", "eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua."}

// Large returns the request {"schema":"basic","doc":…,"steps":[…]} with a
// document whose JSON is about docBytes long (paragraphs and headings,
// some text in marks) and nSteps steps (typing, deleting, marking,
// unmarking, splitting paragraphs) that apply in order. It is
// deterministic.
func Large(docBytes, nSteps int) []byte {
	schema, err := schemas.Get("basic")
	if err != nil {
		panic(err)
	}
	var doc bytes.Buffer
	doc.WriteString(`{"type":"doc","content":[`)
	for i := 0; doc.Len() < docBytes; i++ {
		if i > 0 {
			doc.WriteByte(',')
		}
		text := func(n int) string {
			var b bytes.Buffer
			for j := range n {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[(i*7+j*3)%len(words)])
			}
			return b.String()
		}
		if i%10 == 0 {
			fmt.Fprintf(&doc, `{"type":"heading","attrs":{"level":%d},"content":[{"type":"text","text":%q}]}`, 1+i%3, text(4))
			continue
		}
		fmt.Fprintf(&doc, `{"type":"paragraph","content":[{"type":"text","text":%q},{"type":"text","marks":[{"type":"em"}],"text":%q},{"type":"text","text":%q}]}`,
			text(12), text(3), text(10))
	}
	doc.WriteString(`]}`)
	cur, err := schema.NodeFromJSON(doc.Bytes())
	if err != nil {
		panic(err)
	}
	var out bytes.Buffer
	out.WriteString(`{"schema":"basic","doc":`)
	out.Write(doc.Bytes())
	out.WriteString(`,"steps":[`)
	for i := range nSteps {
		// A paragraph, spread over the document, and its start.
		k := (i*7919 + 3) % cur.ChildCount()
		start := 0
		for j := range k {
			start += cur.Child(j).NodeSize()
		}
		para := cur.Child(k)
		mid := start + 1 + para.Content.Size()/2
		var step string
		switch i % 5 {
		case 0:
			step = fmt.Sprintf(`{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"text","text":"typing "}]}}`, mid, mid)
		case 1:
			step = fmt.Sprintf(`{"stepType":"replace","from":%d,"to":%d}`, mid, mid+3)
		case 2:
			step = fmt.Sprintf(`{"stepType":"addMark","mark":{"type":"strong"},"from":%d,"to":%d}`, mid-4, mid+4)
		case 3:
			step = fmt.Sprintf(`{"stepType":"removeMark","mark":{"type":"em"},"from":%d,"to":%d}`, start+1, start+1+para.Content.Size())
		default:
			step = fmt.Sprintf(`{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"paragraph"},{"type":"paragraph"}],"openStart":1,"openEnd":1}}`, mid, mid)
		}
		st, err := transform.StepFromJSON(schema, []byte(step))
		if err != nil {
			panic(err)
		}
		if cur, err = st.Apply(cur); err != nil {
			panic(fmt.Sprintf("step %d %s: %v", i, step, err))
		}
		if i > 0 {
			out.WriteByte(',')
		}
		out.WriteString(step)
	}
	out.WriteString(`]}`)
	return out.Bytes()
}

// Result returns the answer to a request built by Large: {"doc": …}.
func Result(req []byte) []byte {
	schema, _ := schemas.Get("basic")
	start := bytes.Index(req, []byte(`"doc":`)) + len(`"doc":`)
	end := bytes.Index(req, []byte(`,"steps":[`))
	doc, err := schema.NodeFromJSON(req[start:end])
	if err != nil {
		panic(err)
	}
	for _, raw := range splitSteps(req[end+len(`,"steps":[`) : len(req)-2]) {
		st, err := transform.StepFromJSON(schema, raw)
		if err != nil {
			panic(err)
		}
		if doc, err = st.Apply(doc); err != nil {
			panic(err)
		}
	}
	return append(doc.AppendJSON([]byte(`{"doc":`)), '}')
}

// splitSteps splits the steps written by Large (objects that are not
// nested in strings with braces).
func splitSteps(data []byte) [][]byte {
	var steps [][]byte
	depth, start := 0, 0
	for i, c := range data {
		switch c {
		case '{':
			if depth == 0 {
				start = i
			}
			depth++
		case '}':
			depth--
			if depth == 0 {
				steps = append(steps, data[start:i+1])
			}
		}
	}
	return steps
}

// DoublingDoc is the basic document that DoublingSteps apply to: one
// paragraph holding "x".
const DoublingDoc = `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"x"}]}]}`

// DoublingSteps returns the JSON of n replace steps with from > to, which
// prosemirror-transform accepts and which duplicate the content between
// to and from: applied to DoublingDoc, each doubles the paragraph's text
// (step i replaces from 2^i+1 to 1, leaving 2^(i+1) characters), so that
// 24 of them, about 1 KB, make a text of 16 M characters.
func DoublingSteps(n int) [][]byte {
	steps := make([][]byte, n)
	for i := range steps {
		steps[i] = fmt.Appendf(nil, `{"stepType":"replace","from":%d,"to":1}`, 1<<i+1)
	}
	return steps
}

// DoublingRequest returns the apply request of n DoublingSteps on
// DoublingDoc (basic schema).
func DoublingRequest(n int) []byte {
	return fmt.Appendf(nil, `{"schema":"basic","doc":%s,"steps":[%s]}`, DoublingDoc, bytes.Join(DoublingSteps(n), []byte(",")))
}
