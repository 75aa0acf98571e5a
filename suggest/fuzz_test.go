package suggest_test

import (
	"testing"

	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/suggest"
	"github.com/pmauthority/pmauthority/transform"
)

// FuzzRevert runs the four functions on any document of the suggest
// schema: they return a result or an error, never panic, and a result's
// document is what its steps make.
func FuzzRevert(f *testing.F) {
	f.Add([]byte(doc(para(text("a "), text("b", ins("1")), text(" c", del("2"))))), 1.0, "a")
	f.Add([]byte(doc(para(text("a")), `{"type":"paragraph","content":[`+text("b", ins("1"))+`],"marks":[`+ins("1")+`]}`)), 1.0, "1")
	f.Add([]byte(`{"type":"doc","content":[{"type":"bullet_list","content":[{"type":"list_item","content":[{"type":"paragraph","content":[`+
		text("x", del(`"a"`))+`]}]}],"marks":[`+del(`"a"`)+`]},{"type":"heading","attrs":{"level":2},"marks":[`+mod("2", "level", 1, 2)+`]}]}`), 2.0, "a")
	f.Add([]byte(`{"type":"doc","content":[{"type":"paragraph","marks":[{"type":"modification","attrs":{"id":1,"type":"nodeType","previousValue":"code_block"}},`+
		`{"type":"modification","attrs":{"id":1,"type":"mark","previousValue":{"type":"em"}}}],"content":[`+text("\u200b", ins("1"))+`]}]}`), 1.0, "b")
	s, err := schemas.Get("suggest")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, num float64, str string) {
		d, err := s.NodeFromJSON(data)
		if err != nil {
			return
		}
		for _, run := range []func() (*transform.Transform, error){
			func() (*transform.Transform, error) { return suggest.Revert(d) },
			func() (*transform.Transform, error) { return suggest.Apply(d) },
			func() (*transform.Transform, error) { return suggest.RevertID(d, num) },
			func() (*transform.Transform, error) { return suggest.ApplyID(d, str) },
		} {
			tr, err := run()
			if err != nil {
				continue
			}
			replay := transform.New(d)
			for _, st := range tr.Steps {
				if err := replay.Step(st); err != nil {
					t.Fatalf("step %s: %v", st.AppendJSON(nil), err)
				}
			}
			if !replay.Doc.Eq(tr.Doc) {
				t.Fatalf("steps make %s, the result is %s", replay.Doc.AppendJSON(nil), tr.Doc.AppendJSON(nil))
			}
		}
	})
}
