package collab

import (
	"reflect"
	"testing"
	"time"
)

// TestThreadMeta checks that the comment base keeps threads (appendMeta,
// decodeMeta) with their sizes, and that a base and entries written
// before threads existed still decode.
func TestThreadMeta(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var l commentLog
	l, _, err := l.apply([]CommentEvent{
		{Type: CommentCreate, ID: 1, From: 1, To: 3, Text: "root", Author: "alice", Time: now},
		{Type: CommentReply, ID: 2, Thread: 1, Text: "r", Author: "bob", Time: now.Add(time.Second)},
		{Type: CommentEdit, ID: 2, Text: "r2", Author: "bob", Time: now.Add(2 * time.Second)},
		{Type: CommentResolve, ID: 1, Author: "bob", Time: now.Add(3 * time.Second)},
	}, 10, commentLimits{}, commentActor{author: "bob", any: false})
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeMeta(l.appendMeta(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.list(), l.list()) || got.bytes != l.bytes || got.replies != 1 || got.version != 1 || got.threadVersion != 3 ||
		!reflect.DeepEqual(got.events, l.events) || !reflect.DeepEqual(got.threadEvents, l.threadEvents) {
		t.Errorf("decoded %+v\nwant %+v", got, l)
	}
	if ev, threads := got.eventsAfter(1), got.threadsAfter(0); len(ev) != 0 || len(threads) != 1 || threads[0].Replies[0].Text != "r2" {
		t.Errorf("events after 1: %+v, threads after 0: %+v", ev, threads)
	}
	if threads := got.threadsAfter(3); threads != nil {
		t.Errorf("threads after 3: %+v", threads)
	}
	if threads := got.threadsAfter(7); len(threads) != 1 {
		t.Errorf("threads after a version ahead: %+v, want all", threads)
	}

	// The sizes bound the JSON of the comments in Get's answer, however
	// long their numbers and times.
	late := time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC)
	big, _, err := commentLog{}.apply([]CommentEvent{
		{Type: CommentCreate, ID: -(1 << 53), From: 2147483646, To: 2147483647, Text: "x", Author: "a", Time: late},
		{Type: CommentReply, ID: -(1<<53 - 1), Thread: -(1 << 53), Text: "y", Author: "b", Time: late},
		{Type: CommentEdit, ID: -(1 << 53), Text: "z", Time: late},
		{Type: CommentEdit, ID: -(1<<53 - 1), Text: "w", Time: late},
		{Type: CommentResolve, ID: -(1 << 53), Time: late},
	}, -1, commentLimits{}, commentActor{any: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(appendComments(nil, big.list())); n > big.bytes {
		t.Errorf("the JSON of %s is %d bytes, over the %d counted", appendComments(nil, big.list()), n, big.bytes)
	}

	old, err := decodeMeta([]byte(`{"comments":[{"from":1,"to":3,"text":"a","id":7,"author":"carol"}],"commentVersion":2,"events":[{"type":"create","id":7},{"type":"delete","id":8}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if c := old.list(); len(c) != 1 || c[0].ID != 7 || !c[0].Time.IsZero() || old.bytes != commentSize("a", "carol") || len(old.events) != 2 {
		t.Errorf("an old base: %+v", old)
	}
	events, err := decodeEntry([]byte(`[{"type":"create","id":9,"text":"b","from":1,"to":2},{"type":"delete","id":7}]`))
	if err != nil || len(events) != 2 || !events[0].Time.IsZero() || events[0].Text != "b" {
		t.Errorf("an old entry: %+v, %v", events, err)
	}
	// An entry's events read back as they were written.
	in := []CommentEvent{{Type: CommentReply, ID: 3, Thread: 1, Text: "x", Author: "a", Time: now}, {Type: CommentDeleteReply, ID: 3}, {Type: CommentReopen, ID: 1, Time: now}}
	if out, err := decodeEntry(encodeEntry(in)); err != nil || !reflect.DeepEqual(out, in) {
		t.Errorf("entry round trip: %+v, %v", out, err)
	}
}
