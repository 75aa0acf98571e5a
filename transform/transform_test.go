package transform

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/model"
)

func mustOps(t testing.TB, data string) []Op {
	t.Helper()
	var ops []Op
	if err := json.Unmarshal([]byte(data), &ops); err != nil {
		t.Fatalf("ops %s: %v", data, err)
	}
	return ops
}

func TestTransformMethods(t *testing.T) {
	schema := testSchema(t, "basic")
	for _, c := range transformCases {
		t.Run(c.name, func(t *testing.T) {
			doc := mustDoc(t, schema, transformDocs[c.doc])
			tr, err := ApplyOps(doc, mustOps(t, c.ops))
			if c.err == "" && err != nil {
				t.Fatalf("error %v", err)
			}
			if c.err != "" {
				var opErr *OpError
				if !errors.As(err, &opErr) || opErr.Index != c.errOp || opErr.Err.Error() != c.err {
					t.Fatalf("error %v, want op %d: %s", err, c.errOp, c.err)
				}
			}
			if got := string(tr.Doc.AppendJSON(nil)); got != c.want {
				t.Errorf("doc\n got %s\nwant %s", got, c.want)
			}
			if len(tr.Steps) != c.steps || len(tr.Docs) != c.steps || len(tr.Mapping.Maps()) != c.steps {
				t.Errorf("%d steps, %d docs, %d maps; want %d", len(tr.Steps), len(tr.Docs), len(tr.Mapping.Maps()), c.steps)
			}
			if tr.Before() != doc || tr.DocChanged() != (c.steps > 0) {
				t.Errorf("Before or DocChanged wrong")
			}
			// The steps replay to the same document.
			again, err := ApplySteps(doc, tr.Steps)
			if err != nil || !again.Eq(tr.Doc) {
				t.Errorf("steps do not replay: %v", err)
			}
		})
	}
}

func TestTransformStepError(t *testing.T) {
	schema := testSchema(t, "basic")
	doc := mustDoc(t, schema, transformDocs["P2"])
	tr := New(doc)
	err := tr.Step(&ReplaceStep{From: 1, To: 7})
	var te *TransformError
	if !errors.As(err, &te) || err.Error() != "Inconsistent open depths" {
		t.Fatalf("Step: %v (%T), want a TransformError", err, err)
	}
	if err := tr.Step(&ReplaceStep{From: 1, To: 99}); err == nil || errors.As(err, &te) {
		t.Fatalf("Step out of range: %v, want a plain error", err)
	}
	if err := tr.MaybeStep(&ReplaceStep{From: 1, To: 7}); err == nil || tr.DocChanged() {
		t.Fatalf("MaybeStep: %v, changed %v", err, tr.DocChanged())
	}
	if _, _, ok := tr.ChangedRange(); ok {
		t.Fatal("ChangedRange of no steps")
	}
	if err := tr.Insert(3, model.FragmentOf(mustDoc(t, schema, `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"xy"}]}]}`).FirstChild().FirstChild())); err != nil {
		t.Fatal(err)
	}
	if from, to, ok := tr.ChangedRange(); !ok || from != 3 || to != 5 {
		t.Fatalf("ChangedRange %d %d %v", from, to, ok)
	}
}

func TestApplyBadArgs(t *testing.T) {
	schema := testSchema(t, "basic")
	doc := mustDoc(t, schema, transformDocs["P2"])
	for _, c := range []struct{ op, err string }{
		{`{"op":"frob","args":[]}`, `unknown op "frob"`},
		{`{"op":"delete","args":[1]}`, "delete takes 2 arguments, got 1"},
		{`{"op":"join","args":[1,1,1]}`, "join takes 1 to 2 arguments, got 3"},
		{`{"op":"delete","args":["1",2]}`, "delete argument 0: want an integer, got a string"},
		{`{"op":"delete","args":[1.5,2]}`, "delete argument 0: want an integer, got 1.5"},
		{`{"op":"delete","args":[1,1e300]}`, "delete argument 1: want an integer, got 1e+300"},
		{`{"op":"split","args":[3,-1]}`, "split argument 1: want a depth of 0 or more, got -1"},
		{`{"op":"setBlockType","args":[1,2,"chapter"]}`, `setBlockType argument 2: unknown node type "chapter"`},
		{`{"op":"setBlockType","args":[1,2,"heading",[1]]}`, "setBlockType argument 3: want attributes (an object), got an array"},
		{`{"op":"addMark","args":[1,2,{"type":"blink"}]}`, "addMark argument 2: There is no mark type blink in this schema (at type)"},
		{`{"op":"removeMark","args":[1,2,"blink"]}`, `removeMark argument 2: unknown mark type "blink"`},
		{`{"op":"removeNodeMark","args":[1,null]}`, "removeNodeMark argument 1: want a mark or a mark type name, got null"},
		{`{"op":"insert","args":[1,{"type":"nope"}]}`, "insert argument 1: Unknown node type: nope (at type)"},
		{`{"op":"lift","args":[{"from":1,"to":1},0]}`, `lift argument 0: want a range {"from": …, "to": …, "depth": …}`},
		{`{"op":"lift","args":[{"from":1,"to":1,"depth":2},0]}`, "lift argument 0: range depth 2 is not between 0 and the depth of both positions"},
		{`{"op":"lift","args":[{"from":1,"to":99,"depth":0},0]}`, "Position 99 out of range"},
		{`{"op":"wrap","args":[{"from":1,"to":1,"depth":0},null]}`, `wrap argument 1: want an array of {"type", "attrs"}`},
		{`{"op":"wrap","args":[{"from":1,"to":1,"depth":0},[null]]}`, `wrap argument 1: element 0: want {"type", "attrs"}, got null`},
		{`{"op":"split","args":[3,1,[{"type":"x"}]]}`, `split argument 2: element 0: unknown node type "x"`},
		{`{"op":"setNodeMarkup","args":[0,null,null,{}]}`, "setNodeMarkup argument 3: want an array of marks"},
		{`{"op":"setDocAttribute","args":[1,2]}`, "setDocAttribute argument 0: want a string, got a number"},
		{`{"op":"replace","args":[1,2,{"content":5}]}`, "replace argument 2: Invalid input for Fragment.fromJSON (at content)"},
	} {
		var op Op
		if err := json.Unmarshal([]byte(c.op), &op); err != nil {
			t.Fatal(err)
		}
		tr := New(doc)
		err := tr.Apply(op)
		if err == nil || err.Error() != c.err {
			t.Errorf("%s: %v, want %s", c.op, err, c.err)
		}
		if tr.DocChanged() {
			t.Errorf("%s: made steps", c.op)
		}
	}
}

