package bench

import (
	"testing"

	"github.com/pmauthority/pmauthority/export"
)

// BenchmarkMarkdownParse parses the Markdown of the 50 KB benchmark
// document (docs.go; export.Markdown's output) with export.ParseMarkdown
// (node: js/export.mjs's "parse", prosemirror-markdown's MarkdownParser
// with markdown-it's commonmark preset and defaultMarkdownParser's
// tokens). It also reports cpu-ns/op.
func BenchmarkMarkdownParse(b *testing.B) {
	b.Run("50KB", func(b *testing.B) {
		schema := basicSchema(b)
		doc := decodeChecked(b, schema, benchDoc(b, DocSizes[0].Bytes))
		md, err := export.Markdown(doc)
		if err != nil {
			b.Fatal(err)
		}
		src := []byte(md)
		if _, err := export.ParseMarkdown(schema, src); err != nil {
			b.Fatal(err)
		}
		cpu := cpuTime(b)
		for b.Loop() {
			if _, err := export.ParseMarkdown(schema, src); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpuTime(b)-cpu, 1)
	})
}
