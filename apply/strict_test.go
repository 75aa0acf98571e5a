package apply

import (
	"errors"
	"strings"
	"testing"
)

// TestApplyStrict: documents that prosemirror-model's fromJSON and the
// steps accept although Node.check() refuses them pass by default and are
// refused with Strict, naming the document (-1) or the first step after
// which the document is invalid.
func TestApplyStrict(t *testing.T) {
	const heading = `{"type":"doc","content":[{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"a"}]}]}`
	const insert = `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"b"}]}}`
	const nested = `{"stepType":"replace","from":0,"to":0,"slice":{"content":[{"type":"paragraph","content":[{"type":"heading","content":[{"type":"text","text":"h"}]}]}]}}`
	const badMark = `{"stepType":"replace","from":0,"to":0,"slice":{"content":[{"type":"code_block","content":[{"type":"text","text":"c","marks":[{"type":"em"}]}]}]}}`
	tests := []struct {
		name, req string
		step      int
		kind      error
		message   string
	}{
		{"text at the top", `{"doc":{"type":"doc","content":[{"type":"text","text":"x"}]},"steps":[]}`,
			-1, ErrInvalidDoc, "Invalid content for node doc"},
		{"mark not allowed in a code block", `{"doc":{"type":"doc","content":[{"type":"code_block","content":[{"type":"text","text":"x","marks":[{"type":"strong"}]}]}]}}`,
			-1, ErrInvalidDoc, "code_block"},
		// A replace checks the content of the node it replaces in, not the
		// inside of the nodes its slice brings.
		{"a heading inside a paragraph", `{"doc":` + heading + `,"steps":[` + insert + `,` + nested + `,` + strings.Replace(insert, `1`, `6`, 2) + `]}`,
			1, ErrStepFailed, "Invalid content for node paragraph"},
		{"the last step", `{"doc":` + heading + `,"steps":[` + insert + `,` + nested + `]}`,
			1, ErrStepFailed, "Invalid content for node paragraph"},
		{"the first step", `{"doc":` + heading + `,"steps":[` + badMark + `,` + strings.Replace(insert, `1`, `4`, 2) + `]}`,
			0, ErrStepFailed, "code_block"},
	}
	lax := &Applier{Schemas: &Schemas{Default: "basic"}}
	strict := &Applier{Schemas: &Schemas{Default: "basic"}, Strict: true}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if out, f := answer(t, lax, tc.req); f != nil {
				t.Fatalf("without Strict: %s, want the steps applied as prosemirror-transform does", out)
			}
			out, f := answer(t, strict, tc.req)
			if f == nil {
				t.Fatalf("with Strict: %s, want a failure", out)
			}
			if f.Step != tc.step || !errors.Is(f, tc.kind) || !strings.Contains(f.Message, tc.message) {
				t.Errorf("with Strict: step %d, kind %v, %q; want step %d, kind %v, a message with %q",
					f.Step, f.Err, f.Message, tc.step, tc.kind, tc.message)
			}
		})
	}
	// A valid request is answered the same either way.
	req := `{"doc":` + heading + `,"steps":[` + insert + `,{"stepType":"attr","pos":0,"attr":"level","value":2}]}`
	a, fa := answer(t, lax, req)
	b, fb := answer(t, strict, req)
	if fa != nil || fb != nil || a != b {
		t.Errorf("valid request: %s / %s", a, b)
	}
}
