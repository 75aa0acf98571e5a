package apply

import (
	"errors"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

func TestSteps(t *testing.T) {
	basic, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := basic.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"hello"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	const insert = `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"ab"}]}}`
	const outside = `{"stepType":"replace","from":100,"to":100}`
	const unknown = `{"stepType":"nope"}`
	const nested = `{"stepType":"replace","from":0,"to":0,"slice":{"content":[{"type":"paragraph","content":[{"type":"heading","content":[{"type":"text","text":"h"}]}]}]}}`
	insert6 := strings.Replace(insert, "1", "6", 2)
	deep := `{"stepType":"replace","from":1,"to":1,"x":` + strings.Repeat("[", jsonscan.DefaultMaxDepth+1) + strings.Repeat("]", jsonscan.DefaultMaxDepth+1) + `}`
	closed := make(chan struct{})
	close(closed)
	tests := []struct {
		name    string
		steps   []string
		opts    StepOptions
		want    string // the resulting document's JSON, or
		index   int    // the failing step and
		kind    error  // its kind and
		message string // a part of its message
	}{
		{name: "none", want: `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"hello"}]}]}`},
		{name: "two", steps: []string{insert, insert},
			want: `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"ababhello"}]}]}`},
		{name: "does not apply", steps: []string{insert, outside}, index: 1, kind: ErrStepFailed, message: "step 1: "},
		{name: "does not decode", steps: []string{unknown, insert}, index: 0, kind: ErrStepFailed, message: "step 0: "},
		{name: "too deep", steps: []string{insert, insert, deep}, index: 2, kind: ErrTooDeep, message: "step 2: "},
		{name: "too large", steps: []string{insert, insert}, opts: StepOptions{MaxDocSize: 10}, index: 1, kind: ErrDocTooLarge,
			message: "step 1: document too large: content size 11, over the limit of 10 positions"},
		{name: "at the size limit", steps: []string{insert}, opts: StepOptions{MaxDocSize: 9},
			want: `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"abhello"}]}]}`},
		{name: "too many bytes", steps: []string{insert, insert}, opts: StepOptions{MaxDocBytes: 93}, index: 1, kind: ErrDocTooLarge,
			message: "step 1: document too large: its JSON is 94 bytes, over the limit of 93 bytes"},
		{name: "at the byte limit", steps: []string{insert, insert}, opts: StepOptions{MaxDocBytes: 94},
			want: `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"ababhello"}]}]}`},
		{name: "canceled", steps: []string{insert}, opts: StepOptions{Done: closed}, index: 0, kind: ErrCanceled, message: "step 0: request canceled"},
		{name: "lax", steps: []string{insert, nested, insert6},
			want: `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"h"}]}]},{"type":"paragraph","content":[{"type":"text","text":"ababhello"}]}]}`},
		{name: "strict", steps: []string{insert, nested, insert6}, opts: StepOptions{Strict: true}, index: 1, kind: ErrStepFailed,
			message: "step 1: the step makes the document invalid: Invalid content for node paragraph"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var visited []int
			visit := func(i int, step transform.Step, before, after *model.Node) error {
				if want, _ := step.Apply(before); want == nil || !want.Eq(after) {
					t.Errorf("visit %d: after is not the step applied to before", i)
				}
				visited = append(visited, i)
				return nil
			}
			got, err := Steps(doc, len(tc.steps), func(i int) []byte { return []byte(tc.steps[i]) }, tc.opts, visit)
			if tc.want != "" {
				if err != nil {
					t.Fatal(err)
				}
				if s := string(got.AppendJSON(nil)); s != tc.want {
					t.Errorf("got %s, want %s", s, tc.want)
				}
				if len(visited) != len(tc.steps) {
					t.Errorf("visited %v", visited)
				}
				return
			}
			var se *StepError
			if !errors.As(err, &se) || got != nil {
				t.Fatalf("got %v, %v; want a *StepError", got, err)
			}
			if se.Index != tc.index || !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.message) {
				t.Errorf("got step %d, kind %v, %q; want step %d, kind %v, a message with %q", se.Index, se.Kind, err, tc.index, tc.kind, tc.message)
			}
			if tc.opts.Strict {
				return // the steps visited before the check
			}
			if len(visited) != tc.index {
				t.Errorf("visited %v before failing at step %d", visited, tc.index)
			}
		})
	}
}

func TestStepsVisitError(t *testing.T) {
	basic, _ := schemas.Get("basic")
	doc, _ := basic.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph"}]}`))
	insert := []byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"ab"}]}}`)
	stop := errors.New("stop")
	_, err := Steps(doc, 3, func(int) []byte { return insert }, StepOptions{}, func(i int, _ transform.Step, _, _ *model.Node) error {
		if i == 1 {
			return stop
		}
		return nil
	})
	var se *StepError
	if !errors.As(err, &se) || se.Index != 1 || !errors.Is(err, ErrStepFailed) || !errors.Is(err, stop) {
		t.Errorf("got %v, want step 1 failing with stop", err)
	}
	if errors.Is(err, jsonscan.ErrTooDeep) {
		t.Errorf("%v is ErrTooDeep", err)
	}
}
