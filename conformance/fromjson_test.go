package conformance

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// fromJSONCases are documents for TestFromJSONLive: cases that the
// generated corpora reach only on a rare seed, each checked against the
// real prosemirror-model at every run.
var fromJSONCases = []struct{ name, schema, doc string }{
	// Fragment.fromArray joins adjacent text nodes with equal marks and
	// keeps the later node's markup: equal marks may write their
	// attributes' keys in another order (found by seed 2301686150).
	{"join keeps the later markup", "stress",
		`{"type":"root","content":[{"type":"paragraph","content":[` +
			`{"type":"text","marks":[{"type":"sup","attrs":{"2":{"a":1,"b":2}}}],"text":"ab"},` +
			`{"type":"text","marks":[{"type":"sup","attrs":{"2":{"b":2,"a":1}}}],"text":"cd"}]}]}`},
	{"three joined, the middle one different", "stress",
		`{"type":"root","content":[{"type":"paragraph","content":[` +
			`{"type":"text","marks":[{"type":"sup","attrs":{"1":{"x":1,"y":2},"z":{"p":[1],"q":null}}}],"text":"a"},` +
			`{"type":"text","marks":[{"type":"sup","attrs":{"1":{"y":2,"x":1},"z":{"p":[1],"q":null}}}],"text":"b"},` +
			`{"type":"text","marks":[{"type":"sup","attrs":{"1":{"x":1,"y":2},"z":{"q":null,"p":[1]}}}],"text":"c"}]}]}`},
	{"joined across a run, then a different mark", "stress",
		`{"type":"root","content":[{"type":"paragraph","content":[` +
			`{"type":"text","marks":[{"type":"sup","attrs":{"2":{"b":1,"a":2}}}],"text":"a"},` +
			`{"type":"text","marks":[{"type":"sup","attrs":{"2":{"a":2,"b":1}}}],"text":"b"},` +
			`{"type":"text","marks":[{"type":"sup","attrs":{"2":{"a":3,"b":1}}}],"text":"c"},` +
			`{"type":"text","marks":[{"type":"sup","attrs":{"2":{"b":1,"a":3}}}],"text":"d"}]}]}`},
	// JS joins text as UTF-16: a surrogate pair split between two text
	// nodes (or a text and a separator) is one character in textContent
	// and textBetween (found by seed 2913429116).
	{"surrogate pair split between text nodes", "basic",
		`{"type":"doc","content":[{"type":"paragraph","content":[` +
			`{"type":"text","marks":[{"type":"em"}],"text":"a\ud83d"},{"type":"text","text":"\ude00b\udfff"},` +
			`{"type":"image","attrs":{"src":"x"}},{"type":"text","text":"\ud800c"}]},` +
			`{"type":"paragraph","content":[{"type":"text","text":"\udc00d\ud800"}]},` +
			`{"type":"paragraph","content":[{"type":"text","text":"\udfffe"}]}]}`},
	{"plain join", "basic",
		`{"type":"doc","content":[{"type":"paragraph","content":[` +
			`{"type":"text","marks":[{"type":"em"}],"text":"a"},{"type":"text","marks":[{"type":"em"}],"text":"b"},` +
			`{"type":"text","text":"c"},{"type":"text","text":"d"}]}]}`},
}

// TestFromJSONLive decodes fromJSONCases in Go and with the real
// prosemirror-model (js/from-json.mjs) and compares the documents' JSON,
// textContent and textBetween byte for byte.
func TestFromJSONLive(t *testing.T) {
	node := editorsNode(t, "js/node_modules/prosemirror-model")
	schemas := loadSchemas(t)
	var in bytes.Buffer
	for _, c := range fromJSONCases {
		in.WriteString(`{"schema":"` + c.schema + `","doc":` + c.doc + "}\n")
	}
	cmd := exec.Command(node, "js/from-json.mjs")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("js/from-json.mjs: %v\n%s", err, stderrOf(err))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(fromJSONCases) {
		t.Fatalf("js/from-json.mjs answered %d lines for %d cases:\n%s", len(lines), len(fromJSONCases), out)
	}
	for i, c := range fromJSONCases {
		var js struct {
			Output, Error            string
			TextContent, TextBetween json.RawMessage // as JSON.stringify wrote them
		}
		if err := json.Unmarshal([]byte(lines[i]), &js); err != nil {
			t.Fatalf("%s: JS answer %q: %v", c.name, lines[i], err)
		}
		if js.Error != "" {
			t.Errorf("%s: JS threw %q; the case should decode", c.name, js.Error)
			continue
		}
		doc, err := schemas[c.schema].NodeFromJSON([]byte(c.doc))
		if err != nil {
			t.Errorf("%s: Go: %v; JS: %s", c.name, err, js.Output)
			continue
		}
		if got := string(doc.AppendJSON(nil)); got != js.Output {
			t.Errorf("%s:\n Go %s\n JS %s", c.name, got, js.Output)
		}
		if got := jsonString(doc.TextContent()); !bytes.Equal(got, js.TextContent) {
			t.Errorf("%s: textContent: Go %s, JS %s", c.name, got, js.TextContent)
		}
		if got := jsonString(doc.TextBetween(0, doc.Content.Size(), "\n", "*")); !bytes.Equal(got, js.TextBetween) {
			t.Errorf("%s: textBetween: Go %s, JS %s", c.name, got, js.TextBetween)
		}
	}
}

// stderrOf returns what a failed command wrote on stderr.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
