package collab_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestComments runs one document through a sequence of submissions and
// checks its comments, comment version and comment events after each.
// The document starts as "hello world" (content size 13) with comments 1
// on "hello" (1-6) and 2 on "world" (7-12).
func TestComments(t *testing.T) {
	type c = collab.Comment
	create := func(id int64, from, to int, text string) collab.CommentEvent {
		return collab.CommentEvent{Type: "create", ID: id, From: from, To: to, Text: text}
	}
	remove := func(id int64) collab.CommentEvent { return collab.CommentEvent{Type: "delete", ID: id} }
	tests := []struct {
		name     string
		steps    [][]byte
		events   []collab.CommentEvent
		doc      string
		comments []collab.Comment
		version  int64 // comment version after
		appended bool  // the store got an append
	}{
		{
			name:     "insert before: both move",
			steps:    steps(insert(1, "XX")),
			doc:      "XXhello world",
			comments: []c{{From: 3, To: 8, Text: "hello", ID: 1, Author: ""}, {From: 9, To: 14, Text: "world", ID: 2, Author: ""}},
			version:  2, appended: true,
		},
		{
			name:     "insert at the end of a comment stays outside it",
			steps:    steps(insert(8, "Y")),
			doc:      "XXhelloY world",
			comments: []c{{From: 3, To: 8, Text: "hello", ID: 1, Author: ""}, {From: 10, To: 15, Text: "world", ID: 2, Author: ""}},
			version:  2, appended: true,
		},
		{
			name:     "insert at the start of a comment stays outside it",
			steps:    steps(insert(3, "Z")),
			doc:      "XXZhelloY world",
			comments: []c{{From: 4, To: 9, Text: "hello", ID: 1, Author: ""}, {From: 11, To: 16, Text: "world", ID: 2, Author: ""}},
			version:  2, appended: true,
		},
		{
			name:     "deleting a comment's range drops it without an event",
			steps:    steps(del(10, 16)),
			doc:      "XXZhelloY",
			comments: []c{{From: 4, To: 9, Text: "hello", ID: 1, Author: ""}},
			version:  2, appended: true,
		},
		{
			name:     "partial deletion shrinks",
			steps:    steps(del(2, 6)),
			doc:      "Xllo" + "Y",
			comments: []c{{From: 2, To: 5, Text: "hello", ID: 1, Author: ""}},
			version:  2, appended: true,
		},
		{
			name:     "comment-only creation",
			events:   []collab.CommentEvent{create(3, 1, 3, "new")},
			doc:      "XlloY",
			comments: []c{{From: 2, To: 5, Text: "hello", ID: 1, Author: ""}, {From: 1, To: 3, Text: "new", ID: 3, Author: ""}},
			version:  3, appended: true,
		},
		{
			name:     "creation refers to the document after the steps",
			steps:    steps(insert(1, "ab")),
			events:   []collab.CommentEvent{create(4, 1, 3, "ab")},
			doc:      "abXlloY",
			comments: []c{{From: 4, To: 7, Text: "hello", ID: 1, Author: ""}, {From: 3, To: 5, Text: "new", ID: 3, Author: ""}, {From: 1, To: 3, Text: "ab", ID: 4, Author: ""}},
			version:  4, appended: true,
		},
		{
			name:     "deleting an unknown id changes nothing",
			events:   []collab.CommentEvent{remove(99)},
			doc:      "abXlloY",
			comments: []c{{From: 4, To: 7, Text: "hello", ID: 1, Author: ""}, {From: 3, To: 5, Text: "new", ID: 3, Author: ""}, {From: 1, To: 3, Text: "ab", ID: 4, Author: ""}},
			version:  4,
		},
		{
			name:     "creating an existing comment again with its text changes nothing",
			events:   []collab.CommentEvent{create(3, 1, 3, "new"), create(4, 1, 2, "ab")},
			doc:      "abXlloY",
			comments: []c{{From: 4, To: 7, Text: "hello", ID: 1, Author: ""}, {From: 3, To: 5, Text: "new", ID: 3, Author: ""}, {From: 1, To: 3, Text: "ab", ID: 4, Author: ""}},
			version:  4,
		},
		{
			name:     "steps that move no comment",
			steps:    steps(insert(8, "!")),
			doc:      "abXlloY!",
			comments: []c{{From: 4, To: 7, Text: "hello", ID: 1, Author: ""}, {From: 3, To: 5, Text: "new", ID: 3, Author: ""}, {From: 1, To: 3, Text: "ab", ID: 4, Author: ""}},
			version:  4, appended: true,
		},
		{
			name:     "delete, and delete again in one submission",
			events:   []collab.CommentEvent{remove(3), remove(3), remove(1)},
			doc:      "abXlloY!",
			comments: []c{{From: 1, To: 3, Text: "ab", ID: 4, Author: ""}},
			version:  6, appended: true,
		},
		{
			name:     "create and delete in one submission",
			events:   []collab.CommentEvent{create(5, 2, 4, "tmp"), remove(5), create(6, 1, 2, "\"<&>\"\u2028")},
			doc:      "abXlloY!",
			comments: []c{{From: 1, To: 3, Text: "ab", ID: 4, Author: ""}, {From: 1, To: 2, Text: "\"<&>\"\u2028", ID: 6}},
			version:  9, appended: true,
		},
	}
	ctx := context.Background()
	fs := &faultStore{Store: memstore.New()}
	// Creations are stamped with the Authority's clock.
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := newAuthority(t, fs, collab.Config{Now: func() time.Time { return now }})
	mustSubmit(t, a, "d", collab.Submission{
		Steps:    steps(insert(1, "hello world")),
		Comments: []collab.CommentEvent{create(1, 1, 6, "hello"), create(2, 7, 12, "world")},
	})
	version := int64(1)
	for _, tt := range tests {
		appends := fs.appends.Load()
		r, err := a.Submit(ctx, "d", "", collab.Submission{Version: version, Steps: tt.steps, ClientID: collab.ClientID("1"), Comments: tt.events})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		version += int64(len(tt.steps))
		if r.Version != version || r.CommentVersion != tt.version {
			t.Errorf("%s: result %+v, want version %d, comment version %d", tt.name, r, version, tt.version)
		}
		st := mustGet(t, a, "d")
		if string(st.DocJSON) != paragraph(tt.doc) {
			t.Errorf("%s: doc %s, want %s", tt.name, st.DocJSON, paragraph(tt.doc))
		}
		if !equalComments(st.Comments, tt.comments) || st.CommentVersion != tt.version {
			t.Errorf("%s: comments %v at %d, want %v at %d", tt.name, st.Comments, st.CommentVersion, tt.comments, tt.version)
		}
		if got := fs.appends.Load() - appends; got != map[bool]int64{false: 0, true: 1}[tt.appended] {
			t.Errorf("%s: %d appends", tt.name, got)
		}
	}

	// Events report creations with the comment's current range and text,
	// leave out deleted comments' creations, and report deletions.
	eventTests := []struct {
		since int64
		want  string
	}{
		{0, `{"type":"create","id":4,"text":"ab","from":1,"to":3,"time":"2026-01-02T03:04:05Z"},{"type":"delete","id":3},{"type":"delete","id":1},{"type":"delete","id":5},{"type":"create","id":6,"text":"\"<&>\"` + "\u2028" + `","from":1,"to":2,"time":"2026-01-02T03:04:05Z"}`},
		{3, `{"type":"create","id":4,"text":"ab","from":1,"to":3,"time":"2026-01-02T03:04:05Z"},{"type":"delete","id":3},{"type":"delete","id":1},{"type":"delete","id":5},{"type":"create","id":6,"text":"\"<&>\"` + "\u2028" + `","from":1,"to":2,"time":"2026-01-02T03:04:05Z"}`},
		{4, `{"type":"delete","id":3},{"type":"delete","id":1},{"type":"delete","id":5},{"type":"create","id":6,"text":"\"<&>\"` + "\u2028" + `","from":1,"to":2,"time":"2026-01-02T03:04:05Z"}`},
		{8, `{"type":"create","id":6,"text":"\"<&>\"` + "\u2028" + `","from":1,"to":2,"time":"2026-01-02T03:04:05Z"}`},
		{9, ``},
	}
	for _, tt := range eventTests {
		ev, err := a.Events(ctx, "d", "", version, tt.since)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		for i, e := range ev.Comment {
			if i > 0 {
				got = append(got, ',')
			}
			got = e.AppendJSON(got)
		}
		if string(got) != tt.want || ev.CommentVersion != 9 {
			t.Errorf("comment events after %d:\n got %s (version %d)\nwant %s", tt.since, got, ev.CommentVersion, tt.want)
		}
	}
}

// TestCommentHistory checks that comment events older than the kept ones
// answer ErrHistoryGone.
func TestCommentHistory(t *testing.T) {
	a := newAuthority(t, nil, collab.Config{})
	mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello"))})
	for round := range 2 {
		n := 1000
		if round == 1 {
			n = 1
		}
		var events []collab.CommentEvent
		for i := range n {
			events = append(events, collab.CommentEvent{Type: "create", ID: int64(round*1000 + i), From: 1, To: 2, Text: fmt.Sprint(i)})
		}
		mustSubmit(t, a, "d", collab.Submission{Version: 1, Comments: events})
	}
	ctx := context.Background()
	if _, err := a.Events(ctx, "d", "", 1, 0); err != collab.ErrHistoryGone {
		t.Fatalf("events after comment version 0 of 1001: %v, want ErrHistoryGone", err)
	}
	ev, err := a.Events(ctx, "d", "", 1, 1)
	if err != nil || len(ev.Comment) != 1000 || ev.Comment[0].ID != 1 || ev.Comment[999].ID != 1000 {
		t.Fatalf("events after comment version 1: %d events, %v", len(ev.Comment), err)
	}
}
