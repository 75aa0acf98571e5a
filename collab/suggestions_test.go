package collab_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// insertMarked is a step inserting text marked with a suggestion mark
// (insertion, deletion) of id at pos.
func insertMarked(pos int, text, mark string, id any) []byte {
	return fmt.Appendf(nil, `{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"text","text":%q,"marks":[{"type":%q,"attrs":{"id":%s}}]}]}}`,
		pos, pos, text, mark, jsonID(id))
}

// markStep is an addMark or removeMark step of a suggestion mark.
func markStep(kind string, from, to int, mark string, id any) []byte {
	return fmt.Appendf(nil, `{"stepType":%q,"from":%d,"to":%d,"mark":{"type":%q,"attrs":{"id":%s}}}`, kind, from, to, mark, jsonID(id))
}

func jsonID(id any) string {
	if s, ok := id.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(id)
}

// suggestDoc creates the document id of the suggest schema: a heading
// "T" and the paragraphs "hello world" and "ab" (positions: heading 0-3,
// "hello world" 3-16 with its text at 4-15, "ab" 16-20).
func suggestDoc(t *testing.T, a *collab.Authority, id string) {
	t.Helper()
	s, err := schemas.Get("suggest")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := s.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"T"}]},` +
		`{"type":"paragraph","content":[{"type":"text","text":"hello world"}]},{"type":"paragraph","content":[{"type":"text","text":"ab"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Create(context.Background(), id, "suggest", doc); err != nil {
		t.Fatal(err)
	}
}

// suggester submits steps as a suggest-only principal.
type suggester struct {
	a      *collab.Authority
	doc    string
	author string
	client collab.ClientID
}

func (s suggester) submit(steps ...[]byte) (collab.Result, error) {
	st, err := s.a.Get(context.Background(), s.doc, "")
	if err != nil {
		return collab.Result{}, err
	}
	return s.a.Submit(context.Background(), s.doc, "", collab.Submission{
		Version: st.Version, Steps: steps, ClientID: s.client, Author: s.author, SuggestOnly: true,
	})
}

// TestSuggestOnly submits honest suggestions, then hostile steps that
// each break a rule: every hostile one is refused (ErrForbidden, naming
// the rule) with the document and its version unchanged.
func TestSuggestOnly(t *testing.T) {
	st := memstore.New()
	a := newAuthority(t, st, collab.Config{})
	suggestDoc(t, a, "d")
	alice := suggester{a, "d", "alice", collab.ClientID("11")}
	bob := suggester{a, "d", "bob", collab.ClientID("22")}

	// Honest: alice inserts "X" (id 1) after "hello", marks "world" as
	// deleted (id 2), extends her insertion, inserts "Y" (id 3) and
	// removes it again.
	honest := []struct {
		name  string
		who   suggester
		steps [][]byte
	}{
		{"insertion with a new id", alice, steps(insertMarked(9, "X", "insertion", 1))},         // hello|X| world
		{"deletion marking text", alice, steps(markStep("addMark", 11, 16, "deletion", 2))},     // "world" 11-16
		{"extending one's own suggestion", alice, steps(insertMarked(10, "W", "insertion", 1))}, // helloXW world
		{"a second insertion", alice, steps(insertMarked(20, "Y", "insertion", 3))},             // aYb
		{"removing one's own", alice, steps(del(20, 21))},
		{"another principal's new id", bob, steps(insertMarked(20, "Z", "insertion", "bob-1"))}, // aZb
	}
	for _, h := range honest {
		if _, err := h.who.submit(h.steps...); err != nil {
			t.Fatalf("%s: %v", h.name, err)
		}
	}
	want := `{"type":"doc","content":[{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"T"}]},` +
		`{"type":"paragraph","content":[{"type":"text","text":"hello"},{"type":"text","marks":[{"type":"insertion","attrs":{"id":1}}],"text":"XW"},{"type":"text","text":" "},` +
		`{"type":"text","marks":[{"type":"deletion","attrs":{"id":2}}],"text":"world"}]},` +
		`{"type":"paragraph","content":[{"type":"text","text":"a"},{"type":"text","marks":[{"type":"insertion","attrs":{"id":"bob-1"}}],"text":"Z"},{"type":"text","text":"b"}]}]}`
	if got := string(mustGet(t, a, "d").Doc.AppendJSON(nil)); got != want {
		t.Fatalf("after the honest suggestions:\n got %s\nwant %s", got, want)
	}

	hostile := []struct {
		name  string
		who   suggester
		steps [][]byte
		rule  string
	}{
		{"a direct insert", bob, steps(insert(4, "!")), "outside suggestions"},
		{"a deletion without a mark", bob, steps(del(4, 5)), "outside suggestions"},
		{"removing another's suggestion", bob, steps(del(9, 11)), "remove only its own suggestions: suggestion 1"},
		{"extending another's suggestion", bob, steps(insertMarked(11, "V", "insertion", 1)), "change only its own suggestions: suggestion 1"},
		{"reusing another's id", bob, steps(insertMarked(4, "Q", "insertion", 3)), "reuse suggestion id 3"},
		{"an attribute change outside a modification", bob, steps([]byte(`{"stepType":"attr","pos":0,"attr":"level","value":2}`)), "outside suggestions"},
		{"a mark step that strips a deletion", bob, steps(markStep("removeMark", 13, 17, "deletion", 2)), "change only its own suggestions: suggestion 2"},
		{"stripping a whole deletion", bob, steps(markStep("removeMark", 12, 17, "deletion", 2)), "remove only its own suggestions: suggestion 2"},
		{"splitting a block", bob, steps([]byte(`{"stepType":"replace","from":6,"to":6,"slice":{"content":[{"type":"paragraph"},{"type":"paragraph"}],"openStart":1,"openEnd":1}}`)), "outside suggestions"},
		{"joining blocks", bob, steps([]byte(`{"stepType":"replace","from":17,"to":19}`)), "outside suggestions"},
		{"an insert hidden by its own insertion mark elsewhere", bob, steps(insertMarked(4, "q", "insertion", "bob-2"), insert(1, "!")), "outside suggestions"},
		{"a mark outside suggestions", bob, steps([]byte(`{"stepType":"addMark","from":4,"to":8,"mark":{"type":"strong"}}`)), "outside suggestions"},
	}
	for _, h := range hostile {
		before := mustGet(t, a, "d")
		_, err := h.who.submit(h.steps...)
		if !errors.Is(err, collab.ErrForbidden) || !strings.Contains(err.Error(), h.rule) {
			t.Errorf("%s: got %v, want a refusal naming %q", h.name, err, h.rule)
		}
		after := mustGet(t, a, "d")
		if after.Version != before.Version || !after.Doc.Eq(before.Doc) {
			t.Errorf("%s: the document changed from version %d to %d", h.name, before.Version, after.Version)
		}
	}
	// The same steps from an editor are accepted.
	editor := collab.Submission{Version: mustGet(t, a, "d").Version, Steps: steps(del(9, 11)), ClientID: collab.ClientID("33"), Author: "carol"}
	if _, err := a.Submit(context.Background(), "d", "", editor); err != nil {
		t.Fatalf("an editor removing alice's suggestion: %v", err)
	}

	// The record survives a reload, and another authority on the same
	// store sees it: bob still may not touch alice's deletion (id 2).
	b := newAuthority(t, st, collab.Config{})
	bob2 := suggester{b, "d", "bob", collab.ClientID("22")}
	if _, err := bob2.submit(markStep("removeMark", 10, 15, "deletion", 2)); !errors.Is(err, collab.ErrForbidden) {
		t.Fatalf("bob on another authority, stripping alice's deletion: got %v, want ErrForbidden", err)
	}
	if _, err := bob2.submit(insertMarked(4, "Q", "insertion", 1)); !errors.Is(err, collab.ErrForbidden) {
		t.Fatalf("bob on another authority, reusing alice's id 1: got %v, want ErrForbidden", err)
	}
	alice2 := suggester{b, "d", "alice", collab.ClientID("11")}
	if _, err := alice2.submit(markStep("removeMark", 10, 15, "deletion", 2)); err != nil {
		t.Fatalf("alice on another authority, removing her own deletion: %v", err)
	}
	if got, err := b.SuggestionIDs(context.Background(), "d", "bob"); err != nil || len(got) != 1 || got[0] != "bob-1" {
		t.Fatalf("SuggestionIDs(bob) = %v, %v; want [bob-1]", got, err)
	}
}

// TestSuggestOnlySchema refuses suggest-only steps on a schema without
// the suggestion marks.
func TestSuggestOnlySchema(t *testing.T) {
	a := newAuthority(t, nil, collab.Config{})
	mustGet(t, a, "d")
	_, err := a.Submit(context.Background(), "d", "", collab.Submission{Steps: steps(insert(1, "x")), ClientID: collab.ClientID("1"), Author: "bob", SuggestOnly: true})
	if !errors.Is(err, collab.ErrForbidden) || !strings.Contains(err.Error(), "suggestion marks") {
		t.Fatalf("got %v, want a refusal naming the suggestion marks", err)
	}
	if v := mustGet(t, a, "d").Version; v != 0 {
		t.Fatalf("version %d, want 0", v)
	}
}
