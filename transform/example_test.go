package transform_test

import (
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
