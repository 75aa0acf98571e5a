package export

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
)

func basic(t testing.TB) *model.Schema {
	t.Helper()
	s, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func doc(t testing.TB, s *model.Schema, json string) *model.Node {
	t.Helper()
	n, err := s.NodeFromJSON([]byte(json))
	if err != nil {
		t.Fatalf("%s: %v", json, err)
	}
	return n
}

func mustSchema(t testing.TB, spec string) *model.Schema {
	t.Helper()
	s, err := model.LoadSchema([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The expected values below are what the JavaScript libraries answer
// (checked with node; the corpus in conformance/ covers the rest).
func TestExportBasic(t *testing.T) {
	s := basic(t)
	for _, tc := range []struct {
		name, doc, text, markdown, html string
	}{{
		name:     "paragraphs and a hard break",
		doc:      `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"a"},{"type":"hard_break"},{"type":"text","text":"b"}]},{"type":"paragraph","content":[{"type":"text","text":"c"}]}]}`,
		text:     "a\nb\n\nc",
		markdown: "a\\\nb\n\nc",
		html:     "<p>a<br>b</p><p>c</p>",
	}, {
		name:     "escaping at the start of a line",
		doc:      `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"# 1. *x* a_b _c <&>"}]}]}`,
		text:     "# 1. *x* a_b _c <&>",
		markdown: "\\# 1. \\*x\\* a_b \\_c <&>",
		html:     "<p># 1. *x* a_b _c &lt;&amp;&gt;</p>",
	}, {
		name:     "whitespace expelled from marks",
		doc:      `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"a"},{"type":"text","marks":[{"type":"em"}],"text":" b "},{"type":"text","text":"c"}]}]}`,
		text:     "a b c",
		markdown: "a *b* c",
		html:     "<p>a<em> b </em>c</p>",
	}, {
		name:     "heading, list, code block, rule",
		doc:      `{"type":"doc","content":[{"type":"heading","attrs":{"level":2},"content":[{"type":"text","text":"T"}]},{"type":"ordered_list","attrs":{"order":9},"content":[{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","text":"x"}]}]},{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","text":"y"}]}]}]},{"type":"code_block","content":[{"type":"text","text":"a ` + "```" + ` b"}]},{"type":"horizontal_rule"}]}`,
		text:     "T\n\nx\n\ny\n\na ``` b",
		markdown: "## T\n\n 9. x\n\n10. y\n\n````\na ``` b\n````\n\n---",
		html:     `<h2>T</h2><ol start="9"><li><p>x</p></li><li><p>y</p></li></ol><pre><code>a ` + "```" + ` b</code></pre><hr>`,
	}, {
		name:     "link, autolink, image, code",
		doc:      `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"link","attrs":{"href":"http://x.y","title":null}}],"text":"http://x.y"},{"type":"text","text":" "},{"type":"text","marks":[{"type":"link","attrs":{"href":"a(b)","title":"say \"hi\""}}],"text":"l"},{"type":"image","attrs":{"src":"i (1).png","alt":"A*","title":null}},{"type":"text","marks":[{"type":"code"}],"text":"a` + "`" + `b"}]}]}`,
		text:     "http://x.y la`b",
		markdown: "<http://x.y> [l](a\\(b\\) \"say \\\"hi\\\"\")![A\\*](i \\(1\\).png)`` a`b ``",
		html:     `<p><a href="http://x.y">http://x.y</a> <a href="a(b)" title="say &quot;hi&quot;">l</a><img src="i (1).png" alt="A*"><code>a` + "`" + `b</code></p>`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d := doc(t, s, tc.doc)
			if got := Text(d); got != tc.text {
				t.Errorf("Text = %q, want %q", got, tc.text)
			}
			if got, err := Markdown(d); err != nil || got != tc.markdown {
				t.Errorf("Markdown = %q, %v; want %q", got, err, tc.markdown)
			}
			if got, err := HTML(d); err != nil || got != tc.html {
				t.Errorf("HTML = %q, %v; want %q", got, err, tc.html)
			}
		})
	}
}

func TestHTMLHostileContent(t *testing.T) {
	s := basic(t)
	link := func(href, title string) string {
		return `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"link","attrs":{"href":` + href + `,"title":` + title + `}}],"text":"x"}]}]}`
	}
	img := func(src string) string {
		return `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"image","attrs":{"src":` + src + `,"alt":"\" onerror=\"alert(1)"}}]}]}`
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"javascript href", link(`"javascript:alert(1)"`, "null"), `<p><a>x</a></p>`},
		{"mixed case and spaces", link(`" JaVa\tScRiPt:alert(1)"`, "null"), `<p><a>x</a></p>`},
		{"control characters", link(`"\u0001java\nscript:x"`, "null"), `<p><a>x</a></p>`},
		{"vbscript", link(`"vbscript:msgbox"`, "null"), `<p><a>x</a></p>`},
		{"data href", link(`"data:text/html,<script>alert(1)</script>"`, "null"), `<p><a>x</a></p>`},
		{"quotes in attributes", link(`"\"><script>alert(1)</script>"`, `"' onmouseover='x'"`),
			`<p><a href="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" title="' onmouseover='x'">x</a></p>`},
		{"relative URL with a colon later", link(`"/a:b"`, "null"), `<p><a href="/a:b">x</a></p>`},
		{"ordinary scheme", link(`"https://x.y/javascript:"`, "null"), `<p><a href="https://x.y/javascript:">x</a></p>`},
		{"image with hostile alt", img(`"i.png"`), `<p><img src="i.png" alt="&quot; onerror=&quot;alert(1)"></p>`},
		{"data image src", img(`"data:image/png;base64,AAAA"`), `<p><img src="data:image/png;base64,AAAA" alt="&quot; onerror=&quot;alert(1)"></p>`},
		{"svg data src", img(`"data:image/svg+xml,<svg onload=alert(1)>"`), `<p><img alt="&quot; onerror=&quot;alert(1)"></p>`},
		{"script in text", `{"type":"doc","content":[{"type":"code_block","content":[{"type":"text","text":"</code></pre><script>alert(1)</script>"}]}]}`,
			`<pre><code>&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;</code></pre>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := HTML(doc(t, s, tc.doc))
			if err != nil || got != tc.want {
				t.Errorf("HTML = %q, %v\nwant      %q", got, err, tc.want)
			}
		})
	}
}

func TestTemplates(t *testing.T) {
	spec := func(para, mark string) string {
		return `{"nodes":{"doc":{"content":"block+"},"paragraph":{"content":"inline*","group":"block","attrs":{"k":{"default":"v"}},"toDOM":` + para + `},"text":{"group":"inline"}},"marks":{"m":{"attrs":{"u":{"default":"x"}},"toDOM":` + mark + `}}}`
	}
	const d = `{"type":"doc","content":[{"type":"paragraph","attrs":{"k":"v\"&"},"content":[{"type":"text","marks":[{"type":"m","attrs":{"u":"1"}}],"text":"t"}]}]}`
	for _, tc := range []struct{ name, para, mark, want, err string }{
		{"attributes and nesting", `["DIV", {"class": "c", "data-k": {"attr": "k", "prefix": "<", "suffix": ">"}}, ["span", 0]]`, `["b", {"data-u": {"attr": "u"}}, 0]`,
			`<div class="c" data-k="&lt;v&quot;&amp;&gt;"><span><b data-u="1">t</b></span></div>`, ""},
		{"mark without hole", `["p", 0]`, `["i", "pre-"]`, `<p><i>pre-t</i></p>`, ""},
		{"mark in a void element", `["p", 0]`, `["br"]`, `<p><br></p>`, ""},
		{"node without hole", `["hr"]`, `["i", 0]`, `<hr>`, ""},
		{"unless", `["p", {"k": {"attr": "k", "unless": "v\"&"}}, 0]`, `["i", 0]`, `<p><i>t</i></p>`, ""},
		{"null literal attribute", `["p", {"a": null, "b": 2}, 0]`, `["i", 0]`, `<p b="2"><i>t</i></p>`, ""},
		{"event handler", `["p", {"onclick": {"attr": "k"}}, 0]`, `["i", 0]`, "", `attribute "onclick" is not allowed`},
		{"style", `["p", {"style": "x"}, 0]`, `["i", 0]`, "", `attribute "style" is not allowed`},
		{"script element", `["script", 0]`, `["i", 0]`, "", `element "script" is not allowed`},
		{"bad element name", `["p x", 0]`, `["i", 0]`, "", `invalid element name`},
		{"two holes", `["p", ["a", 0], ["b", 0]]`, `["i", 0]`, "", "Multiple content holes"},
		{"hole not alone", `["p", "x", 0]`, `["i", 0]`, "", "Content hole must be the only child"},
		{"not an array", `"p"`, `["i", 0]`, "", "a template must be an array"},
		{"unknown key", `[{"attr": "k", "pre": "h"}, 0]`, `["i", 0]`, "", `unknown key "pre"`},
		{"tag from attribute", `[{"attr": "k"}, 0]`, `["i", 0]`, "", `invalid element name "v\"&"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := HTML(doc(t, mustSchema(t, spec(tc.para, tc.mark)), d))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrTemplate) {
					t.Fatalf("HTML = %q, %v; want an ErrTemplate error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("HTML = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestHTMLLeafWithHole(t *testing.T) {
	s := mustSchema(t, `{"nodes":{"doc":{"content":"inline*"},"text":{"group":"inline"},"img":{"inline":true,"group":"inline","toDOM":["img",0]}}}`)
	_, err := HTML(doc(t, s, `{"type":"doc","content":[{"type":"img"}]}`))
	if err == nil || !strings.Contains(err.Error(), "Content hole not allowed in a leaf node spec") {
		t.Fatalf("err = %v", err)
	}
}

func TestHTMLNodeWithoutTemplate(t *testing.T) {
	s := mustSchema(t, `{"nodes":{"doc":{"content":"block+"},"para":{"content":"text*","group":"block"},"text":{}}}`)
	_, err := HTML(doc(t, s, `{"type":"doc","content":[{"type":"para"}]}`))
	if err == nil || !strings.Contains(err.Error(), "node type para has no toDOM template") {
		t.Fatalf("err = %v", err)
	}
}

func TestMarkdownErrors(t *testing.T) {
	s := basic(t)
	_, err := Markdown(doc(t, s, `{"type":"doc","content":[{"type":"heading","attrs":{"level":1e9}}]}`))
	if err == nil || !errors.Is(err, ErrMarkdown) || !strings.Contains(err.Error(), "heading level 1000000000 out of range") {
		t.Errorf("huge heading level: %v", err)
	}
	other := mustSchema(t, `{"nodes":{"doc":{"content":"block+"},"note":{"content":"text*","group":"block"},"text":{}},"marks":{"u":{}}}`)
	_, err = Markdown(doc(t, other, `{"type":"doc","content":[{"type":"note"}]}`))
	if err == nil || err.Error() != "markdown export: Token type `note` not supported by Markdown renderer" {
		t.Errorf("unknown node: %v", err)
	}
	para := mustSchema(t, `{"nodes":{"doc":{"content":"paragraph+"},"paragraph":{"content":"text*"},"text":{}},"marks":{"u":{}}}`)
	_, err = Markdown(doc(t, para, `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"x","marks":[{"type":"u"}]}]}]}`))
	if err == nil || err.Error() != "markdown export: Mark type `u` not supported by Markdown renderer" {
		t.Errorf("unknown mark: %v", err)
	}
}

// A schema with prosemirror-markdown's tight attribute renders tight lists.
func TestMarkdownTightList(t *testing.T) {
	s := mustSchema(t, `{"nodes":{"doc":{"content":"block+"},"paragraph":{"content":"text*","group":"block"},"bullet_list":{"content":"list_item+","group":"block","attrs":{"tight":{"default":false},"bullet":{"default":"*"}}},"list_item":{"content":"paragraph block*"},"text":{}}}`)
	const item = `{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","text":"x"}]}]}`
	d := doc(t, s, `{"type":"doc","content":[{"type":"bullet_list","attrs":{"tight":true,"bullet":"-"},"content":[`+item+`,`+item+`]},{"type":"paragraph","content":[{"type":"text","text":"p"}]}]}`)
	got, err := Markdown(d)
	if want := "- x\n- x\n\np"; err != nil || got != want {
		t.Errorf("Markdown = %q, %v; want %q", got, err, want)
	}
}

func TestLeafTextFromSpec(t *testing.T) {
	s := mustSchema(t, `{"nodes":{"doc":{"content":"inline*"},"text":{"group":"inline"},"emoji":{"inline":true,"group":"inline","leafText":":)"},"hard_break":{"inline":true,"group":"inline"}}}`)
	d := doc(t, s, `{"type":"doc","content":[{"type":"text","text":"a"},{"type":"emoji"},{"type":"hard_break"},{"type":"text","text":"b"}]}`)
	if got := Text(d); got != "a:)\nb" {
		t.Errorf("Text = %q", got)
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats {
		got, err := ParseFormat(string(f))
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	if _, err := ParseFormat("pdf"); err == nil || !strings.Contains(err.Error(), `"pdf"`) {
		t.Errorf("ParseFormat(pdf) = %v", err)
	}
	if got := FormatHTML.ContentType(); got != "text/html; charset=utf-8" {
		t.Errorf("ContentType = %q", got)
	}
	if got := FormatMarkdown.ContentType(); got != "text/markdown; charset=utf-8" {
		t.Errorf("ContentType = %q", got)
	}
}

// A heading without a level attribute gets no "#", as repeat("#",
// undefined) gives none in the JavaScript.
func TestMarkdownHeadingWithoutLevel(t *testing.T) {
	s := mustSchema(t, `{"nodes":{"doc":{"content":"block+"},"heading":{"content":"text*","group":"block"},"text":{}}}`)
	got, err := Markdown(doc(t, s, `{"type":"doc","content":[{"type":"heading","content":[{"type":"text","text":"h"}]}]}`))
	if err != nil || got != " h" {
		t.Errorf("Markdown = %q, %v", got, err)
	}
}

// The templates of a schema are built once and shared: exports of many
// goroutines at once give the same HTML (go test -race checks the sharing).
func TestHTMLConcurrent(t *testing.T) {
	s := mustSchema(t, `{"nodes":{"doc":{"content":"block+"},"paragraph":{"content":"text*","group":"block","toDOM":["div",{"class":"p"},0]},"text":{}}}`)
	d := doc(t, s, `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"a&b"}]}]}`)
	const want = `<div class="p">a&amp;b</div>`
	errs := make(chan string, 8)
	for range 8 {
		go func() {
			got, err := HTML(d)
			if err != nil || got != want {
				errs <- fmt.Sprintf("HTML = %q, %v", got, err)
				return
			}
			errs <- ""
		}()
	}
	for range 8 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

// TestAttrTags: a tag taken from an attribute names only text and
// structure elements; a document cannot pick an element that loads,
// runs or submits anything (before, "form", "base", "meta", "object" …
// were written), and a template whose prefix and suffix allow none is
// refused when its schema is checked.
func TestAttrTags(t *testing.T) {
	s := mustSchema(t, `{"nodes":{"doc":{"content":"block+"},
		"box":{"content":"inline*","group":"block","attrs":{"tag":{"default":"div"}},"toDOM":[{"attr":"tag"},{"class":"x"},0]},
		"heading":{"content":"inline*","group":"block","attrs":{"level":{"default":1}}},
		"text":{"group":"inline"}},
		"marks":{"m":{"attrs":{"tag":{"default":"em"}},"toDOM":[{"attr":"tag"},0]}}}`)
	if err := Check(s); err != nil {
		t.Fatalf("Check: %v", err)
	}
	box := func(tag string) string {
		return `{"type":"doc","content":[{"type":"box","attrs":{"tag":` + strconv.Quote(tag) + `},"content":[{"type":"text","text":"t"}]}]}`
	}
	mark := func(tag string) string {
		return `{"type":"doc","content":[{"type":"box","content":[{"type":"text","marks":[{"type":"m","attrs":{"tag":` + strconv.Quote(tag) + `}}],"text":"t"}]}]}`
	}
	for _, tc := range []struct{ doc, want string }{
		{box("section"), `<section class="x">t</section>`},
		{box("TD"), `<td class="x">t</td>`},
		{box("h3"), `<h3 class="x">t</h3>`},
		{mark("strong"), `<div class="x"><strong>t</strong></div>`},
		{`{"type":"doc","content":[{"type":"heading","attrs":{"level":7},"content":[{"type":"text","text":"t"}]}]}`, `<h7>t</h7>`},
	} {
		if got, err := HTML(doc(t, s, tc.doc)); err != nil || got != tc.want {
			t.Errorf("%s: HTML = %q, %v; want %q", tc.doc, got, err, tc.want)
		}
	}
	for _, tag := range []string{"form", "base", "meta", "script", "iframe", "style", "link", "object", "embed",
		"a", "img", "input", "button", "textarea", "select", "svg", "math", "frameset", "frame", "applet",
		"title", "html", "body", "head", "video", "audio", "source", "dialog", "template", "noscript",
		"Form", "h", "hx", "my-widget"} {
		for _, d := range []string{box(tag), mark(tag)} {
			got, err := HTML(doc(t, s, d))
			if err == nil || !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), "is not allowed") {
				t.Errorf("%s: HTML = %q, %v; want an ErrTemplate error", d, got, err)
			}
		}
	}
	for _, tc := range []struct{ tag, err string }{
		{`{"attr":"tag","prefix":"h"}`, ""},
		{`{"attr":"tag","prefix":"H2"}`, ""},
		{`{"attr":"tag","suffix":"1"}`, ""},
		{`{"attr":"tag","suffix":"h1"}`, ""},
		{`{"attr":"tag","prefix":"t"}`, ""},
		{`{"attr":"tag","prefix":"fr"}`, `between "fr" and ""`},
		{`{"attr":"tag","prefix":"h","suffix":"x"}`, `between "h" and "x"`},
		{`{"attr":"tag","suffix":"orm"}`, `between "" and "orm"`},
		{`{"attr":"tag","prefix":"ifr","suffix":"ame"}`, `between "ifr" and "ame"`},
	} {
		s := mustSchema(t, `{"nodes":{"doc":{"content":"box+"},"box":{"content":"text*","attrs":{"tag":{"default":"1"}},"toDOM":[`+tc.tag+`,0]},"text":{}}}`)
		err := Check(s)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: Check = %v, want %q", tc.tag, err, tc.err)
		}
	}
}
