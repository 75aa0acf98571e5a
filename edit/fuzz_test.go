package edit_test

import (
	"testing"

	"github.com/pmauthority/pmauthority/edit"
	"github.com/pmauthority/pmauthority/transform"
)

// FuzzEdit makes random edit requests on a small document, as they come
// from the network: none may panic, and what an accepted one makes is a
// valid document.
func FuzzEdit(f *testing.F) {
	for _, seed := range []string{
		`{"base":0,"edits":[{"op":"insert","target":{"text":{"find":"two"}},"at":"after","markdown":"new"}]}`,
		`{"base":0,"edits":[{"op":"wrapInList","target":{"block":{"path":[1]}},"type":"bullet_list"}]}`,
		`{"base":0,"edits":[{"op":"liftOutOfList","target":{"text":{"find":"x"}}}]}`,
		`{"base":0,"edits":[{"op":"setBlockType","target":{"block":{"path":[0]}},"type":"code_block"}]}`,
		`{"base":0,"edits":[{"op":"addMark","target":{"text":{"find":"o","before":"tw"}},"mark":{"type":"link","attrs":{"href":"x"}}}]}`,
		`{"base":0,"edits":[{"op":"insert","target":{"block":{"path":[2,0]}},"at":"start","content":[{"type":"paragraph"},{"type":"horizontal_rule"}]}]}`,
		`{"base":0,"edits":[{"op":"deleteBlock","target":{"block":{"attr":"level","value":1}}},{"op":"replaceText","target":{"text":{"find":"😀"}},"text":""}]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		d := doc(t, docOf(`{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"one"}]}`, p("two 😀 three"),
			`{"type":"bullet_list","content":[{"type":"list_item","content":[`+p("x")+`]}]}`))
		req, err := edit.Parse([]byte(body))
		if err != nil {
			return
		}
		plan, err := edit.Prepare(d, req, fakeMarkdown)
		if err != nil {
			return
		}
		tr := transform.New(d)
		if err := plan.Make(tr); err != nil {
			return
		}
		if err := tr.Doc.Check(); err != nil {
			t.Fatalf("%s made an invalid document: %v\n%s", body, err, tr.Doc.AppendJSON(nil))
		}
	})
}
