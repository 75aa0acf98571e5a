package changeset

import (
	"errors"
	"slices"
	"testing"

	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

func TestMerge(t *testing.T) {
	ins := func(from, to int, who string) Change[string] {
		return Change[string]{FromA: from, ToA: from, FromB: from, ToB: to, Inserted: []Span[string]{{to - from, who}}}
	}
	del := func(from, to int, who string) Change[string] {
		return Change[string]{FromA: from, ToA: to, FromB: from, ToB: from, Deleted: []Span[string]{{to - from, who}}}
	}
	tests := []struct {
		name string
		x, y []Change[string]
		want []Change[string]
	}{
		{"inserted then deleted drops out", []Change[string]{ins(0, 2, "a")}, []Change[string]{del(0, 2, "b")}, nil},
		{"adjacent insertions of one author join", []Change[string]{ins(0, 2, "a")}, []Change[string]{ins(2, 3, "a")},
			[]Change[string]{ins(0, 3, "a")}},
		{"of two authors they do not", []Change[string]{ins(0, 2, "a")}, []Change[string]{ins(2, 3, "b")},
			[]Change[string]{{FromA: 0, ToA: 0, FromB: 0, ToB: 3, Inserted: []Span[string]{{2, "a"}, {1, "b"}}}}},
		{"apart, y is shifted back", []Change[string]{ins(0, 2, "a")}, []Change[string]{del(5, 6, "b")},
			[]Change[string]{ins(0, 2, "a"), {FromA: 3, ToA: 4, FromB: 5, ToB: 5, Deleted: []Span[string]{{1, "b"}}}}},
	}
	for _, tt := range tests {
		got, err := Merge(tt.x, tt.y, nil)
		if err != nil || !slices.EqualFunc(got, tt.want, equalChange) {
			t.Errorf("%s: Merge = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
}

func equalChange(a, b Change[string]) bool {
	return a.FromA == b.FromA && a.ToA == b.ToA && a.FromB == b.FromB && a.ToB == b.ToB &&
		slices.Equal(a.Deleted, b.Deleted) && slices.Equal(a.Inserted, b.Inserted)
}

// TestInconsistent checks that changes whose spans do not cover them
// give ErrInconsistent, not a panic, where prosemirror-changeset throws.
func TestInconsistent(t *testing.T) {
	schema, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := schema.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"abcdef"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	// An insertion of 3 whose spans cover 1, then a step deleting part of it.
	short := Change[string]{FromA: 1, ToA: 1, FromB: 1, ToB: 4, Inserted: []Span[string]{{1, "a"}}}
	set := Create(doc, Options[string]{Changes: []Change[string]{short}})
	step := &transform.ReplaceStep{From: 3, To: 4}
	next, err := step.Apply(doc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.AddSteps(next, []*transform.StepMap{step.GetMap()}, []string{"b"}); !errors.Is(err, ErrInconsistent) {
		t.Errorf("AddSteps on short spans: %v, want ErrInconsistent", err)
	}
	if _, err := SimplifyChanges([]Change[string]{{FromA: 1, ToA: 3, FromB: 1, ToB: 3}}, doc); !errors.Is(err, ErrInconsistent) {
		t.Errorf("SimplifyChanges on a change without spans: %v, want ErrInconsistent", err)
	}
}

// TestAddStepsKeepsSet checks that AddSteps leaves the set it is called
// on as it was.
func TestAddStepsKeepsSet(t *testing.T) {
	schema, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := schema.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"abcdef"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	set := Create(doc, Options[string]{})
	var sets []*ChangeSet[string]
	var before [][]Change[string]
	for i, pos := range []int{2, 3, 2, 1} {
		step := &transform.ReplaceStep{From: pos, To: pos + 1}
		next, err := step.Apply(doc)
		if err != nil {
			t.Fatal(err)
		}
		doc = next
		set, err = set.AddSteps(doc, []*transform.StepMap{step.GetMap()}, []string{[]string{"a", "b"}[i%2]})
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, set)
		before = append(before, slices.Clone(set.Changes()))
	}
	for i, s := range sets {
		if !slices.EqualFunc(s.Changes(), before[i], equalChange) {
			t.Errorf("set %d changed after later AddSteps: %v, was %v", i, s.Changes(), before[i])
		}
	}
	if got := len(set.Changes()); got == 0 {
		t.Errorf("four deletions gave no changes")
	}
}
