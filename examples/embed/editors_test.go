package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// harness is the real-editors harness of the conformance suite (see its
// doc comment), whose WebSocket editors run the demo pages' client.
const harness = "../../conformance/js/collab-editors.mjs"

// harnessEditor is one editor's line of the harness's output (the fields
// checked).
type harnessEditor struct {
	Editor    int             `json:"editor"`
	DocID     string          `json:"docID"`
	Transport string          `json:"transport"`
	Version   int64           `json:"version"`
	Sendable  bool            `json:"sendable"`
	Doc       json.RawMessage `json:"doc"`
}

// harnessSummary is the harness's last line (the fields checked).
type harnessSummary struct {
	Edits         int                                           `json:"edits"`
	StepsAccepted int64                                         `json:"stepsAccepted"`
	StepsInDoubt  int64                                         `json:"stepsInDoubt"`
	Diverged      []int                                         `json:"diverged"`
	Error         *string                                       `json:"error"`
	WS            struct{ Editors, Acks, Drops, Resumes int64 } `json:"ws"`
}

// TestEditorsUnderPrefix runs the real-editors harness against the app,
// at URL/collab: 6 editors on one document, 3 of them over the WebSocket
// (dropping their connections now and then), the others over long polls.
// Every editor must end with the server's document at the server's
// version. It skips without node or the harness's npm packages, unless
// PMA_REQUIRE_NODE=1 makes that a failure. The harness's editors insert
// images, so the app runs with AllowImages (BeforeSubmit still runs on
// every submission).
func TestEditorsUnderPrefix(t *testing.T) {
	skip := func(why string) {
		t.Helper()
		if os.Getenv("PMA_REQUIRE_NODE") == "1" {
			t.Fatalf("%s (PMA_REQUIRE_NODE=1)", why)
		}
		t.Skip(why + "; set PMA_REQUIRE_NODE=1 to fail instead")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("no node on PATH")
	}
	for _, need := range []string{harness, "../../conformance/js/node_modules/ws", "../../web/src/client.js"} {
		if _, err := os.Stat(need); err != nil {
			skip(fmt.Sprintf("%v (npm ci in conformance/js)", err))
		}
	}
	seed := uint64(time.Now().UnixNano()) % (1 << 32)
	if s := os.Getenv("PMA_EDITORS_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 53); err != nil {
			t.Fatalf("PMA_EDITORS_SEED=%q: %v", s, err)
		}
	}
	edits := 1200
	if testing.Short() {
		edits = 300
	}
	const docID, editors, wsEditors = "embedded", 6, 3

	ts := startApp(t, appConfig{AllowImages: true})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, harness, "--url", ts.URL+"/collab", "--doc", docID,
		"--editors", strconv.Itoa(editors), "--ws", strconv.Itoa(wsEditors), "--edits", strconv.Itoa(edits),
		"--reconnect-every", "25", "--seed", strconv.FormatUint(seed, 10))
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("harness (seed %d) timed out\n%s", seed, lastLines(stderr.String(), 30))
	}
	if runErr != nil {
		t.Errorf("harness (seed %d): %v\n%s", seed, runErr, lastLines(stderr.String(), 30))
	}

	var lines []harnessEditor
	var summary *harnessSummary
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte(`{"summary":`)) {
			var s struct{ Summary harnessSummary }
			if err := json.Unmarshal(line, &s); err != nil {
				t.Fatalf("summary line: %v", err)
			}
			summary = &s.Summary
			continue
		}
		var e harnessEditor
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("editor line: %v: %.200s", err, line)
		}
		lines = append(lines, e)
	}
	if summary == nil {
		t.Fatalf("harness (seed %d): no summary\n%s", seed, lastLines(stderr.String(), 30))
	}
	if summary.Error != nil || len(summary.Diverged) > 0 {
		t.Errorf("harness (seed %d): error %v, diverged editors %v", seed, summary.Error, summary.Diverged)
	}
	if summary.Edits != edits || summary.StepsAccepted <= 0 {
		t.Errorf("summary: %d edits (want %d), %d steps accepted", summary.Edits, edits, summary.StepsAccepted)
	}
	if summary.WS.Editors != wsEditors || summary.WS.Acks <= 0 || summary.WS.Drops <= 0 || summary.WS.Resumes <= 0 {
		t.Errorf("summary of the WebSocket editors: %+v, want %d editors with acks, drops and resumes", summary.WS, wsEditors)
	}

	final := getDoc(t, ts.URL, docID)
	// The document was new: the server's versions are the editors' steps.
	if final.Version < summary.StepsAccepted || final.Version > summary.StepsAccepted+summary.StepsInDoubt {
		t.Errorf("server at version %d; %d steps accepted, %d in doubt", final.Version, summary.StepsAccepted, summary.StepsInDoubt)
	}
	ws := 0
	for _, e := range lines {
		if e.Transport == "ws" {
			ws++
		}
		if e.DocID != docID || e.Version != final.Version || e.Sendable || !bytes.Equal(e.Doc, final.Doc) {
			t.Errorf("editor %d (%s) of %s: version %d, sendable %t, doc equal to the server's %t; the server is at %d",
				e.Editor, e.Transport, e.DocID, e.Version, e.Sendable, bytes.Equal(e.Doc, final.Doc), final.Version)
		}
	}
	if len(lines) != editors || ws != wsEditors {
		t.Errorf("%d editors, %d over the WebSocket; want %d, %d", len(lines), ws, editors, wsEditors)
	}
	t.Logf("seed %d: %d editors (%d WebSocket), %d edits, %d steps accepted, the document at version %d",
		seed, len(lines), ws, summary.Edits, summary.StepsAccepted, final.Version)
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := bytes.Split([]byte(s), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
