package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
)

// TestCollabGetAtCommentCap fills a document's comments up to the default
// collab.Config.MaxCommentBytes and checks that GET /docs/{id} answers it
// whole over a real connection, with a Content-Length, and that one more
// comment is refused with 413 naming the flag.
func TestCollabGetAtCommentCap(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{})
	ctx := context.Background()
	r, err := e.auth.Submit(ctx, "c", "", collab.Submission{Steps: [][]byte{[]byte(insert(1, strings.Repeat("x", 100)))}, ClientID: collab.ClientID("1")})
	if err != nil {
		t.Fatal(err)
	}
	// Each comment counts its text as JSON (1,002 bytes, the quotes
	// included) and 192 bytes: 878 of them are 1,048,332 bytes, under
	// 1 MiB (1,048,576), and one more is over.
	text := strings.Repeat("t", 1000)
	var events []collab.CommentEvent
	for i := range 878 {
		events = append(events, collab.CommentEvent{Type: collab.CommentCreate, ID: int64(i + 1), From: 1 + i%100, To: 2 + i%100, Text: text})
	}
	if _, err := e.auth.Submit(ctx, "c", "", collab.Submission{Version: r.Version, Comments: events}); err != nil {
		t.Fatal(err)
	}
	status, answer := e.request(t, "POST", "/docs/c/events",
		`{"version":1,"steps":[],"clientID":0,"comment":[{"type":"create","id":1000,"from":1,"to":2,"text":"`+text+`"}]}`)
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(answer, "Limits.MaxCommentBytes") {
		t.Errorf("a comment over the cap: %d %s, want 413 naming Limits.MaxCommentBytes", status, answer)
	}

	addr, _ := serving(t, e.s)
	resp, err := http.Get("http://" + addr + "/docs/c")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if cl := resp.Header.Get("Content-Length"); resp.StatusCode != 200 || cl != strconv.Itoa(len(body)) {
		t.Fatalf("GET: %d, Content-Length %q for %d bytes", resp.StatusCode, cl, len(body))
	}
	var doc struct {
		Comments []struct {
			ID   int64  `json:"id"`
			Text string `json:"text"`
		} `json:"comments"`
		CommentVersion int64 `json:"commentVersion"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("GET answered %d bytes that are not the document: %v", len(body), err)
	}
	if len(doc.Comments) != 878 || doc.CommentVersion != 878 || doc.Comments[877].Text != text {
		t.Errorf("GET answered %d comments, comment version %d", len(doc.Comments), doc.CommentVersion)
	}
	if len(body) > 1<<20+10<<10 {
		t.Errorf("GET answered %d bytes, more than the comment cap and the document", len(body))
	}
}
