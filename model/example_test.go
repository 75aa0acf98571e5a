package model_test

import (
	"fmt"

	"github.com/pmauthority/pmauthority/model"
)

func ExampleLoadSchema() {
	schema, err := model.LoadSchema([]byte(`{
		"nodes": {
			"doc": {"content": "block+"},
			"paragraph": {"content": "inline*", "group": "block"},
			"heading": {"content": "inline*", "group": "block", "attrs": {"level": {"default": 1, "validate": "number"}}},
			"text": {"group": "inline"}
		},
		"marks": {"em": {}, "link": {"attrs": {"href": {"validate": "string"}}, "inclusive": false}}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	doc := schema.NodeType("doc")
	fmt.Println(doc.ContentMatch)
	filled, _ := doc.CreateAndFill(nil, model.Fragment{}, nil)
	fmt.Println(filled)
	wrap, _ := doc.ContentMatch.FindWrapping(schema.NodeType("text"))
	fmt.Println(wrap[0].Name)

	_, err = schema.Mark("link", model.Attrs{{Name: "href", Value: 42.0}})
	fmt.Println(err)

	_, err = model.LoadSchema([]byte(`{"nodes": {"doc": {"content": "paragraph+"}, "text": {}}}`))
	fmt.Println(err)
	// Output:
	// 0  paragraph->1, heading->1
	// 1* paragraph->1, heading->1
	// doc(paragraph)
	// paragraph
	// Expected value of type string for attribute href on type link, got number
	// No node type or group 'paragraph' found (in content expression 'paragraph+')
}
