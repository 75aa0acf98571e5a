package server

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/collab"
)

// TestMaxDocBytes: the doubling steps (replaces with from > to, each
// doubling the document; 23 of them make 8 M characters, within
// --max-doc-size) are refused with 413 once the document's JSON would go
// over MaxDocBytes, by the apply endpoint and by the collab API alike;
// the collab document is unchanged.
func TestMaxDocBytes(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{})
	status, body := e.request(t, "POST", "/v1/apply", string(reqtest.DoublingRequest(23)))
	if status != 413 || !strings.Contains(body, `"step":21`) || !strings.Contains(body, "over the limit of 4194304 bytes") {
		t.Fatalf("apply: %d %.300s", status, body)
	}
	e.mustPost(t, "d", `{"version":0,"clientID":1,"steps":[`+insert(1, "x")+`]}`)
	before := e.mustGet(t, "/docs/d")
	submission := `{"version":1,"clientID":1,"steps":[` + string(bytes.Join(reqtest.DoublingSteps(23), []byte(","))) + `]}`
	status, body = e.request(t, "POST", "/docs/d/events", submission)
	if status != 413 || !strings.Contains(body, "document bytes (JSON) over the limit: 4194389 > 4194304") {
		t.Fatalf("collab: %d %.300s", status, body)
	}
	if after := e.mustGet(t, "/docs/d"); after != before {
		t.Fatalf("the refused submission changed the document: %.200s", after)
	}
}
