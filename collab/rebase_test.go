package collab_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/transform"
)

// addMark is a step adding a mark without attributes.
func addMark(mark string, from, to int) []byte {
	return fmt.Appendf(nil, `{"stepType":"addMark","mark":{"type":%q},"from":%d,"to":%d}`, mark, from, to)
}

// insertNode is a step inserting an empty node of type typ at pos.
func insertNode(pos int, typ string) []byte {
	return fmt.Appendf(nil, `{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":%q}]}}`, pos, pos, typ)
}

// codeBlock turns the textblock from..to with content size size into a
// code block, as setBlockType does.
func codeBlock(from, size int) []byte {
	return fmt.Appendf(nil, `{"stepType":"replaceAround","from":%d,"to":%d,"gapFrom":%d,"gapTo":%d,"insert":1,"slice":{"content":[{"type":"code_block"}]},"structure":true}`,
		from, from+size+2, from+1, from+size+1)
}

func TestRebase(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		steps   [][]byte // made on doc
		over    [][]byte // accepted since, made on doc
		want    [][]byte // the rebased steps
		dropped []int
		result  string // the document after want
	}{{
		name:   "concurrent insert before",
		doc:    paragraph("hello world"),
		steps:  steps(insert(7, "X")),
		over:   steps(insert(1, "abc")),
		want:   steps(insert(10, "X")),
		result: paragraph("abchello Xworld"),
	}, {
		name:   "concurrent insert after",
		doc:    paragraph("hello world"),
		steps:  steps(insert(7, "X"), del(1, 2)),
		over:   steps(insert(12, "!")),
		want:   steps(insert(7, "X"), del(1, 2)),
		result: paragraph("ello Xworld!"),
	}, {
		name:   "nothing since",
		doc:    paragraph("hello"),
		steps:  steps(insert(6, "abc"), del(7, 8)),
		want:   steps(insert(6, "abc"), del(7, 8)),
		result: paragraph("helloac"),
	}, {
		name:    "range deleted since: the step does not map",
		doc:     paragraph("hello world"),
		steps:   steps(del(2, 4), insert(1, ">")),
		over:    steps(del(1, 12)),
		want:    steps(insert(1, ">")),
		dropped: []int{0},
		result:  paragraph(">"),
	}, {
		name:    "block made a code block since: the step no longer applies",
		doc:     paragraph("ab"),
		steps:   steps(insertNode(2, "hard_break"), insert(3, "c")),
		over:    steps(codeBlock(0, 2)),
		want:    steps(insert(2, "c")),
		dropped: []int{0},
		result:  `{"type":"doc","content":[{"type":"code_block","content":[{"type":"text","text":"acb"}]}]}`,
	}, {
		// The mirror: del's range lies in what the commit's own insert
		// put there, which the inverse of that insert deletes. Recovered
		// through the rebased insert, it deletes the "b" again (without
		// the mirror it would collapse to an empty range).
		name:   "step inside an earlier step of the commit",
		doc:    paragraph("hello"),
		steps:  steps(insert(6, "abc"), del(7, 8)),
		over:   steps(insert(1, "XY")),
		want:   steps(insert(8, "abc"), del(9, 10)),
		result: paragraph("XYhelloac"),
	}, {
		// The mark is mapped through the inverses of both inserts and
		// recovered through both rebased ones; the second insert's
		// position, where XY went in, goes after XY (assoc 1).
		name:   "mirror across two earlier steps",
		doc:    paragraph("hello"),
		steps:  steps(insert(6, "abc"), insert(1, "__"), addMark("strong", 9, 10)),
		over:   steps(insert(1, "XY")),
		want:   steps(insert(8, "abc"), insert(3, "__"), addMark("strong", 11, 12)),
		result: `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"XY__helloa"},{"type":"text","marks":[{"type":"strong"}],"text":"b"},{"type":"text","text":"c"}]}]}`,
	}, {
		name:   "a step and its inverse since",
		doc:    paragraph("hello"),
		steps:  steps(insert(3, "Z"), del(4, 6)),
		over:   steps(insert(1, "XY"), del(1, 3)),
		want:   steps(insert(3, "Z"), del(4, 6)),
		result: paragraph("heZo"),
	}, {
		// Deleting what is gone leaves an empty replace (both ends at
		// the deletion's edges, not inside it): rebaseSteps keeps it.
		name:   "the same deletion made twice",
		doc:    paragraph("hello"),
		steps:  steps(del(2, 4), insert(2, "a")),
		over:   steps(del(2, 4)),
		want:   steps(del(2, 2), insert(2, "a")),
		result: paragraph("halo"),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := mustDoc(t, "basic", tc.doc)
			current, maps := base, []*transform.StepMap(nil)
			for _, st := range decodeSteps(t, tc.over) {
				var err error
				if current, err = st.Apply(current); err != nil {
					t.Fatal(err)
				}
				maps = append(maps, st.GetMap())
			}
			got, err := collab.Rebase(base, decodeSteps(t, tc.steps), maps, current)
			if err != nil {
				t.Fatal(err)
			}
			var gotJSON []string
			for _, st := range got.Steps {
				gotJSON = append(gotJSON, string(st.AppendJSON(nil)))
			}
			var want []string
			for _, st := range decodeSteps(t, tc.want) {
				want = append(want, string(st.AppendJSON(nil)))
			}
			if !slices.Equal(gotJSON, want) {
				t.Errorf("steps:\n got  %q\n want %q", gotJSON, want)
			}
			if !slices.Equal(got.Dropped, tc.dropped) {
				t.Errorf("dropped %v, want %v", got.Dropped, tc.dropped)
			}
			if doc := string(got.Doc.AppendJSON(nil)); doc != tc.result {
				t.Errorf("doc:\n got  %s\n want %s", doc, tc.result)
			}
			if after, err := transform.ApplySteps(current, got.Steps); err != nil || !after.Eq(got.Doc) {
				t.Errorf("the steps do not make the doc from the current one: %v", err)
			}
		})
	}
}

