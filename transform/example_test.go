package transform_test

import (
	"encoding/json"
	"fmt"

	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

func ExampleApplySteps() {
	schema, _ := schemas.Get("basic")
	doc, _ := schema.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Hello"}]}]}`))
	var steps []transform.Step
	for _, data := range []string{
		`{"stepType":"replace","from":6,"to":6,"slice":{"content":[{"type":"text","text":" world"}]}}`,
		`{"stepType":"addMark","mark":{"type":"strong"},"from":7,"to":12}`,
	} {
		step, err := transform.StepFromJSON(schema, []byte(data))
		if err != nil {
			fmt.Println(err)
			return
		}
		steps = append(steps, step)
	}
	result, err := transform.ApplySteps(doc, steps)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(result.AppendJSON(nil)))
	// Output:
	// {"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Hello "},{"type":"text","marks":[{"type":"strong"}],"text":"world"}]}]}
}

func ExampleStep_Invert() {
	schema, _ := schemas.Get("basic")
	doc, _ := schema.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"foobar"}]}]}`))
	step := &transform.ReplaceStep{From: 1, To: 4}
	result, _ := step.Apply(doc)
	inverse, _ := step.Invert(doc)
	back, _ := inverse.Apply(result)
	fmt.Println(string(inverse.AppendJSON(nil)))
	fmt.Println(back.Eq(doc))
	// Output:
	// {"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"foo"}]}}
	// true
}

func ExampleStepFromJSON_error() {
	schema, _ := schemas.Get("basic")
	_, err := transform.StepFromJSON(schema, []byte(`{"stepType":"replace","from":"1","to":2}`))
	fmt.Println(err)
	_, err = transform.StepFromJSON(schema, []byte(`{"stepType":"addMark","mark":{"type":"blink"},"from":1,"to":2}`))
	fmt.Println(err)
	// Output:
	// Invalid input for ReplaceStep.fromJSON (at from)
	// There is no mark type blink in this schema (at mark.type)
}

func ExampleTransform() {
	schema, _ := schemas.Get("basic")
	doc, _ := schema.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Hello world"}]}]}`))
	tr := transform.New(doc)
	if err := tr.Split(6, 1, nil); err != nil {
		fmt.Println(err)
		return
	}
	strong, _ := schema.Mark("strong", nil)
	if err := tr.AddMark(9, 14, strong); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(tr.Doc.AppendJSON(nil)))
	for _, s := range tr.Steps {
		fmt.Println(string(s.AppendJSON(nil)))
	}
	// Output:
	// {"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Hello"}]},{"type":"paragraph","content":[{"type":"text","text":" "},{"type":"text","marks":[{"type":"strong"}],"text":"world"}]}]}
	// {"stepType":"replace","from":6,"to":6,"slice":{"content":[{"type":"paragraph"},{"type":"paragraph"}],"openStart":1,"openEnd":1},"structure":true}
	// {"stepType":"addMark","mark":{"type":"strong"},"from":9,"to":14}
}

func ExampleApplyOps() {
	schema, _ := schemas.Get("basic")
	doc, _ := schema.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"one"}]},{"type":"paragraph","content":[{"type":"text","text":"two"}]}]}`))
	var ops []transform.Op
	_ = json.Unmarshal([]byte(`[
		{"op": "wrap", "args": [{"from": 1, "to": 9, "depth": 0}, [{"type": "bullet_list"}, {"type": "list_item"}]]},
		{"op": "setBlockType", "args": [8, 8, "heading", {"level": 2}]},
		{"op": "join", "args": [99]}
	]`), &ops)
	tr, err := transform.ApplyOps(doc, ops)
	fmt.Println(string(tr.Doc.AppendJSON(nil)))
	fmt.Println(err)
	// Output:
	// {"type":"doc","content":[{"type":"bullet_list","content":[{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","text":"one"}]},{"type":"heading","attrs":{"level":2},"content":[{"type":"text","text":"two"}]}]}]}]}
	// op 2 (join): Position 98 out of range
}
