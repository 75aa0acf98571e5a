package transform

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
)

// stepCase is one step applied to one document, with what the JavaScript
// libraries answer (see step_cases_test.go).
type stepCase struct {
	name, schema, doc, step string
	fromJSONErr             string    // Step.fromJSON throws this
	json                    string    // JSON.stringify(step.toJSON())
	map_                    string    // String(step.getMap())
	mapped                  [3]string // step.map(testMaps[i]), "null" when deleted
	applyErr                string    // apply fails or throws with this
	result                  string    // the document after apply
	invertErr               string
	inverted                string // step.invert(doc)
	undo                    string // inverted applied to result ("error: …" when it fails)
}

type mergeCase struct{ name, step1, step2, merged, result string }

type mapBiasCase struct {
	bias   int
	step   string
	ranges []int
	mapped string
}

// testMaps are the step maps the cases map their steps through.
var testMaps = [3][]int{{2, 0, 3}, {1, 3, 0}, {0, 0, 2, 4, 2, 0}}

var testSchemas = sync.OnceValues(func() (map[string]*model.Schema, error) {
	basic, err := schemas.Get("basic")
	if err != nil {
		return nil, err
	}
	spec, err := os.ReadFile("testdata/custom.json")
	if err != nil {
		return nil, err
	}
	custom, err := model.LoadSchema(spec)
	if err != nil {
		return nil, err
	}
	return map[string]*model.Schema{"basic": basic, "custom": custom}, nil
})

func testSchema(t testing.TB, name string) *model.Schema {
	t.Helper()
	all, err := testSchemas()
	if err != nil {
		t.Fatal(err)
	}
	s := all[name]
	if s == nil {
		t.Fatalf("no test schema %q", name)
	}
	return s
}

func mustDoc(t testing.TB, schema *model.Schema, data string) *model.Node {
	t.Helper()
	doc, err := schema.NodeFromJSON([]byte(data))
	if err != nil {
		t.Fatalf("doc %s: %v", data, err)
	}
	return doc
}

func mustStep(t testing.TB, schema *model.Schema, data string) Step {
	t.Helper()
	st, err := StepFromJSON(schema, []byte(data))
	if err != nil {
		t.Fatalf("step %s: %v", data, err)
	}
	return st
}

func stepJSON(s Step) string {
	if s == nil {
		return "null"
	}
	return string(s.AppendJSON(nil))
}

// hasJSMessage reports whether got is the JavaScript message want, maybe
// followed by the detail this port adds (": …" or " (…)").
func hasJSMessage(got, want string) bool {
	if !strings.HasPrefix(got, want) {
		return false
	}
	rest := got[len(want):]
	return rest == "" || strings.HasPrefix(rest, ": ") || strings.HasPrefix(rest, " (")
}

