package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestApplyStrict: with Config.Strict the apply endpoint refuses (422) a
// document or steps that fail Node.check(), which it answers by default as
// the node server does.
func TestApplyStrict(t *testing.T) {
	const nested = `{"stepType":"replace","from":0,"to":0,"slice":{"content":[{"type":"paragraph","content":[{"type":"heading","content":[{"type":"text","text":"h"}]}]}]}}`
	tests := []struct {
		name, body string
		step       int
		message    string
	}{
		{"document", `{"doc":{"type":"doc","content":[{"type":"text","text":"x"}]}}`, -1, "Invalid content for node doc"},
		{"step", `{"doc":` + basicDoc + `,"steps":[{"stepType":"replace","from":2,"to":4},` + nested + `]}`, 1, "Invalid content for node paragraph"},
	}
	for _, strict := range []bool{false, true} {
		s, _ := newServer(t, Config{DefaultSchema: "basic", Strict: strict})
		for _, tc := range tests {
			req := httptest.NewRequest("POST", "/v1/apply", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			body, _ := io.ReadAll(rec.Body)
			step, msg := checkAnswer(t, rec.Code, rec.Header(), body)
			switch {
			case !strict && rec.Code != http.StatusOK:
				t.Errorf("%s without Strict: %d %s, want 200", tc.name, rec.Code, body)
			case strict && (rec.Code != http.StatusUnprocessableEntity || step != tc.step || !strings.Contains(msg, tc.message)):
				t.Errorf("%s with Strict: %d %s, want 422 at step %d with %q", tc.name, rec.Code, body, tc.step, tc.message)
			}
		}
	}
}
