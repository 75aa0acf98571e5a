package model

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
)

// contentTestSchema is the schema of testdata/content_dfa.jsonl with doc's
// content expression replaced by expr.
func contentTestSchema(expr string) (*Schema, error) {
	spec := `{"nodes": {"doc": {"content": ` + string(appendJSONString(nil, expr)) + `},
		"p": {"group": "block", "content": "inline*"},
		"h": {"group": "block", "content": "inline*", "attrs": {"level": {"default": 1}}},
		"quote": {"group": "block", "content": "block+"}, "hr": {"group": "block"},
		"2": {"group": "block", "content": "hr*"}, "req": {"group": "block", "attrs": {"id": {}}},
		"list": {"group": "block", "content": "(p | list)+ hr"}, "text": {"group": "inline"},
		"img": {"inline": true, "group": "inline", "attrs": {"src": {}}}, "br": {"inline": true, "group": "inline"}}}`
	return newSchemaJSON([]byte(spec))
}

// TestContentDFA compares compiled content expressions with what
// prosemirror-model 1.25.13 builds. testdata/content_dfa.jsonl holds, for
// hand-picked and random expressions, the JS ContentMatch.toString() of
// doc's content (or the constructor's error), doc.createAndFill(),
// defaultType, inlineContent and findWrapping for every node type.
func TestContentDFA(t *testing.T) {
	if n := runContentDFACases(t, "testdata/content_dfa.jsonl"); n < 300 {
		t.Errorf("only %d cases", n)
	}
}

