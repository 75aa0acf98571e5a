package conformance

// The import corpus (gen-import.mjs): Markdown, serialized from random
// documents or put together from every CommonMark construct, with the
// document prosemirror-markdown's MarkdownParser (markdown-it's commonmark
// preset, html off, defaultMarkdownParser's tokens) makes of it with a
// conformance schema, or the message it throws; export.ParseMarkdown must
// give the same document JSON byte for byte, or fail with that message.

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pmauthority/pmauthority/export"
	"github.com/pmauthority/pmauthority/model"
)

// importCase is one line of an import corpus.
type importCase struct {
	ID       int             `json:"id"`
	Schema   string          `json:"schema"`
	Kind     string          `json:"kind"`
	Markdown string          `json:"markdown"`
	Doc      json.RawMessage `json:"doc"`
	Error    json.RawMessage `json:"error"`
}

var importVersions = map[string]string{
	"prosemirror-model":    "1.25.13",
	"prosemirror-markdown": "1.13.9",
	"markdown-it":          "14.3.3",
}

// freshImportGap is how many of every 1,000 cases of a fresh import
// corpus may differ from the JS (the known gap is about 2).
const freshImportGap = 5

func TestImportCorpus(t *testing.T) {
	schemas := loadSchemas(t)
	for i, file := range corpusFiles("testdata/import/corpus.jsonl", "PMA_IMPORT_CORPUS") {
		h, lines := readCorpus(t, file, "pmauthority-import-conformance", 1)
		for pkg, want := range importVersions {
			if v := h.Versions[pkg]; v != want {
				t.Errorf("%s: recorded with %s %q, the import ports %s", file, pkg, v, want)
			}
		}
		var known atomic.Int64
		r := checkCases(lines, func(line []byte) *caseCheck {
			c := checkImportCase(schemas, line)
			if c.known {
				known.Add(1)
			}
			return c
		})
		// The committed corpus must agree everywhere. A fresh one still
		// differs in about 0.2 % of its cases, in the constructs that
		// docs/export.md lists ("Markdown in", known differences): up to
		// freshImportGap of them are logged, more fail the test.
		if i > 0 && r.failed > 0 && r.failed*1000 <= r.cases*freshImportGap {
			t.Logf("%s: %d cases checked, %d fields compared, %d mismatches: %.2f %% of the cases, within the known gap of %.1f %% (docs/export.md); the first:\n%s",
				file, r.cases, r.fields, r.failed, 100*float64(r.failed)/float64(r.cases), float64(freshImportGap)/10, strings.Join(r.first[:min(3, len(r.first))], "\n"))
		} else {
			r.report(t, file)
		}
		t.Logf("%s: %d cases differ only where a tab is next to a container marker (known difference)", file, known.Load())
	}
}

// checkImportCase replays one case line.
func checkImportCase(schemas map[string]*model.Schema, line []byte) *caseCheck {
	var ic importCase
	if err := strictUnmarshal(line, &ic); err != nil {
		c := &caseCheck{id: -1}
		c.fail("line", "", "a case", err.Error())
		return c
	}
	c := &caseCheck{id: ic.ID, schema: ic.Schema, kind: ic.Kind}
	schema := schemas[ic.Schema]
	if schema == nil {
		c.fail("schema", "", "a conformance schema", ic.Schema)
		return c
	}
	doc, err := export.ParseMarkdown(schema, []byte(ic.Markdown))
	switch {
	case err != nil && ic.Error != nil:
		c.eq("error", "", ic.Error, jsonString(err.Error()))
	case err != nil:
		c.fail("doc", "", string(ic.Doc), "error: "+err.Error())
		c.diffs[len(c.diffs)-1].detail = "markdown: " + string(jsonString(ic.Markdown))
	case ic.Error != nil:
		c.fail("error", "", string(ic.Error), "(none) "+string(doc.AppendJSON(nil)))
	default:
		if !c.eq("doc", "", ic.Doc, doc.AppendJSON(nil)) {
			c.diffs[len(c.diffs)-1].detail = "markdown: " + string(jsonString(ic.Markdown))
		}
	}
	if len(c.diffs) > 0 && tabAfterMarker(ic.Markdown) {
		// The one known difference (docs/export.md): counted, not failed.
		c.diffs = nil
		c.known = true
	}
	return c
}

// tabAfterMarker reports whether a line of md has a tab in its
// indentation next to a blockquote's ">" or a list item's marker (after
// one, or before one): goldmark counts the columns of such a tab
// otherwise than markdown-it and so builds other blocks (docs/export.md,
// "Known differences").
func tabAfterMarker(md string) bool {
	for _, line := range strings.FieldsFunc(md, func(r rune) bool { return r == '\n' || r == '\r' }) {
		marker, tab := false, false
	scan:
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case c == '\t':
				tab = true
			case c == ' ':
			case c == '>' || c == '-' || c == '+' || c == '*':
				marker = true
			case c >= '0' && c <= '9':
				j := i
				for j < len(line) && line[j] >= '0' && line[j] <= '9' {
					j++
				}
				if j < len(line) && (line[j] == '.' || line[j] == ')') {
					marker = true
					i = j
					continue
				}
				break scan
			default:
				break scan
			}
		}
		if marker && tab {
			return true
		}
	}
	return false
}
