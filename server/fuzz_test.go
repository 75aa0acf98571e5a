package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
)

// FuzzApplyHandler sends random bodies to the apply endpoint: no answer
// is a 5xx or a panic, every answer is JSON with the right headers, and a
// document answered reads back to the same JSON.
func FuzzApplyHandler(f *testing.F) {
	for _, seed := range []string{
		reqtest.Seed,
		`{"doc":{"type":"doc"}}`,
		`{"schema":"basic","doc":` + basicDoc + `,"steps":[{"stepType":"replace","from":2,"to":4}]}`,
		`{"doc":` + basicDoc + `,"steps":[{"stepType":"addMark","mark":{"type":"em"},"from":1,"to":4}],"schema":"basic"}`,
		`{"schema":"basic","doc":` + basicDoc + `,"steps":[{"stepType":"replaceAround","from":0,"to":8,"gapFrom":0,"gapTo":8,"insert":1,"slice":{"content":[{"type":"blockquote"}]},"structure":true}]}`,
		`{"schema":"basic","doc":{"type":"doc","content":[{"type":"heading","attrs":{"level":2}}]},"steps":[{"stepType":"attr","pos":0,"attr":"level","value":3},{"stepType":"docAttr","attr":"x","value":1}]}`,
		`{"doc":{"type":"doc","content":[{"type":"text","text":"Hello"}]},"steps":[{"stepType":"replace","from":5,"to":0},{"stepType":"replace","from":10,"to":0}]}`,
		`{"doc":{"type":"doc"},"steps":[{"stepType":"replace","from":3,"to":3}]}`,
		`{"doc":{"type":"doc"},"steps":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
		`{"doc":5}`, `[]`, `{"doc":`, ``, `{"doc":{"type":"doc"},"schema":"nope"}`,
		`{"doc":{"type":"doc","content":[{"type":"text","text":"\ud800 \u00e9 \u2028"}]}}`,
	} {
		f.Add([]byte(seed))
	}
	s, logs := newServer(f, Config{Limits: Limits{MaxBodyBytes: 1 << 16, MaxDepth: 32}, ApplyLimits: apply.Limits{MaxSteps: 50, MaxDocSize: 5000}})
	basic, _ := schemas.Get("basic")
	text, _ := schemas.Get("text")
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", "/v1/apply", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		out := w.Body.Bytes()
		checkAnswer(t, w.Code, w.Header(), out)
		if w.Code >= 500 {
			t.Fatalf("status %d: %s\nlog: %s", w.Code, out, logs)
		}
		if w.Code != http.StatusOK {
			return
		}
		// The answer's document reads back to the same JSON, with the
		// request's schema (one of the built-ins).
		doc := out[len(`{"doc":`) : len(out)-1]
		for _, sc := range []*model.Schema{basic, text} {
			if n, err := sc.NodeFromJSON(doc); err == nil && bytes.Equal(n.AppendJSON(nil), doc) {
				return
			}
		}
		t.Fatalf("answer %s does not read back with either built-in schema", out)
	})
}
