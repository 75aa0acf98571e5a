package bench

import (
	"testing"

	"github.com/pmauthority/pmauthority/export"
)

// BenchmarkExport renders the 50 KB benchmark document (docs.go) with
// package export in each format (node: js/export.mjs, prosemirror-
// markdown's defaultMarkdownSerializer and DOMSerializer in jsdom). It
// also reports cpu-ns/op.
func BenchmarkExport(b *testing.B) {
	for _, f := range export.Formats {
		b.Run(string(f)+"/50KB", func(b *testing.B) {
			data := benchDoc(b, DocSizes[0].Bytes)
			doc := decodeChecked(b, basicSchema(b), data)
			if _, err := export.Export(doc, f); err != nil {
				b.Fatal(err)
			}
			cpu := cpuTime(b)
			for b.Loop() {
				if _, err := export.Export(doc, f); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpuTime(b)-cpu, 1)
		})
	}
}
