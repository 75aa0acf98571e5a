package export_test

import (
	"fmt"

	"github.com/pmauthority/pmauthority/export"
	"github.com/pmauthority/pmauthority/schemas"
)

func Example() {
	schema, _ := schemas.Get("basic")
	doc, err := schema.NodeFromJSON([]byte(`{"type":"doc","content":[
		{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Notes"}]},
		{"type":"paragraph","content":[{"type":"text","text":"Say "},{"type":"text","marks":[{"type":"strong"}],"text":"<hi>"}]}]}`))
	if err != nil {
		panic(err)
	}
	for _, f := range export.Formats {
		out, err := export.Export(doc, f)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %q\n", f, out)
	}
	// Output:
	// text: "Notes\n\nSay <hi>"
	// markdown: "# Notes\n\nSay **<hi>**"
	// html: "<h1>Notes</h1><p>Say <strong>&lt;hi&gt;</strong></p>"
}
