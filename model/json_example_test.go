package model_test

import (
	"fmt"

	"github.com/pmauthority/pmauthority/schemas"
)

func ExampleSchema_NodeFromJSON() {
	schema, err := schemas.Get("basic")
	if err != nil {
		panic(err)
	}
	doc, err := schema.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[
		{"type":"text","text":"Hello "},
		{"type":"text","marks":[{"type":"strong"},{"type":"em"}],"text":"world"}]}]}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(doc.Content.Size())
	// Marks come out sorted by rank, and no whitespace.
	fmt.Println(string(doc.AppendJSON(nil)))

	_, err = schema.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":""}]}]}`))
	fmt.Println(err)
	// Output:
	// 13
	// {"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Hello "},{"type":"text","marks":[{"type":"em"},{"type":"strong"}],"text":"world"}]}]}
	// Empty text nodes are not allowed (at content[0].content[0].text)
}