func TestRebaseErrors(t *testing.T) {
	base := mustDoc(t, "basic", paragraph("ab"))
	rebase := func(s ...[]byte) error {
		_, err := collab.Rebase(base, decodeSteps(t, s), nil, base)
		return err
	}

	// A step that does not apply where it was made.
	var se *transform.StepError
	if err := rebase(insert(1, "x"), insert(10, "y")); !errors.As(err, &se) || se.Index != 1 {
		t.Errorf("a step out of range: %v, want a *transform.StepError for step 1", err)
	}

	// Node.fromJSON keeps two links on a text; removing one, the
	// inverse adds it back, which replaces the other (a mark excludes
	// its own type): the undo does not give back the document the steps
	// were made on. rebaseSteps goes on from the document without the
	// other link.
	links := mustDoc(t, "basic", `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"link","attrs":{"href":"a"}},{"type":"link","attrs":{"href":"b"}}],"text":"ab"}]}]}`)
	unlink := decodeSteps(t, steps([]byte(`{"stepType":"removeMark","mark":{"type":"link","attrs":{"href":"a"}},"from":1,"to":3}`)))
	var ue *collab.UndoError
	if _, err := collab.Rebase(links, unlink, nil, links); !errors.As(err, &ue) || ue.Index != -1 || ue.Err != nil {
		t.Errorf("an inexact inverse: %v, want an *collab.UndoError of Index -1", err)
	}

	// A replace with from > to (which JS takes) whose inverse does not
	// apply (rebaseSteps throws on it).
	list := mustDoc(t, "basic", `{"type":"doc","content":[{"type":"bullet_list","content":[{"type":"list_item","content":[{"type":"paragraph"}]}]}]}`)
	backwards := decodeSteps(t, steps(
		[]byte(`{"stepType":"replace","from":6,"to":6,"slice":{"content":[{"type":"bullet_list","content":[{"type":"list_item","content":[{"type":"paragraph"}]}]}]}}`),
		[]byte(`{"stepType":"replace","from":7,"to":2,"slice":{"content":[{"type":"bullet_list","content":[{"type":"list_item","content":[{"type":"paragraph"}]}]},{"type":"horizontal_rule"},{"type":"bullet_list","content":[{"type":"list_item"}]}],"openStart":1,"openEnd":2}}`)))
	_, err := collab.Rebase(list, backwards, nil, list)
	if !errors.As(err, &ue) || ue.Index != 1 || ue.Err == nil || ue.Err.Error() != "Invalid content for node bullet_list" {
		t.Errorf("an inverse that does not apply: %v, want an *collab.UndoError for step 1", err)
	}

	// No map for a step since the base.
	if _, err := collab.Rebase(base, decodeSteps(t, steps(insert(1, "x"))), []*transform.StepMap{nil}, base); err == nil {
		t.Error("a nil map: no error")
	}
}

// decodeSteps decodes steps of the basic schema.
func decodeSteps(t *testing.T, raws [][]byte) []transform.Step {
	t.Helper()
	s, _ := lookupSchema("basic")
	var out []transform.Step
	for _, raw := range raws {
		st, err := transform.StepFromJSON(s, raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		out = append(out, st)
	}
	return out
}
