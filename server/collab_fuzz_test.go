package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
)

// FuzzCollabHandler sends random bodies to POST /docs/{id}/events: no
// answer is a 5xx or a panic, every answer is JSON with the right
// headers, an accepted submission answers the document's new versions,
// and a rejected one changes nothing.
func FuzzCollabHandler(f *testing.F) {
	for _, seed := range []string{
		`{"version":0,"steps":[` + insert(1, "ab") + `],"clientID":4294967295,"comment":[]}`,
		`{"version":0,"steps":[],"clientID":0,"comment":[{"type":"create","id":1,"from":1,"to":3,"text":"c"}]}`,
		`{"version":0,"steps":[],"clientID":0,"comment":[{"type":"delete","id":1}]}`,
		`{"version":0,"steps":[{"stepType":"addMark","mark":{"type":"em"},"from":1,"to":3}],"clientID":"tab"}`,
		`{"version":0,"steps":[{"stepType":"replaceAround","from":0,"to":4,"gapFrom":0,"gapTo":4,"insert":1,"slice":{"content":[{"type":"blockquote"}]},"structure":true}],"clientID":7}`,
		`{"version":0,"steps":[{"stepType":"replace","from":3,"to":1}],"clientID":1}`,
		`{"version":0,"steps":[{"stepType":"nope"}],"clientID":1}`,
		`{"version":1e300}`, `{"version":-0}`, `{"version":0,"clientID":{}}`, `{"version":0,"comment":[{}]}`,
		`{"version":0,"steps":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
		`[]`, `{"version":`, ``, `{"version":0,"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"\ud800 é \u2028"}]}}],"clientID":"\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	e := newCollab(f, Config{Limits: Limits{MaxBodyBytes: 1 << 16, MaxDepth: 32}}, collab.Config{Limits: collab.Limits{Limits: apply.Limits{MaxSteps: 50, MaxDocSize: 5000}}})
	f.Fuzz(func(t *testing.T, body []byte) {
		before := e.mustGet(t, "/docs/f")
		w := e.serve(defaultIP, "POST", "/docs/f/events", string(body), nil)
		checkAnswer(t, w.Code, w.Header(), w.Body.Bytes())
		if w.Code >= 500 {
			t.Fatalf("status %d: %s\nlog: %s", w.Code, w.Body, e.logs)
		}
		after := e.mustGet(t, "/docs/f")
		if w.Code != http.StatusOK {
			if after != before {
				t.Fatalf("rejected with %d %s, but the document changed:\nbefore %s\nafter  %s", w.Code, w.Body, before, after)
			}
			return
		}
		var st struct{ Version, CommentVersion int64 }
		if err := json.Unmarshal([]byte(after), &st); err != nil {
			t.Fatal(err)
		}
		want := `{"version":` + strconv.FormatInt(st.Version, 10) + `,"commentVersion":` + strconv.FormatInt(st.CommentVersion, 10) + `}`
		if w.Body.String() != want {
			t.Fatalf("answer %s, but the document is at %s", w.Body, want)
		}
	})
}
