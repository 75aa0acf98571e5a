package export

import (
	"strings"
	"testing"
)

// FuzzExport feeds documents of the basic schema to every export: none
// may panic, and the HTML never holds a script element or a javascript:
// link, whatever the document's text and attributes.
func FuzzExport(f *testing.F) {
	for _, seed := range []string{
		`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"em"},{"type":"code"}],"text":" a` + "`" + ` "},{"type":"hard_break","marks":[{"type":"em"}]},{"type":"text","text":"\n# x"}]}]}`,
		`{"type":"doc","content":[{"type":"bullet_list","content":[{"type":"list_item","content":[{"type":"paragraph"},{"type":"blockquote","content":[{"type":"code_block","content":[{"type":"text","text":"` + "```" + `"}]}]}]}]}]}`,
		`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"link","attrs":{"href":"javascript:x","title":"\"<script>"}},{"type":"link","attrs":{"href":"a","title":null}}],"text":"<script>"}]}]}`,
		`{"type":"doc","content":[{"type":"heading","attrs":{"level":-3}},{"type":"ordered_list","attrs":{"order":1e20},"content":[{"type":"list_item","content":[{"type":"paragraph"}]}]}]}`,
	} {
		f.Add(seed)
	}
	s := basic(f)
	f.Fuzz(func(t *testing.T, data string) {
		d, err := s.NodeFromJSON([]byte(data))
		if err != nil {
			return
		}
		_ = Text(d)
		_, _ = Markdown(d)
		html, err := HTML(d)
		if err != nil {
			return
		}
		lower := strings.ToLower(html)
		if strings.Contains(lower, "<script") || strings.Contains(lower, `href="javascript:`) {
			t.Fatalf("unsafe HTML %q", html)
		}
	})
}