func runContentDFACases(t *testing.T, path string) int {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		var c struct {
			Expr   string  `json:"expr"`
			Error  string  `json:"error"`
			Match  string  `json:"match"`
			Fill   *string `json:"fill"`
			Def    *string `json:"def"`
			Inline bool    `json:"inline"`
			Wrap   string  `json:"wrap"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		s, err := contentTestSchema(c.Expr)
		if c.Error != "" {
			switch {
			case err == nil:
				t.Errorf("%q: no error, want %q", c.Expr, c.Error)
			case !strings.HasPrefix(err.Error(), c.Error) && !strings.Contains(c.Error, "\ufffd"):
				t.Errorf("%q: error %q, want %q", c.Expr, err, c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.Expr, err)
			continue
		}
		m := s.NodeType("doc").ContentMatch
		if got := m.String(); got != c.Match {
			t.Errorf("%q: automaton\n%s\nwant\n%s", c.Expr, got, c.Match)
		}
		fill := "null"
		if n, err := s.NodeType("doc").CreateAndFill(nil, Fragment{}, nil); err != nil {
			fill = "ERR " + err.Error()
		} else if n != nil {
			fill = n.String()
		}
		if want := deref(c.Fill); fill != want {
			t.Errorf("%q: createAndFill %s, want %s", c.Expr, fill, want)
		}
		def := "null"
		if d := m.DefaultType(); d != nil {
			def = d.Name
		}
		if want := deref(c.Def); def != want {
			t.Errorf("%q: defaultType %s, want %s", c.Expr, def, want)
		}
		if m.InlineContent() != c.Inline {
			t.Errorf("%q: inlineContent %v", c.Expr, m.InlineContent())
		}
		// The JS lists wrappings in its property order (array indices first).
		var wraps []string
		for _, nt := range jsPropertyOrder(s.Nodes, func(t *NodeType) string { return t.Name }) {
			if w, ok := m.FindWrapping(nt); ok {
				wraps = append(wraps, nt.Name+":"+typeNames(w, ","))
			}
		}
		if got := strings.Join(wraps, " "); got != c.Wrap {
			t.Errorf("%q: wrappings %s, want %s", c.Expr, got, c.Wrap)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

func typeNames(types []*NodeType, sep string) string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Name
	}
	return strings.Join(names, sep)
}

// basicNodes builds a fragment of basic-schema nodes: "text" is "x",
// "emtext" is "y" with em, "image" has src "i", other names are filled.
func basicNodes(t *testing.T, s *Schema, names []string) Fragment {
	t.Helper()
	var nodes []*Node
	for _, name := range names {
		var n *Node
		var err error
		switch name {
		case "text":
			n, err = s.Text("x", nil)
		case "emtext":
			var em *Mark
			if em, err = s.Mark("em", nil); err == nil {
				n, err = s.Text("y", []*Mark{em})
			}
		case "image":
			n, err = s.NodeType("image").Create(Attrs{{"src", "i"}}, Fragment{}, nil)
		default:
			n, err = s.NodeType(name).CreateAndFill(nil, Fragment{}, nil)
		}
		if err != nil || n == nil {
			t.Fatalf("building %s: %v", name, err)
		}
		nodes = append(nodes, n)
	}
	return NewFragment(nodes)
}

// Expected values below come from running prosemirror-model 1.25.13 on
// schemas/basic.json.

func TestFillBefore(t *testing.T) {
	s := testBasicSchema(t)
	cases := []struct {
		typ     string
		matched []string // node types matched before filling
		after   []string
		toEnd   bool
		start   int
		want    string // Fragment.toString, or "null"
	}{
		{"doc", nil, []string{"list_item"}, false, 0, "null"},
		{"doc", nil, nil, true, 0, "<paragraph>"},
		{"doc", nil, nil, false, 0, "<>"},
		{"list_item", nil, []string{"blockquote"}, false, 0, "<paragraph>"},
		{"list_item", nil, []string{"blockquote"}, true, 0, "<paragraph>"},
		{"list_item", nil, nil, true, 0, "<paragraph>"},
		{"ordered_list", nil, []string{"paragraph"}, false, 0, "null"},
		{"paragraph", nil, []string{"text"}, false, 0, "<>"},
		{"blockquote", nil, []string{"heading", "paragraph"}, true, 0, "<>"},
		{"doc", nil, []string{"text"}, false, 0, "null"},
		{"doc", nil, []string{"text", "paragraph"}, false, 1, "<>"},
		{"list_item", []string{"paragraph"}, nil, true, 0, "<>"},
		{"ordered_list", nil, nil, true, 0, "<list_item(paragraph)>"},
		{"ordered_list", []string{"list_item"}, []string{"list_item"}, true, 0, "<>"},
		{"list_item", nil, []string{"list_item"}, false, 0, "null"},
		{"paragraph", nil, []string{"text", "image", "paragraph"}, false, 0, "null"},
	}
	for _, c := range cases {
		m := s.NodeType(c.typ).ContentMatch
		for _, name := range c.matched {
			m = m.MatchType(s.NodeType(name))
		}
		f, ok, err := m.FillBefore(basicNodes(t, s, c.after), c.toEnd, c.start)
		if err != nil {
			t.Fatal(err)
		}
		got := "null"
		if ok {
			got = f.String()
		}
		if got != c.want {
			t.Errorf("%s after %v: fillBefore(%v, %v, %d) = %s, want %s", c.typ, c.matched, c.after, c.toEnd, c.start, got, c.want)
		}
	}
}

func TestFindWrapping(t *testing.T) {
	s := testBasicSchema(t)
	cases := []struct{ typ, target, want string }{
		{"doc", "text", "paragraph"},
		{"doc", "list_item", "ordered_list"},
		{"doc", "image", "paragraph"},
		{"list_item", "list_item", "null"},
		{"paragraph", "paragraph", "null"},
		{"blockquote", "text", "paragraph"},
		{"doc", "doc", "null"},
		{"ordered_list", "paragraph", "list_item"},
		{"ordered_list", "text", "list_item paragraph"},
		{"doc", "paragraph", ""},
		{"code_block", "image", "null"},
		{"list_item", "text", "paragraph"},
	}
	for range 2 { // the second round reads the cache
		for _, c := range cases {
			w, ok := s.NodeType(c.typ).ContentMatch.FindWrapping(s.NodeType(c.target))
			got := "null"
			if ok {
				got = typeNames(w, " ")
			}
			if got != c.want {
				t.Errorf("%s: findWrapping(%s) = %q, want %q", c.typ, c.target, got, c.want)
			}
		}
	}
}

// TestFindWrappingConcurrent runs FindWrapping on a shared schema from many
// goroutines (meaningful with -race).
func TestFindWrappingConcurrent(t *testing.T) {
	s, err := LoadSchema(mustRead(t, "../schemas/basic.json"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				from := s.Nodes[(g+i)%len(s.Nodes)]
				to := s.Nodes[(g*7+i)%len(s.Nodes)]
				w1, ok1 := from.ContentMatch.FindWrapping(to)
				w2, ok2 := from.ContentMatch.FindWrapping(to)
				if ok1 != ok2 || typeNames(w1, " ") != typeNames(w2, " ") {
					t.Errorf("inconsistent wrapping %s -> %s", from.Name, to.Name)
				}
			}
		}()
	}
	wg.Wait()
	// The shared empty match must not collect entries.
	if p := EmptyContentMatch.wrapCache.Load(); p != nil {
		t.Errorf("EmptyContentMatch cached %d wrappings", len(*p))
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestContentMatchEdges(t *testing.T) {
	s := testBasicSchema(t)
	m := s.NodeType("list_item").ContentMatch
	if m.EdgeCount() != 1 || m.Edge(0).Type.Name != "paragraph" || m.ValidEnd {
		t.Fatalf("list_item start: %s", m)
	}
	next := m.Edge(0).Next
	if next.EdgeCount() != 7 || !next.ValidEnd || next.Edge(6).Type.Name != "bullet_list" || next.Edge(6).Next != next {
		t.Errorf("list_item after paragraph: %s", next)
	}
	if m.MatchType(s.NodeType("heading")) != nil || m.MatchType(s.NodeType("paragraph")) != next {
		t.Error("MatchType")
	}
	defer func() {
		if r := recover(); r != "There's no 1th edge in this content match" {
			t.Errorf("Edge(1) panicked with %v", r)
		}
	}()
	m.Edge(1)
}

func TestContentMatchShared(t *testing.T) {
	s := testBasicSchema(t)
	// Identical expressions share their automaton, as in JS.
	if s.NodeType("doc").ContentMatch != s.NodeType("blockquote").ContentMatch {
		t.Error("doc and blockquote (both block+) should share a ContentMatch")
	}
	if s.NodeType("paragraph").ContentMatch != s.NodeType("heading").ContentMatch {
		t.Error("paragraph and heading (both inline*) should share a ContentMatch")
	}
	if s.NodeType("text").ContentMatch != EmptyContentMatch || s.NodeType("image").ContentMatch != EmptyContentMatch {
		t.Error("leaf types should use EmptyContentMatch")
	}
	if !s.NodeType("paragraph").ContentMatch.Compatible(s.NodeType("code_block").ContentMatch) ||
		s.NodeType("paragraph").ContentMatch.Compatible(s.NodeType("doc").ContentMatch) {
		t.Error("Compatible")
	}
}

// TestTokenizeContent checks the tokenizer against JavaScript's
// expr.split(/\s*(?=\b|\W|$)/) (with the empty first and last tokens
// dropped).
func TestTokenizeContent(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"paragraph+", []string{"paragraph", "+"}},
		{" block+  paragraph ", []string{"block", "+", "paragraph"}},
		{"(a|b){1,2}", []string{"(", "a", "|", "b", ")", "{", "1", ",", "2", "}"}},
		{"a\u00a0b\ufeffc\u2028d", []string{"a", "b", "c", "d"}},
		{"a\u0085b", []string{"a", "\u0085", "b"}}, // NEL is not \s in JS
		{"a_1 é", []string{"a_1", "é"}},
		{"x😀", []string{"x", "\xed\xa0\xbd", "\xed\xb8\x80"}}, // split into lone surrogates
		{"((", []string{"(", "("}},
		{"a  |b", []string{"a", "|", "b"}},
	}
	for _, c := range cases {
		got := tokenizeContent(c.in)
		if strings.Join(got, "\x00") != strings.Join(c.want, "\x00") || len(got) != len(c.want) {
			t.Errorf("tokenize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// The lone surrogate is reported as JSON.stringify writes it.
	_, err := contentTestSchema("p😀")
	if err == nil {
		t.Fatal("no error")
	}
	if got := string(appendJSONString(nil, err.Error())); got != `"Unexpected token '\ud83d' (in content expression 'p😀')"` {
		t.Errorf("error %s", got)
	}
}

// TestContentLimits checks that hostile expressions fail quickly instead of
// exhausting memory or the stack, where JavaScript runs out of memory or
// overflows its stack.
func TestContentLimits(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"p{99999999999999}", "Content expression too complex (in content expression 'p{99999999999999}')"},
		{"(p{100}){100}", "Content expression too complex"},
		{"(p?){1}*", "Maximum call stack size exceeded"},
		{strings.Repeat("(", 300) + "p" + strings.Repeat(")", 300), "Content expression nested too deeply"},
		{"(p|hr)* p (p|hr){14}", "Content expression too complex"},
	}
	for _, c := range cases {
		_, err := contentTestSchema(c.expr)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%.40q: error %v, want %q", c.expr, err, c.want)
		}
	}
	// Within the limits, ranges work.
	if _, err := contentTestSchema("p{1,100} (hr | quote){0,50}"); err != nil {
		t.Error(err)
	}
}

// FuzzContentExpr feeds arbitrary content expressions to the compiler: it
// must not panic or hang, and a compiled automaton must be usable.
func FuzzContentExpr(f *testing.F) {
	for _, e := range []string{"block+", "(p | h){2,} hr? list*", "(p?){1}*", "inline*", "p{1,3} (quote | 2)+", "((p hr?)* h){0,4}", "x y"} {
		f.Add(e)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := contentTestSchema(expr)
		if err != nil {
			return
		}
		doc := s.NodeType("doc")
		doc.CreateAndFill(nil, Fragment{}, nil)
		for _, target := range s.Nodes {
			doc.ContentMatch.FindWrapping(target)
		}
		_ = doc.ContentMatch.String()
	})
}
