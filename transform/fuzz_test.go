package transform

import (
	"encoding/json"
	"testing"

	"github.com/pmauthority/pmauthority/model"
)

// fuzzDocs are the documents FuzzApplyStep applies steps to.
var fuzzDocs = []string{
	`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"foobar"}]}]}`,
	`{"type":"doc","content":[{"type":"blockquote","content":[{"type":"paragraph","content":[{"type":"text","text":"abc"}]},{"type":"paragraph","content":[{"type":"text","text":"def"}]}]},{"type":"paragraph","content":[{"type":"text","text":"ghi"}]}]}`,
	`{"type":"doc","content":[{"type":"bullet_list","content":[{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","text":"a"}]}]},{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","text":"b"}]}]}]},{"type":"heading","attrs":{"level":2},"content":[{"type":"text","text":"c"}]}]}`,
	`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"a"},{"type":"image","attrs":{"src":"i.png","alt":null,"title":null}},{"type":"hard_break"},{"type":"text","marks":[{"type":"em"},{"type":"link","attrs":{"href":"x","title":null}}],"text":"b😀c"}]},{"type":"horizontal_rule"},{"type":"code_block","content":[{"type":"text","text":"x = 1"}]}]}`,
	`{"type":"doc","content":[{"type":"paragraph"}]}`,
}

func addStepSeeds(f *testing.F) {
	for _, c := range stepCases {
		f.Add([]byte(c.step))
		if c.inverted != "" {
			f.Add([]byte(c.inverted))
		}
	}
	for _, c := range mergeCases {
		f.Add([]byte(c.step1))
	}
}

// FuzzStepFromJSON decodes arbitrary bytes as a step. It must never panic,
// a decoded step's JSON must decode again, and the JSON must be stable
// from then on. (Not at once: as in JavaScript, a slice of negative size
// such as {"openEnd":1} is written as "slice":null, which decodes to the
// empty slice, written as nothing.)
func FuzzStepFromJSON(f *testing.F) {
	addStepSeeds(f)
	schema := testSchema(f, "basic")
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := StepFromJSON(schema, data)
		if err != nil {
			return
		}
		out := st.AppendJSON(nil)
		for range 2 {
			again, err := StepFromJSON(schema, out)
			if err != nil {
				t.Fatalf("%s decodes to %s, which does not decode: %v", data, out, err)
			}
			out2 := again.AppendJSON(nil)
			if string(out2) == string(out) {
				return
			}
			out = out2
		}
		t.Fatalf("the JSON of %s does not settle: %s", data, out)
	})
}

// FuzzApplyStep applies arbitrary step JSON to a few fixed documents and
// runs everything else a step offers on the results. Nothing may panic.
func FuzzApplyStep(f *testing.F) {
	addStepSeeds(f)
	schema := testSchema(f, "basic")
	docs := make([]*model.Node, len(fuzzDocs))
	for i, d := range fuzzDocs {
		docs[i] = mustDoc(f, schema, d)
	}
	maps := []*StepMap{
		NewStepMap([]int{2, 0, 3}, false), NewStepMap([]int{1, 3, 0}, false),
		NewStepMap([]int{0, 0, 2, 4, 2, 0}, true), StepMapOffset(-1),
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := StepFromJSON(schema, data)
		if err != nil {
			return
		}
		_ = st.GetMap().String()
		for _, m := range maps {
			if mapped := st.Map(m); mapped != nil {
				mapped.AppendJSON(nil)
			}
		}
		st.Merge(st)
		for _, doc := range docs {
			result, err := ApplySteps(doc, []Step{st})
			if err != nil {
				continue
			}
			if out := result.AppendJSON(nil); result.JSONSize() != len(out) {
				t.Fatalf("JSONSize of %s = %d, want %d", out, result.JSONSize(), len(out))
			}
			if mapped := st.Map(st.GetMap()); mapped != nil {
				_, _ = mapped.Apply(result)
			}
			inv, err := st.Invert(doc)
			if err != nil {
				continue
			}
			inv.AppendJSON(nil)
			if back, err := inv.Apply(result); err == nil {
				back.AppendJSON(nil)
			}
			if merged, ok := st.Merge(inv); ok {
				_, _ = merged.Apply(doc)
			}
		}
	})
}

// FuzzTransformOps runs arbitrary JSON as a list of ops on one of the
// fuzz documents. It must never panic, and the steps the ops made must
// replay to the document the transform ended with.
func FuzzTransformOps(f *testing.F) {
	for _, c := range transformCases {
		for i := range fuzzDocs {
			f.Add(uint8(i), []byte(c.ops))
		}
	}
	f.Add(uint8(1), []byte(`[{"op":"lift","args":[{"from":3,"to":12,"depth":1},0]},{"op":"split","args":[4,3,[null,{"type":"heading"}]]}]`))
	f.Add(uint8(2), []byte(`[{"op":"replaceRange","args":[2,9,{"content":[{"type":"list_item","content":[{"type":"paragraph"}]}],"openStart":3,"openEnd":1}]}]`))
	schema := testSchema(f, "basic")
	docs := make([]*model.Node, len(fuzzDocs))
	for i, d := range fuzzDocs {
		docs[i] = mustDoc(f, schema, d)
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		var ops []Op
		if json.Unmarshal(data, &ops) != nil || len(ops) > 20 {
			return
		}
		doc := docs[int(which)%len(docs)]
		tr, _ := ApplyOps(doc, ops)
		again, err := ApplySteps(doc, tr.Steps)
		if err != nil || !again.Eq(tr.Doc) {
			t.Fatalf("steps %s do not replay: %v", stepsJSON(tr.Steps), err)
		}
	})
}

func stepsJSON(steps []Step) string {
	var b []byte
	for _, s := range steps {
		b = append(s.AppendJSON(b), ' ')
	}
	return string(b)
}
