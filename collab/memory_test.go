package collab_test

import (
	"errors"
	"testing"

	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/collab"
)

// TestMaxDocBytes: a submission of replace steps with from > to, each
// doubling the document, is refused with a LimitError once the JSON would
// go over MaxDocBytes (its content size is within MaxDocSize), and changes
// nothing.
func TestMaxDocBytes(t *testing.T) {
	a := newAuthority(t, nil, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Version: 0, Steps: steps(insert(1, "x"))})
	before := mustGet(t, a, "d")
	_, err := a.Submit(t.Context(), "d", "", collab.Submission{Version: 1, Steps: reqtest.DoublingSteps(23), ClientID: collab.ClientID("1")})
	var le *collab.LimitError
	if !errors.As(err, &le) || le.What != "document bytes (JSON)" || le.Limit != collab.DefaultMaxDocBytes || le.Value != 4194389 {
		t.Fatalf("the doubling steps: %v", err)
	}
	after := mustGet(t, a, "d")
	if after.Version != 1 || string(after.DocJSON) != string(before.DocJSON) {
		t.Fatalf("the refused submission changed the document: version %d, %.100s", after.Version, after.DocJSON)
	}
	// A new document over the limit is refused too.
	small := newAuthority(t, nil, collab.Config{MaxDocBytes: 50})
	doc := mustDoc(t, "basic", reqtest.DoublingDoc)
	if err := small.Create(t.Context(), "e", "basic", doc); !errors.As(err, &le) || le.What != "document bytes (JSON)" {
		t.Fatalf("Create over MaxDocBytes: %v", err)
	}
}
