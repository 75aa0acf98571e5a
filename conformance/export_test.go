package conformance

// The export corpus (gen-export.mjs): random documents of the basic schema
// and of prosemirror-markdown's, with what prosemirror-model (textBetween,
// DOMSerializer in jsdom) and prosemirror-markdown
// (defaultMarkdownSerializer) export for each, and the Go export package's
// answers compared byte for byte. A basic document is checked twice: with
// the basic schema (the export's built-in templates) and with
// schemas/basic-dom.json, the same schema with its toDOM written as
// templates in the spec; a markdown document with schemas/markdown.json
// (prosemirror-markdown's toDOM as templates).

import (
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/pmauthority/pmauthority/export"
	"github.com/pmauthority/pmauthority/model"
)

// exportCase is one line of an export corpus.
type exportCase struct {
	ID            int             `json:"id"`
	Schema        string          `json:"schema"`
	Doc           json.RawMessage `json:"doc"`
	Text          json.RawMessage `json:"text"`
	Markdown      json.RawMessage `json:"markdown"`
	MarkdownError json.RawMessage `json:"markdownError"`
	HTML          json.RawMessage `json:"html"`
}

var (
	basicDOMOnce   sync.Once
	basicDOM       *model.Schema
	basicDOMErr    error
	exportVersions = map[string]string{
		"prosemirror-model":    "1.25.13",
		"prosemirror-markdown": "1.13.9",
		"jsdom":                "29.1.1",
	}
)

// loadBasicDOM returns the basic schema with toDOM templates.
func loadBasicDOM(t testing.TB) *model.Schema {
	t.Helper()
	basicDOMOnce.Do(func() {
		data, err := os.ReadFile("schemas/basic-dom.json")
		if err == nil {
			basicDOM, err = model.LoadSchema(data)
		}
		basicDOMErr = err
	})
	if basicDOMErr != nil {
		t.Fatal(basicDOMErr)
	}
	return basicDOM
}

func TestExportCorpus(t *testing.T) {
	schemas := loadSchemas(t)
	withTemplates := loadBasicDOM(t)
	for _, file := range corpusFiles("testdata/export/corpus.jsonl", "PMA_EXPORT_CORPUS") {
		h, lines := readCorpus(t, file, "pmauthority-export-conformance", 1)
		for pkg, want := range exportVersions {
			if v := h.Versions[pkg]; v != want {
				t.Errorf("%s: recorded with %s %q, the export ports %s", file, pkg, v, want)
			}
		}
		r := checkCases(lines, func(line []byte) *caseCheck { return checkExportCase(schemas, withTemplates, line) })
		r.report(t, file)
	}
}

// checkExportCase replays one case line.
func checkExportCase(schemas map[string]*model.Schema, withTemplates *model.Schema, line []byte) *caseCheck {
	var ec exportCase
	if err := strictUnmarshal(line, &ec); err != nil {
		c := &caseCheck{id: -1}
		c.fail("line", "", "a case", err.Error())
		return c
	}
	c := &caseCheck{id: ec.ID, schema: ec.Schema, kind: "export"}
	type variant struct {
		where  string
		schema *model.Schema
	}
	var variants []variant
	switch ec.Schema {
	case "basic":
		variants = []variant{{"basic", schemas["basic"]}, {"basic-dom.json", withTemplates}}
	case "markdown":
		variants = []variant{{"markdown", schemas["markdown"]}}
	default:
		c.fail("schema", "", "basic or markdown", ec.Schema)
		return c
	}
	for _, variant := range variants {
		doc, err := variant.schema.NodeFromJSON(ec.Doc)
		if err != nil {
			c.fail("doc", variant.where, "a document", err.Error())
			continue
		}
		c.eq("text", variant.where, ec.Text, jsonString(export.Text(doc)))
		md, err := export.Markdown(doc)
		if err != nil {
			c.eq("markdownError", variant.where, ec.MarkdownError, jsonString(err.Error()))
		} else if ec.MarkdownError != nil {
			c.fail("markdownError", variant.where, string(ec.MarkdownError), "(none) "+string(jsonString(md)))
		} else {
			c.eq("markdown", variant.where, ec.Markdown, jsonString(md))
		}
		html, err := export.HTML(doc)
		if err != nil {
			c.fail("html", variant.where, string(ec.HTML), "error: "+err.Error())
		} else {
			c.eq("html", variant.where, ec.HTML, jsonString(html))
		}
	}
	return c
}