// TestFitterSlices runs the Fitter on slices whose open depths do not fit
// their content (negative sizes), which JavaScript accepts: it must end,
// with the step prosemirror-transform makes, and a bounded loop.
func TestFitterSlices(t *testing.T) {
	schema := testSchema(t, "basic")
	doc := mustDoc(t, schema, `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"ab"}]}]}`)
	for _, c := range []struct{ slice, want string }{
		{`{"content":[{"type":"paragraph","content":[{"type":"text","text":"x"}]}],"openStart":1,"openEnd":3}`, ""},
		{`{"content":[{"type":"paragraph"}],"openStart":1,"openEnd":2}`, ""},
		{`{"content":[{"type":"blockquote","content":[{"type":"paragraph"}]}],"openStart":2,"openEnd":2}`, ""},
	} {
		slice, err := schema.SliceFromJSON([]byte(c.slice))
		if err != nil {
			t.Fatal(err)
		}
		tr := New(doc)
		if err := tr.Replace(1, 2, slice); err != nil && !errors.Is(err, ErrFitterLoop) && !strings.HasPrefix(err.Error(), "Cannot read") {
			t.Errorf("%s: %v", c.slice, err)
		}
	}
	f := &fitter{unplaced: model.NewSlice(model.Fragment{}, 1, 0)}
	f.from, _ = doc.Resolve(1)
	f.to = f.from
	f.frontier = []frontierEntry{{doc.Type, doc.Type.ContentMatch}}
	if _, err := f.fit(); err == nil {
		t.Errorf("fit of an empty slice open at its start: no error")
	}
}

func TestHelpers(t *testing.T) {
	schema := testSchema(t, "basic")
	doc := mustDoc(t, schema, transformDocs["Q"])
	from, _ := doc.Resolve(3)
	r := from.BlockRange(nil, nil)
	if d, ok := LiftTarget(r); !ok || d != 0 {
		t.Errorf("LiftTarget %d %v", d, ok)
	}
	if w, ok := FindWrapping(r, schema.NodeType("bullet_list"), nil, nil); !ok || len(w) != 2 || w[1].Type.Name != "list_item" {
		t.Errorf("FindWrapping %v %v", w, ok)
	}
	if !CanSplit(doc, 3, 1, nil) || CanSplit(doc, 3, 3, nil) || CanSplit(doc, 99, 1, nil) {
		t.Error("CanSplit")
	}
	if !CanJoin(doc, 6) || CanJoin(doc, 3) || CanJoin(doc, -1) {
		t.Error("CanJoin")
	}
	if p, ok := JoinPoint(doc, 8, -1); ok { // paragraphs are joined with Join, not found here
		t.Errorf("JoinPoint %d %v", p, ok)
	}
	lists := mustDoc(t, schema, transformDocs["L2"])
	if p, ok := JoinPoint(lists, 11, -1); !ok || p != 8 {
		t.Errorf("JoinPoint %d %v", p, ok)
	}
	if p, ok := InsertPoint(doc, 2, schema.NodeType("horizontal_rule")); !ok || p != 1 {
		t.Errorf("InsertPoint %d %v", p, ok)
	}
	slice, _ := schema.SliceFromJSON([]byte(`{"content":[{"type":"horizontal_rule"}]}`))
	if p, ok := DropPoint(doc, 3, slice); !ok || p != 1 {
		t.Errorf("DropPoint %d %v", p, ok)
	}
}

func TestTransformZeroMapping(t *testing.T) {
	schema := testSchema(t, "basic")
	tr := &Transform{Doc: mustDoc(t, schema, transformDocs["P2"])}
	if _, _, ok := tr.ChangedRange(); ok {
		t.Fatal("ChangedRange of no steps")
	}
	if err := tr.Split(3, 1, nil); err != nil {
		t.Fatal(err)
	}
	if len(tr.Mapping.Maps()) != 1 {
		t.Fatalf("%d maps", len(tr.Mapping.Maps()))
	}
}

func TestSetBlockTypeFunc(t *testing.T) {
	schema := testSchema(t, "basic")
	tr := New(mustDoc(t, schema, transformDocs["P2"]))
	level := 0.0
	err := tr.SetBlockTypeFunc(1, 9, schema.NodeType("heading"), func(old *model.Node) model.Attrs {
		level++
		return model.Attrs{{Name: "level", Value: level}}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"doc","content":[{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"hello"}]},{"type":"heading","attrs":{"level":2},"content":[{"type":"text","text":"world"}]}]}`
	if got := string(tr.Doc.AppendJSON(nil)); got != want {
		t.Errorf("got %s", got)
	}
	if err := New(tr.Doc).SetBlockTypeFunc(1, 9, schema.NodeType("paragraph"), nil); err != nil {
		t.Fatal(err)
	}
}
