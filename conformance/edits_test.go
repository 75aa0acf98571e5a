package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/transform"
)

// TestEditsLive sends edits through POST /docs/{id}/edits (docs/edits.md)
// to the real binary while real editors type (long poll and WebSocket):
// a paragraph inserted before the first block, found by its path, and
// bold on the paragraph inserted before, found by its text, some of them
// from a read a few versions old. Every edit is answered 200, or 409 when
// an editor touched its target since the read, or 422 when an editor
// deleted its text, never anything else; the editors converge on the
// server's document at their version; the step log holds the accepted edits' steps under
// the server's client id, and replays to the server's document.
func TestEditsLive(t *testing.T) {
	node := editorsNode(t, "js/node_modules/ws")
	p := startDocsAPI(t)
	const id = "edits-live"
	start := editorsStart(t)
	p.must(t, "POST", "/docs", `{"id":"`+id+`","doc":`+string(start.AppendJSON(nil))+`}`, 201)

	edits := 1500
	if testing.Short() {
		edits = 400
	}
	cfg := editorsConfig{Editors: 6, WS: 3, Edits: edits, ReconnectEvery: 40, Seed: editorsSeed(t), Others: true}
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		steps    int64
		failures []string
	)
	done := make(chan struct{})
	sender := make(chan struct{})
	go func() {
		defer close(sender)
		last, lastAt := -1, int64(0) // the last note inserted, and the version after it
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			case <-time.After(25 * time.Millisecond):
			}
			status, body, err := p.call("GET", "/docs/"+id, "")
			var st collabDocState
			if err != nil || status != 200 || json.Unmarshal(body, &st) != nil {
				continue // the harness's checks tell about the server
			}
			base := st.Version
			if n%3 == 2 {
				base = max(0, base-5) // an older read: mapped, or refused when touched
			}
			req := fmt.Sprintf(`{"base":%d,"name":"Backend","edits":[
				{"op":"insert","target":{"block":{"path":[0]}},"at":"before","content":{"type":"paragraph","content":[{"type":"text","text":"server note %d"}]}}`, base, n)
			if last >= 0 && base >= lastAt {
				req += fmt.Sprintf(`,{"op":"addMark","target":{"text":{"find":"server note %d"}},"mark":{"type":"strong"}}`, last)
			}
			req += "]}"
			status, body, err = p.call("POST", "/docs/"+id+"/edits", req)
			var res struct{ Version, Steps int64 }
			mu.Lock()
			switch {
			case err != nil:
				failures = append(failures, fmt.Sprintf("edit %d: %v", n, err))
			case status == 200 && json.Unmarshal(body, &res) == nil:
				steps += res.Steps
				last, lastAt = n, res.Version
			case status == 409 || status == 422:
			case status == 410 && n%3 == 2: // the older read is past the history
			default:
				failures = append(failures, fmt.Sprintf("edit %d at %d: %d %s", n, base, status, clip(string(body))))
			}
			statuses[status]++
			mu.Unlock()
		}
	}()
	run := runEditors(t, node, p.base, []string{id}, cfg)
	close(done)
	<-sender
	for _, f := range failures {
		t.Error(f)
	}
	if statuses[200] < 5 {
		t.Fatalf("answers %v during the run: want at least 5 accepted edits", statuses)
	}
	// The editors ended together (the harness checks it), on the server's
	// document at their version: edits may have come after their end.
	final := getDocState(t, p.base+"/docs/"+id)
	for _, e := range run.editors {
		if at := p.docAt(t, id, e.Version); !bytes.Equal(e.Doc, at) {
			t.Errorf("editor %d: version %d, document %s", e.Editor, e.Version, firstDifference(e.Doc, at))
		}
	}
	log := p.stepLog(t, id)
	if int64(len(log)) != final.Version {
		t.Fatalf("%d steps in the log, the server is at version %d", len(log), final.Version)
	}
	doc := start
	var byServer int64
	for _, s := range log {
		if string(s.ClientID) == `"server"` {
			byServer++
		}
		step, err := transform.StepFromJSON(start.Type.Schema, s.Step)
		if err == nil {
			doc, err = step.Apply(doc)
		}
		if err != nil {
			t.Fatalf("step %d %s: %v", s.Version, clip(string(s.Step)), err)
		}
	}
	if byServer != steps {
		t.Errorf("%d steps of client \"server\" in the log, the accepted edits answered %d", byServer, steps)
	}
	if got := doc.AppendJSON(nil); !bytes.Equal(got, final.Doc) {
		t.Errorf("the replayed log differs from the server's document: %s", firstDifference(got, final.Doc))
	}
	t.Logf("edit answers %v (%d steps) while %d editors typed; version %d → %d", statuses, steps, cfg.Editors, run.summary.InitialVersion, final.Version)
}
