package suggest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/suggest"
	"github.com/pmauthority/pmauthority/transform"
)

// Shorthands for the JSON of suggest documents.
func ins(id string) string { return `{"type":"insertion","attrs":{"id":` + id + `}}` }
func del(id string) string { return `{"type":"deletion","attrs":{"id":` + id + `}}` }
func mod(id, attr string, prev, next int) string {
	return fmt.Sprintf(`{"type":"modification","attrs":{"id":%s,"type":"attr","attrName":"%s","previousValue":%d,"newValue":%d}}`, id, attr, prev, next)
}
func text(s string, marks ...string) string {
	if len(marks) == 0 {
		return `{"type":"text","text":"` + s + `"}`
	}
	return `{"type":"text","marks":[` + strings.Join(marks, ",") + `],"text":"` + s + `"}`
}
func para(content ...string) string {
	return `{"type":"paragraph","content":[` + strings.Join(content, ",") + `]}`
}
func doc(blocks ...string) string {
	return `{"type":"doc","content":[` + strings.Join(blocks, ",") + `]}`
}

func mustDoc(t *testing.T, s *model.Schema, data string) *model.Node {
	t.Helper()
	n, err := s.NodeFromJSON([]byte(data))
	if err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	if err := n.Check(); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return n
}

func TestRevertApply(t *testing.T) {
	s, err := schemas.Get("suggest")
	if err != nil {
		t.Fatal(err)
	}
	heading := func(level int, marks string, content string) string {
		return fmt.Sprintf(`{"type":"heading","attrs":{"level":%d},"content":[%s],"marks":[%s]}`, level, content, marks)
	}
	revertAll := func(d *model.Node) (*transform.Transform, error) { return suggest.Revert(d) }
	applyAll := func(d *model.Node) (*transform.Transform, error) { return suggest.Apply(d) }
	revertID := func(id any) func(*model.Node) (*transform.Transform, error) {
		return func(d *model.Node) (*transform.Transform, error) { return suggest.RevertID(d, id) }
	}
	applyID := func(id any) func(*model.Node) (*transform.Transform, error) {
		return func(d *model.Node) (*transform.Transform, error) { return suggest.ApplyID(d, id) }
	}
	mixed := doc(para(text("keep "), text("new", ins("1")), text(" old", del("2"))), heading(2, mod("3", "level", 1, 2), text("T")))
	for _, tc := range []struct {
		name string
		run  func(*model.Node) (*transform.Transform, error)
		doc  string
		want string
	}{
		{"revert drops insertions (and a space), keeps deletions, restores attributes", revertAll, mixed,
			doc(para(text("keep old")), `{"type":"heading","attrs":{"level":1},"content":[`+text("T")+`]}`)},
		{"apply drops deletions, keeps insertions and attributes", applyAll, mixed,
			doc(para(text("keep new")), `{"type":"heading","attrs":{"level":2},"content":[`+text("T")+`]}`)},
		{"an insertion between two spaces takes one along", revertAll, doc(para(text("a "), text("b", ins("1")), text(" c"))),
			doc(para(text("a c")))},
		{"an inserted block that ends the document (JavaScript throws)", revertAll,
			doc(para(text("a")), `{"type":"paragraph","content":[`+text("b", ins("1"))+`],"marks":[`+ins("1")+`]}`),
			doc(para(text("a")))},
		{"an insertion that spans a block boundary", revertAll,
			doc(para(text("a"), text("b", ins("1"))), para(text("c", ins("1")), text("d"))),
			doc(para(text("ad")))},
		{"revert one id leaves the others (a space goes with the insertion)", revertID(1.0), mixed,
			doc(para(text("keep "), text("old", del("2"))), heading(2, mod("3", "level", 1, 2), text("T")))},
		{"revert an id that has only a modification", revertID(3.0), mixed,
			doc(para(text("keep "), text("new", ins("1")), text(" old", del("2"))), `{"type":"heading","attrs":{"level":1},"content":[`+text("T")+`]}`)},
		{"apply one id leaves the other ids' modifications", applyID(2.0), mixed,
			doc(para(text("keep "), text("new", ins("1"))), heading(2, mod("3", "level", 1, 2), text("T")))},
		{"only the modifications of the id, also behind another's", revertID("b"),
			doc(heading(3, mod(`"a"`, "level", 2, 3)+","+mod(`"b"`, "level", 1, 2), text("T"))),
			doc(heading(1, mod(`"a"`, "level", 2, 3), text("T")))},
		{"a number id is not a string id", revertID("1"), mixed, mixed},
		{"an unknown id changes nothing", applyID(9.0), mixed, mixed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := tc.run(mustDoc(t, s, tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(tr.Doc.AppendJSON(nil)); got != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
			// The steps replay to the same document.
			replay := transform.New(mustDoc(t, s, tc.doc))
			for _, st := range tr.Steps {
				if err := replay.Step(st); err != nil {
					t.Fatal(err)
				}
			}
			if !replay.Doc.Eq(tr.Doc) {
				t.Errorf("steps replay to %s", replay.Doc.AppendJSON(nil))
			}
		})
	}
}

func TestErrors(t *testing.T) {
	basic, _ := schemas.Get("basic")
	if _, err := suggest.Revert(mustDoc(t, basic, doc(para(text("x"))))); err == nil ||
		err.Error() != "Failed to find insertion mark in schema. Did you forget to add it?" {
		t.Errorf("basic schema: %v", err)
	}
	s, _ := schemas.Get("suggest")
	unknown := `{"type":"doc","content":[{"type":"paragraph","marks":[{"type":"modification","attrs":{"id":1,"type":"other"}}]}]}`
	tr, err := suggest.Revert(mustDoc(t, s, unknown))
	if tr != nil || err != suggest.ErrUnknownModification {
		t.Errorf("unknown modification: %v, %v", tr, err)
	}
	if tr, err := suggest.Apply(mustDoc(t, s, unknown)); err != nil || len(tr.Steps) != 1 {
		t.Errorf("apply removes an unknown modification: %v, %v", tr, err)
	}
}

func ExampleRevert() {
	s, _ := schemas.Get("suggest")
	doc, _ := s.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[` +
		`{"type":"text","text":"Ship on "},` +
		`{"type":"text","marks":[{"type":"deletion","attrs":{"id":1}}],"text":"Friday"},` +
		`{"type":"text","marks":[{"type":"insertion","attrs":{"id":1}}],"text":"Thursday"}]}]}`))
	reverted, _ := suggest.Revert(doc)
	applied, _ := suggest.Apply(doc)
	fmt.Println(reverted.Doc.TextContent())
	fmt.Println(applied.Doc.TextContent())
	// Output:
	// Ship on Friday
	// Ship on Thursday
}
