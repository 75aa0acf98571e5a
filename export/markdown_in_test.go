package export

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/schemas"
)

func TestParseMarkdown(t *testing.T) {
	s := basic(t)
	for _, tc := range []struct{ in, want string }{
		{"", `{"type":"doc","content":[{"type":"paragraph"}]}`},
		{"# a *b*", `{"type":"doc","content":[{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"a "},{"type":"text","marks":[{"type":"em"}],"text":"b"}]}]}`},
		// A list item that starts with another block gets an empty
		// paragraph first (list_item is "paragraph block*").
		{"- ```\n  x\n  ```", `{"type":"doc","content":[{"type":"bullet_list","content":[{"type":"list_item","content":[{"type":"paragraph"},{"type":"code_block","content":[{"type":"text","text":"x"}]}]}]}]}`},
		{"3. a\n4. b", `{"type":"doc","content":[{"type":"ordered_list","attrs":{"order":3},"content":[{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","text":"a"}]}]},{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","text":"b"}]}]}]}]}`},
		{"a  \nb\\\nc\nd", `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"a"},{"type":"hard_break"},{"type":"text","text":"b"},{"type":"hard_break"},{"type":"text","text":"c d"}]}]}`},
		{"[x](javascript:alert(1)) <javascript:y> <b>", `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"[x](javascript:alert(1)) <javascript:y> <b>"}]}]}`},
		{"[é](http://müller.de/ä b) ![*a* b](<x y> 't')", `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"[é](http://müller.de/ä b) "},{"type":"image","attrs":{"src":"x%20y","alt":null,"title":"t"}}]}]}`},
		{"[é](http://müller.de/ä) &amp;&#0;", `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"link","attrs":{"href":"http://xn--mller-kva.de/%C3%A4","title":null}}],"text":"é"},{"type":"text","text":" &�"}]}]}`},
	} {
		doc, err := ParseMarkdown(s, []byte(tc.in))
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := string(doc.AppendJSON(nil)); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestParseMarkdownErrors(t *testing.T) {
	text, err := schemas.Get("text")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseMarkdown(text, []byte("a")); !errors.Is(err, ErrMarkdownSchema) || err.Error() != "Unknown node type: blockquote" {
		t.Errorf("text schema: %v", err)
	}
	s := basic(t)
	p := &MarkdownParser{Schema: s, MaxBytes: 10}
	if _, err := p.Parse([]byte("0123456789x")); !errors.Is(err, ErrMarkdownLimit) {
		t.Errorf("size: %v", err)
	}
	for _, in := range []string{strings.Repeat(">", 100_000), strings.Repeat("- ", 100_000), strings.Repeat("1. ", 100_000),
		"-\n" + strings.Repeat(" ", 200_000) + "- a"} {
		start := time.Now()
		if _, err := ParseMarkdown(s, []byte(in)); !errors.Is(err, ErrMarkdownLimit) {
			t.Errorf("%.10q…: %v", in, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%.10q…: %v", in, d)
		}
	}
}

// Deep input within the limits takes time in proportion to its size.
func TestParseMarkdownDeep(t *testing.T) {
	s := basic(t)
	deep := strings.Repeat(">", DefaultMaxMarkdownDepth-1) + " a\n" + strings.Repeat("b\n", 200_000)
	start := time.Now()
	doc, err := ParseMarkdown(s, []byte(deep))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Check(); err != nil {
		t.Error(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	stars := strings.Repeat("*", 200_000) + "a" + strings.Repeat("*", 200_000)
	if _, err := ParseMarkdown(s, []byte(stars)); err != nil {
		t.Error(err)
	}
}

// Runs of definitions longer than a chunk of the definitions transformer,
// with titles on the next line, destinations on the next line and titles
// over two lines; the answers are prosemirror-markdown's.
func TestParseMarkdownDefinitionRuns(t *testing.T) {
	s := basic(t)
	var b strings.Builder
	for i := range 300 {
		if i%3 == 0 {
			fmt.Fprintf(&b, "[d%d]: /u%d\n\"title %d\"\n", i, i, i)
		} else {
			fmt.Fprintf(&b, "[d%d]: /u%d\n", i, i)
		}
	}
	b.WriteString("see [d5] and [d299]\n")
	titles := b.String()
	b.Reset()
	for i := range 200 {
		fmt.Fprintf(&b, "[x%d]:\n/next%d\n", i, i)
	}
	b.WriteString("[x150] [x199]\n")
	nextLine := b.String()
	b.Reset()
	for i := range 150 {
		fmt.Fprintf(&b, "[y%d]: /p \"multi\n[line] title\"\n", i)
	}
	b.WriteString("[y149]\n")
	for _, tc := range []struct{ in, want string }{
		{titles, `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"see "},{"type":"text","marks":[{"type":"link","attrs":{"href":"/u5","title":null}}],"text":"d5"},{"type":"text","text":" and "},{"type":"text","marks":[{"type":"link","attrs":{"href":"/u299","title":null}}],"text":"d299"}]}]}`},
		{nextLine, `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"link","attrs":{"href":"/next150","title":null}}],"text":"x150"},{"type":"text","text":" "},{"type":"text","marks":[{"type":"link","attrs":{"href":"/next199","title":null}}],"text":"x199"}]}]}`},
		{b.String(), `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"link","attrs":{"href":"/p","title":"multi\n[line] title"}}],"text":"y149"}]}]}`},
	} {
		doc, err := ParseMarkdown(s, []byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(doc.AppendJSON(nil)); got != tc.want {
			t.Errorf("%.40q…:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// FuzzParseMarkdown: no Markdown makes ParseMarkdown panic, and what it
// returns for the basic schema passes Check.
func FuzzParseMarkdown(f *testing.F) {
	for _, seed := range []string{"# a\n\n> b *c* `d`\n\n- e\n  1. f", "[a]: /u\n[b][a] ![c](d \"e\")", "<a@b.c> <http://x>",
		"```js\nx\n```", "    code\n\n***\n\ta  \nb\\\nc", "[x](javascript:y) [y]: data:x\n\n[y]", ">>>>>>>>>>>>>>>>>>>>>>>> x\n- - - - - - - - - - - - y"} {
		f.Add(seed)
	}
	s := basic(f)
	f.Fuzz(func(t *testing.T, md string) {
		doc, err := ParseMarkdown(s, []byte(md))
		if err != nil {
			if !errors.Is(err, ErrMarkdownLimit) {
				t.Fatalf("%q: %v", md, err)
			}
			return
		}
		if err := doc.Check(); err != nil {
			t.Fatalf("%q: %v\n%s", md, err, doc.AppendJSON(nil))
		}
	})
}