func TestStepsAgainstJS(t *testing.T) {
	for _, c := range stepCases {
		t.Run(c.name, func(t *testing.T) {
			schema := testSchema(t, c.schema)
			doc := mustDoc(t, schema, c.doc)
			st, err := StepFromJSON(schema, []byte(c.step))
			if c.fromJSONErr != "" {
				if err == nil {
					t.Fatalf("StepFromJSON succeeded (%s), want error %q", stepJSON(st), c.fromJSONErr)
				}
				if !hasJSMessage(err.Error(), c.fromJSONErr) {
					t.Fatalf("StepFromJSON error %q, want %q", err, c.fromJSONErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("StepFromJSON: %v", err)
			}
			if got := stepJSON(st); got != c.json {
				t.Errorf("JSON\n got %s\nwant %s", got, c.json)
			}
			// The JSON decodes to a step with the same JSON.
			if again, err := StepFromJSON(schema, []byte(c.json)); err != nil {
				t.Errorf("decoding own JSON: %v", err)
			} else if got := stepJSON(again); got != c.json {
				t.Errorf("JSON round trip\n got %s\nwant %s", got, c.json)
			}
			if got := st.GetMap().String(); got != c.map_ {
				t.Errorf("GetMap = %s, want %s", got, c.map_)
			}
			for i, ranges := range testMaps {
				if got := stepJSON(st.Map(NewStepMap(ranges, false))); got != c.mapped[i] {
					t.Errorf("Map(%v)\n got %s\nwant %s", ranges, got, c.mapped[i])
				}
			}
			result, err := st.Apply(doc)
			if c.applyErr != "" {
				if err == nil {
					t.Fatalf("Apply succeeded (%s), want error %q", result.AppendJSON(nil), c.applyErr)
				}
				if err.Error() != c.applyErr {
					t.Fatalf("Apply error %q, want %q", err, c.applyErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got := string(result.AppendJSON(nil)); got != c.result {
				t.Errorf("result\n got %s\nwant %s", got, c.result)
			}
			inv, err := st.Invert(doc)
			if c.invertErr != "" {
				if err == nil || !hasJSMessage(err.Error(), c.invertErr) {
					t.Fatalf("Invert error %v, want %q", err, c.invertErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Invert: %v", err)
			}
			if got := stepJSON(inv); got != c.inverted {
				t.Errorf("inverted\n got %s\nwant %s", got, c.inverted)
			}
			var undo string
			if back, err := inv.Apply(result); err != nil {
				undo = "error: " + err.Error()
			} else {
				undo = string(back.AppendJSON(nil))
			}
			if undo != c.undo {
				t.Errorf("undo\n got %s\nwant %s", undo, c.undo)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	schema := testSchema(t, "basic")
	doc := mustDoc(t, schema, `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"foobar"}]}]}`)
	for _, c := range mergeCases {
		t.Run(c.name, func(t *testing.T) {
			s1, s2 := mustStep(t, schema, c.step1), mustStep(t, schema, c.step2)
			merged, ok := s1.Merge(s2)
			if !ok {
				if c.merged != "null" {
					t.Fatalf("no merge, want %s", c.merged)
				}
				if merged != nil {
					t.Errorf("Merge returned %s with false", stepJSON(merged))
				}
				return
			}
			if got := stepJSON(merged); got != c.merged {
				t.Fatalf("merged\n got %s\nwant %s", got, c.merged)
			}
			result, err := merged.Apply(doc)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(result.AppendJSON(nil)); got != c.result {
				t.Errorf("result\n got %s\nwant %s", got, c.result)
			}
			// Applying the merged step equals applying both.
			d1, err := s1.Apply(doc)
			if err != nil {
				t.Fatal(err)
			}
			d2, err := s2.Apply(d1)
			if err != nil {
				t.Fatal(err)
			}
			if !d2.Eq(result) {
				t.Errorf("merged step gives %s, the two steps %s", result.AppendJSON(nil), d2.AppendJSON(nil))
			}
		})
	}
}

func TestMapBias(t *testing.T) {
	schema := testSchema(t, "basic")
	defer func() { MapBias = 1 }()
	for _, c := range mapBiasCases {
		MapBias = c.bias
		st := mustStep(t, schema, c.step)
		if got := stepJSON(st.Map(NewStepMap(c.ranges, false))); got != c.mapped {
			t.Errorf("bias %d: %s mapped through %v\n got %s\nwant %s", c.bias, c.step, c.ranges, got, c.mapped)
		}
	}
}

// From prosemirror-transform's test/test-replace_step.ts.
func TestReplaceAroundStepMapOffset(t *testing.T) {
	schema := testSchema(t, "basic")
	bq := schema.NodeType("blockquote")
	quote, err := bq.Create(nil, model.Fragment{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	slice := model.NewSlice(model.FragmentOf(quote), 0, 0)
	for _, from := range []int{10, 0} {
		st := &ReplaceAroundStep{From: from, To: 20, GapFrom: from, GapTo: 20, Slice: slice, Insert: 1, Structure: true}
		mapped, ok := st.Map(StepMapOffset(100)).(*ReplaceAroundStep)
		if !ok {
			t.Fatalf("from %d: mapped to %v", from, mapped)
		}
		if mapped.From != from+100 || mapped.To != 120 || mapped.GapFrom != from+100 || mapped.GapTo != 120 {
			t.Errorf("from %d: mapped to %s", from, stepJSON(mapped))
		}
	}
}

// TestRejectedPositions covers what JavaScript's fromJSON accepts but this
// port refuses: positions that are not non-negative safe integers.
func TestRejectedPositions(t *testing.T) {
	schema := testSchema(t, "basic")
	cases := []struct{ step, want string }{
		{`{"stepType":"replace","from":-1,"to":2}`, "Invalid input for ReplaceStep.fromJSON: from must be a non-negative integer, not -1 (at from)"},
		{`{"stepType":"replace","from":1.5,"to":2}`, "Invalid input for ReplaceStep.fromJSON: from must be a non-negative integer, not 1.5 (at from)"},
		{`{"stepType":"replace","from":1,"to":1e400}`, "Invalid input for ReplaceStep.fromJSON: to must be a non-negative integer, not 1e400 (at to)"},
		{`{"stepType":"replace","from":1,"to":9007199254740992}`, "Invalid input for ReplaceStep.fromJSON: to must be a non-negative integer, not 9007199254740992 (at to)"},
		{`{"stepType":"replaceAround","from":0,"to":8,"gapFrom":0,"gapTo":8,"insert":-1}`, "Invalid input for ReplaceAroundStep.fromJSON: insert must be a non-negative integer, not -1 (at insert)"},
		{`{"stepType":"replaceAround","from":0,"to":8,"gapFrom":0.5,"gapTo":8,"insert":1}`, "Invalid input for ReplaceAroundStep.fromJSON: gapFrom must be a non-negative integer, not 0.5 (at gapFrom)"},
		{`{"stepType":"addMark","mark":{"type":"em"},"from":1,"to":-3}`, "Invalid input for AddMarkStep.fromJSON: to must be a non-negative integer, not -3 (at to)"},
		{`{"stepType":"removeMark","mark":{"type":"em"},"from":0.1,"to":3}`, "Invalid input for RemoveMarkStep.fromJSON: from must be a non-negative integer, not 0.1 (at from)"},
		{`{"stepType":"addNodeMark","mark":{"type":"em"},"pos":-1}`, "Invalid input for AddNodeMarkStep.fromJSON: pos must be a non-negative integer, not -1 (at pos)"},
		{`{"stepType":"removeNodeMark","mark":{"type":"em"},"pos":2.25}`, "Invalid input for RemoveNodeMarkStep.fromJSON: pos must be a non-negative integer, not 2.25 (at pos)"},
		{`{"stepType":"attr","pos":-2,"attr":"level","value":1}`, "Invalid input for AttrStep.fromJSON: pos must be a non-negative integer, not -2 (at pos)"},
		{`{"stepType":"markSet","steps":[{"stepType":"addMark","mark":{"type":"em"},"from":1,"to":2.5}]}`, "Invalid input for AddMarkStep.fromJSON: to must be a non-negative integer, not 2.5 (at steps[0].to)"},
		// The JavaScript checks come first: a mistyped field wins over a bad position.
		{`{"stepType":"replace","from":-1,"to":"2"}`, "Invalid input for ReplaceStep.fromJSON (at to)"},
		{`{"stepType":"addMark","from":-1,"to":2}`, "Invalid input for Mark.fromJSON (at mark)"},
		// Fields are named.
		{`{"stepType":"replace","to":2}`, "Invalid input for ReplaceStep.fromJSON (at from)"},
		{`{"stepType":"attr","pos":0,"attr":null}`, "Invalid input for AttrStep.fromJSON (at attr)"},
		{`{"stepType":"markSet","steps":[{"stepType":"addMark"},null]}`, "Cannot read properties of null (reading 'stepType') (at steps[1])"},
		{`{"stepType":"markSet","steps":[{"stepType":"addMark"}]}`, "Invalid input for AddMarkStep.fromJSON (at steps[0].from)"},
		{`{"stepType":"markSet","steps":[{"stepType":"addMark","from":1,"to":2,"mark":{"type":"x"}}]}`, "There is no mark type x in this schema (at steps[0].mark.type)"},
		{`{"stepType":"replace","from":1,"to":2,"slice":{"content":[{"type":"text"}]}}`, "Invalid text node in JSON (at slice.content[0].text)"},
		{`{"stepType":"bogus"}`, "No step type bogus defined (at stepType)"},
		{`{"stepType":""}`, "Invalid input for Step.fromJSON (at stepType)"},
		{`[]`, "Invalid input for Step.fromJSON"},
	}
	for _, c := range cases {
		_, err := StepFromJSON(schema, []byte(c.step))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.step, err, c.want)
		}
	}
	// Edge values that are fine.
	for _, s := range []string{
		`{"stepType":"replace","from":-0,"to":0.0}`,
		`{"stepType":"replace","from":1E0,"to":9007199254740991}`,
	} {
		if _, err := StepFromJSON(schema, []byte(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func TestStepFromJSONSyntax(t *testing.T) {
	schema := testSchema(t, "basic")
	for _, s := range []string{
		``, ` `, `{`, `{"stepType":"replace","from":1,"to":2`, `{"stepType":"replace","from":1,"to":2}}`,
		`{"stepType":"replace","from":1,"to":2} x`, `{"stepType":"replace","from":01,"to":2}`,
		`{"stepType":"replace","from":1,"to":2,"slice":{"content":[}}`, `nul`, `[1,]`,
		`{"stepType":"markSet","steps":[{"stepType":"addMark",}]}`, `{'stepType':1}`,
	} {
		st, err := StepFromJSON(schema, []byte(s))
		if err == nil {
			t.Errorf("%q: decoded %s", s, stepJSON(st))
		}
	}
}

var (
	registerCustom sync.Once
	fromJSONHook   FromJSONFunc
)

type testCustomStep struct {
	ReplaceStep
	tag string
}

func (s *testCustomStep) AppendJSON(buf []byte) []byte {
	return append(buf, `{"stepType":"test.custom","tag":"`+s.tag+`"}`...)
}

func TestRegister(t *testing.T) {
	if err := Register("replace", func(*model.Schema, []byte) (Step, error) { return nil, nil }); err == nil ||
		err.Error() != "Duplicate use of step JSON ID replace" {
		t.Errorf("registering replace again: %v", err)
	}
	var got []byte
	fromJSON := func(schema *model.Schema, raw []byte) (Step, error) {
		got = raw
		return &testCustomStep{tag: "x"}, nil
	}
	registerCustom.Do(func() {
		if err := Register("test.custom", func(schema *model.Schema, raw []byte) (Step, error) { return fromJSONHook(schema, raw) }); err != nil {
			t.Fatal(err)
		}
	})
	fromJSONHook = fromJSON
	if err := Register("test.custom", fromJSON); err == nil {
		t.Error("second registration of test.custom succeeded")
	}
	schema := testSchema(t, "basic")
	raw := `{"tag":"x", "stepType":"test.custom"}`
	st, err := StepFromJSON(schema, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != raw {
		t.Errorf("fromJSON got %s, want the whole object %s", got, raw)
	}
	if _, ok := st.(*testCustomStep); !ok {
		t.Errorf("decoded %T", st)
	}
	if err := Register("test.nil", nil); err == nil {
		t.Error("registering a nil function succeeded")
	}
}

func TestApplySteps(t *testing.T) {
	schema := testSchema(t, "basic")
	doc := mustDoc(t, schema, `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"foobar"}]}]}`)
	good := []Step{
		mustStep(t, schema, `{"stepType":"replace","from":1,"to":4}`),
		mustStep(t, schema, `{"stepType":"addMark","mark":{"type":"em"},"from":1,"to":3}`),
		mustStep(t, schema, `{"stepType":"replace","from":4,"to":4,"slice":{"content":[{"type":"text","text":"!"}]}}`),
	}
	result, err := ApplySteps(doc, good)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"em"}],"text":"ba"},{"type":"text","text":"r!"}]}]}`
	if got := string(result.AppendJSON(nil)); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, err := ApplySteps(doc, nil); err != nil || got != doc {
		t.Errorf("no steps: %v, %v", got, err)
	}
	bad := append(good[:2:2], mustStep(t, schema, `{"stepType":"replace","from":40,"to":40}`), good[2])
	result, err = ApplySteps(doc, bad)
	var se *StepError
	if result != nil || !errors.As(err, &se) || se.Index != 2 || se.Err.Error() != "Position 40 out of range" {
		t.Fatalf("got %v, %v; want StepError at 2", result, err)
	}
	if err.Error() != "step 2: Position 40 out of range" {
		t.Errorf("message %q", err)
	}
	if got := string(doc.AppendJSON(nil)); got != `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"foobar"}]}]}` {
		t.Errorf("input document changed: %s", got)
	}
}

// TestMarkSetNesting checks the JavaScript quirk that inverting a mark set
// can nest mark sets, whose JSON Step.fromJSON then refuses.
func TestMarkSetNesting(t *testing.T) {
	schema := testSchema(t, "basic")
	doc := mustDoc(t, schema, `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"link","attrs":{"href":"x","title":null}}],"text":"ab"},{"type":"text","text":"cd"}]}]}`)
	st := mustStep(t, schema, `{"stepType":"markSet","steps":[{"stepType":"addMark","mark":{"type":"link","attrs":{"href":"z"}},"from":1,"to":5}]}`)
	inv, err := st.Invert(doc)
	if err != nil {
		t.Fatal(err)
	}
	set, ok := inv.(*MarkSetStep)
	if !ok || len(set.Steps) != 1 {
		t.Fatalf("inverse %s", stepJSON(inv))
	}
	if _, ok := set.Steps[0].(*MarkSetStep); !ok {
		t.Fatalf("inverse %s: want a nested mark set", stepJSON(inv))
	}
	if _, err := StepFromJSON(schema, inv.AppendJSON(nil)); err == nil || err.Error() != "Invalid JSON for MarkSetStep (at steps[0])" {
		t.Errorf("decoding nested mark set: %v", err)
	}
	// Mapping drops what the mapping deletes, and the whole set when
	// nothing is left.
	if m := st.Map(NewStepMap([]int{0, 7, 0}, false)); m != nil {
		t.Errorf("mapped over a deletion of everything: %s", stepJSON(m))
	}
	empty := &MarkSetStep{}
	if got := stepJSON(empty); got != `{"stepType":"markSet","steps":[]}` {
		t.Errorf("empty mark set JSON %s", got)
	}
	if res, err := empty.Apply(doc); err != nil || res != doc {
		t.Errorf("empty mark set apply: %v", err)
	}
}

func TestAttrStepConstructed(t *testing.T) {
	schema := testSchema(t, "basic")
	doc := mustDoc(t, schema, `{"type":"doc","content":[{"type":"heading","attrs":{"level":2},"content":[{"type":"text","text":"t"}]}]}`)
	for _, c := range []struct {
		step Step
		json string
		doc  string
	}{
		{&AttrStep{Pos: 0, Attr: "level", Value: 4.0}, `{"stepType":"attr","pos":0,"attr":"level","value":4}`,
			`{"type":"doc","content":[{"type":"heading","attrs":{"level":4},"content":[{"type":"text","text":"t"}]}]}`},
		{&AttrStep{Pos: 0, Attr: "level", NoValue: true}, `{"stepType":"attr","pos":0,"attr":"level"}`,
			`{"type":"doc","content":[{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"t"}]}]}`},
		{&DocAttrStep{Attr: "x", Value: "<&>"}, `{"stepType":"docAttr","attr":"x","value":"<&>"}`,
			`{"type":"doc","content":[{"type":"heading","attrs":{"level":2},"content":[{"type":"text","text":"t"}]}]}`},
	} {
		if got := stepJSON(c.step); got != c.json {
			t.Errorf("JSON %s, want %s", got, c.json)
		}
		res, err := c.step.Apply(doc)
		if err != nil {
			t.Errorf("%s: %v", c.json, err)
			continue
		}
		if got := string(res.AppendJSON(nil)); got != c.doc {
			t.Errorf("%s: got %s, want %s", c.json, got, c.doc)
		}
	}
	// An attribute step keeps its position through maps that do not
	// delete the node; a docAttr step is unaffected by any map.
	st := &AttrStep{Pos: 3, Attr: "level", Value: 1.0}
	if m, ok := st.Map(NewStepMap([]int{0, 0, 2}, false)).(*AttrStep); !ok || m.Pos != 5 {
		t.Errorf("mapped attr step %v", m)
	}
	if m := st.Map(NewStepMap([]int{2, 3, 0}, false)); m != nil {
		t.Errorf("attr step on deleted node mapped to %s", stepJSON(m))
	}
	d := &DocAttrStep{Attr: "a", Value: 1.0}
	if d.Map(NewStepMap([]int{0, 5, 0}, false)) != Step(d) {
		t.Error("docAttr step changed by mapping")
	}
}
