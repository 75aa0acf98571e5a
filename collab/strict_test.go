package collab_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

// TestStrict: steps that prosemirror-transform applies although the
// document they make fails Node.check() (a replace checks the node it
// replaces in, not the inside of the nodes its slice brings) are accepted
// by default and refused with Config.Strict, naming the first such step,
// with nothing changed; an invalid initial document is refused by Create.
func TestStrict(t *testing.T) {
	ctx := context.Background()
	nested := []byte(`{"stepType":"replace","from":0,"to":0,"slice":{"content":[{"type":"paragraph","content":[{"type":"heading","content":[{"type":"text","text":"h"}]}]}]}}`)
	sub := collab.Submission{Version: 0, Steps: steps(insert(1, "a"), nested, insert(6, "b")), ClientID: collab.ClientID("1")}

	lax := newAuthority(t, nil, collab.Config{})
	if r, err := lax.Submit(ctx, "d", "u", sub); err != nil || r.Version != 3 {
		t.Fatalf("without Strict: %+v, %v; want the steps accepted as prosemirror-transform applies them", r, err)
	}

	strict := newAuthority(t, nil, collab.Config{Strict: true})
	before := mustGet(t, strict, "d")
	_, err := strict.Submit(ctx, "d", "u", sub)
	var se *transform.StepError
	if !errors.As(err, &se) || se.Index != 1 || !strings.Contains(err.Error(), "Invalid content for node paragraph") {
		t.Fatalf("with Strict: %v; want step 1 refused for the paragraph's content", err)
	}
	after := mustGet(t, strict, "d")
	if after.Version != before.Version || string(after.DocJSON) != string(before.DocJSON) {
		t.Fatalf("a refused submission changed the document: version %d, %s", after.Version, after.DocJSON)
	}
	// Valid steps still go through.
	if r, err := strict.Submit(ctx, "d", "u", collab.Submission{Version: 0, Steps: steps(insert(1, "ok")), ClientID: collab.ClientID("1")}); err != nil || r.Version != 1 {
		t.Fatalf("valid steps with Strict: %+v, %v", r, err)
	}

	basic, _ := schemas.Get("basic")
	bad, err := basic.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"text","text":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lax.Create(ctx, "top-text", "basic", bad); err != nil {
		t.Errorf("Create without Strict: %v", err)
	}
	if _, err := strict.Create(ctx, "top-text", "basic", bad); !errors.Is(err, collab.ErrInvalidRequest) || !strings.Contains(err.Error(), "Invalid content for node doc") {
		t.Errorf("Create with Strict: %v, want an invalid request naming the doc's content", err)
	}
}
