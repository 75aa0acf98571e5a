package model_test

import (
	"errors"
	"fmt"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
)

func exampleDoc() *model.Node {
	schema, err := schemas.Get("basic")
	if err != nil {
		panic(err)
	}
	doc, err := schema.NodeFromJSON([]byte(`{"type": "doc", "content": [
		{"type": "paragraph", "content": [{"type": "text", "text": "Hello world"}]},
		{"type": "blockquote", "content": [
			{"type": "paragraph", "content": [{"type": "text", "text": "quoted"}]}]}]}`))
	if err != nil {
		panic(err)
	}
	return doc
}

func ExampleNode_Resolve() {
	doc := exampleDoc()
	pos, err := doc.Resolve(17) // inside "quoted"
	if err != nil {
		panic(err)
	}
	fmt.Println(pos.Depth, pos.Parent().Type.Name, pos.ParentOffset, pos.Start(pos.Depth))
	fmt.Println(pos.NodeBefore(), pos.NodeAfter())
	_, err = doc.Resolve(100)
	fmt.Println(err)
	// Output:
	// 2 paragraph 2 15
	// "qu" "oted"
	// Position 100 out of range
}

func ExampleNode_Slice() {
	doc := exampleDoc()
	// From inside the first paragraph to inside the quote.
	slice, err := doc.Slice(7, 19, false)
	if err != nil {
		panic(err)
	}
	fmt.Println(slice)
	// Output: <paragraph("world"), blockquote(paragraph("quot"))>(1,2)
}

func ExampleNode_Replace() {
	doc := exampleDoc()
	// Copy "world" and paste it over "quoted": the open paragraph joins
	// the one it is inserted into.
	slice, _ := doc.Slice(7, 12, false)
	doc2, err := doc.Replace(15, 21, slice)
	if err != nil {
		panic(err)
	}
	fmt.Println(doc2)
	// Deleting from inside the first paragraph to inside the quote leaves
	// the positions at different depths: an empty slice cannot close that.
	_, err = doc.Replace(6, 17, model.EmptySlice)
	fmt.Println(err)
	// A slice that does not fit is a *ReplaceError.
	quote := model.NewSlice(doc.Content.Cut(13, 23), 0, 0)
	_, err = doc.Replace(3, 3, quote)
	var re *model.ReplaceError
	fmt.Println(errors.As(err, &re), err)
	// Output:
	// doc(paragraph("Hello world"), blockquote(paragraph("world")))
	// Inconsistent open depths
	// true Invalid content for node paragraph
}

func ExampleFragment_FindDiffStart() {
	a := exampleDoc()
	b, _ := a.Replace(7, 12, model.EmptySlice)
	pos, ok := a.Content.FindDiffStart(b.Content, 0)
	fmt.Println(pos, ok)
	endA, endB, ok := a.Content.FindDiffEnd(b.Content, a.Content.Size(), b.Content.Size())
	fmt.Println(endA, endB, ok)
	// Output:
	// 7 true
	// 12 7 true
}

func ExampleMark_AddToSet() {
	schema, _ := schemas.Get("basic")
	em, _ := schema.Mark("em", nil)
	strong, _ := schema.Mark("strong", nil)
	link1, _ := schema.Mark("link", model.Attrs{{Name: "href", Value: "https://a.example"}})
	link2, _ := schema.Mark("link", model.Attrs{{Name: "href", Value: "https://b.example"}})
	// Sets stay sorted by the marks' order in the schema; a link replaces
	// another link (marks exclude their own type by default).
	set := strong.AddToSet(nil)
	set = link1.AddToSet(set)
	set = em.AddToSet(set)
	set = link2.AddToSet(set)
	for _, m := range set {
		href, _ := m.Attrs.Get("href")
		fmt.Println(m.Type.Name, href)
	}
	// Output:
	// link https://b.example
	// em <nil>
	// strong <nil>
}
