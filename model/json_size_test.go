package model

import (
	"strings"
	"testing"
)

// TestJSONSize checks that JSONSize is the length of AppendJSON for every
// node of the JSON cases (which the JS libraries wrote), for text that
// needs escapes, and for nodes made by replace from cached parts.
func TestJSONSize(t *testing.T) {
	schemas := map[string]*Schema{"basic": testBasicSchema(t), "odd": testOddSchema(t)}
	checked := 0
	for _, c := range readJSONCases(t) {
		s := schemas[c.Schema]
		if c.Kind != "node" || c.Err != "" || s == nil {
			continue
		}
		n, err := s.NodeFromJSON([]byte(c.In))
		if err != nil {
			t.Fatalf("%s: %v", c.In, err)
		}
		checkJSONSize(t, n)
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d cases checked", checked)
	}
	basic := schemas["basic"]
	for _, text := range []string{
		`plain`, `quote \" backslash \\ slash /`, `\n\r\t\b\f`, `\u0001\u001f\u007f`,
		`\ud83d\ude00 emoji`, `lone \ud83d high`, `lone \ude00 low`, `\u00e9\u20ac \u2028 <&>`,
	} {
		doc := `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","marks":[` +
			`{"type":"link","attrs":{"href":"` + text + `","title":null}},{"type":"em"}],"text":"` + text + `"}]},` +
			`{"type":"heading","attrs":{"level":2.5}},{"type":"image","attrs":{"src":"` + text + `","alt":"` + text + `","title":null}}]}`
		n, err := basic.NodeFromJSON([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		checkJSONSize(t, n)
	}
	for _, v := range []string{`[1,-0.5,1e21,"\u0000",{"k":[true,false,null],"":{}}]`, `[]`, `{}`, `123456789012`} {
		val, err := ParseJSONValue([]byte(v))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := jsonValueLen(val), len(appendJSONValue(nil, val)); got != want {
			t.Errorf("jsonValueLen(%s) = %d, want %d", v, got, want)
		}
	}
	// A wide fragment (chunked) and the result of replacing in it, whose
	// unchanged children keep their cached sizes.
	var b strings.Builder
	b.WriteString(`{"type":"doc","content":[`)
	for i := range 300 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"paragraph","content":[{"type":"text","text":"p` + strings.Repeat("x", i%7) + `"}]}`)
	}
	b.WriteString(`]}`)
	wide, err := basic.NodeFromJSON([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	checkJSONSize(t, wide)
	slice, err := wide.Slice(5, 40, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range [][2]int{{3, 3}, {100, 90}, {1, wide.Content.Size() - 1}} {
		next, err := wide.Replace(at[0], at[1], slice)
		if err != nil {
			continue
		}
		checkJSONSize(t, next)
	}
	// A plain node of the text type has no "text" key.
	em, err := basic.Mark("em", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkJSONSize(t, newNode(basic.textNodeType(), nil, Fragment{}, []*Mark{em}))
}

// checkJSONSize checks n.JSONSize and that of every descendant, twice
// (computed, then cached).
func checkJSONSize(t *testing.T, n *Node) {
	t.Helper()
	for range 2 {
		if want := len(n.AppendJSON(nil)); n.JSONSize() != want {
			t.Fatalf("JSONSize of %s = %d, want %d", n.AppendJSON(nil), n.JSONSize(), want)
		}
		n.Descendants(func(c *Node, _ int, _ *Node, _ int) bool {
			if want := len(c.AppendJSON(nil)); c.JSONSize() != want {
				t.Fatalf("JSONSize of %s = %d, want %d", c.AppendJSON(nil), c.JSONSize(), want)
			}
			return true
		})
	}
}

// BenchmarkJSONSizeKeystroke measures JSONSize after typing one character
// into a document of about 1 MiB of JSON: only the changed path is measured.
func BenchmarkJSONSizeKeystroke(b *testing.B) {
	basic := testBasicSchema(b)
	var sb strings.Builder
	sb.WriteString(`{"type":"doc","content":[`)
	for i := range 5000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"type":"paragraph","content":[{"type":"text","text":"` + strings.Repeat("lorem ipsum ", 16) + `"}]}`)
	}
	sb.WriteString(`]}`)
	doc, err := basic.NodeFromJSON([]byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	doc.JSONSize()
	a, err := basic.Text("a", nil)
	if err != nil {
		b.Fatal(err)
	}
	text := Slice{Content: FragmentOf(a)}
	b.ResetTimer()
	for i := range b.N {
		next, err := doc.Replace(2+i%100, 2+i%100, text)
		if err != nil {
			b.Fatal(err)
		}
		next.JSONSize()
	}
}

// TestMemSize: the memory estimate of a document is at least what its
// nodes and text take, grows with repeated content, and is cached.
func TestMemSize(t *testing.T) {
	basic := testBasicSchema(t)
	doc, err := basic.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"` + strings.Repeat("x", 1000) + `"}]},{"type":"paragraph"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	// doc, two paragraphs, one text node; 1,000 bytes of text.
	if m := doc.MemSize(); m < 4*nodeMem+1000 || m > 4*nodeMem+1000+200 {
		t.Fatalf("MemSize = %d", m)
	}
	slice, err := doc.Slice(0, doc.Content.Size(), false)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := doc.Replace(doc.Content.Size(), doc.Content.Size(), slice)
	if err != nil {
		t.Fatal(err)
	}
	if m, one := twice.MemSize(), doc.MemSize(); m < 2*one-nodeMem || m != twice.MemSize() {
		t.Fatalf("MemSize of the document twice = %d, of once %d", m, one)
	}
}
