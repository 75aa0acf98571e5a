package collab

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/transform"
)

// Comment is a comment on the range From..To of a document: the root of a
// thread, with its replies. Comments are mapped through every accepted
// step and dropped, replies and all, when their range collapses.
type Comment struct {
	From, To int
	Text     string
	ID       int64
	// Author is the principal that created the comment (the
	// Submission.Author of its create event; "" when anonymous).
	Author string
	// Time is when the comment was created (the Authority's clock; zero
	// for a comment stored before comments had times).
	Time time.Time
	// Resolved is whether the thread is resolved (CommentResolve; a
	// CommentReopen clears it).
	Resolved bool
	// Edited is when the text was last edited (CommentEdit); zero when
	// never.
	Edited time.Time
	// Replies are the thread's replies, oldest first.
	Replies []Reply
}

// Reply is a reply in the thread of a Comment. Its ID is in the same
// space as the comments': unique among a document's comments and
// replies.
type Reply struct {
	ID     int64
	Text   string
	Author string // as Comment.Author
	Time   time.Time
	Edited time.Time // zero when never edited
}

// AppendJSON appends c as {"from":..,"to":..,"text":..,"id":..}, the
// collab demo's form, with after them "author" unless it is "", "time"
// and "edited" unless zero, "resolved":true when resolved and "replies"
// unless there are none.
func (c Comment) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"from":`...)
	buf = strconv.AppendInt(buf, int64(c.From), 10)
	buf = append(buf, `,"to":`...)
	buf = strconv.AppendInt(buf, int64(c.To), 10)
	buf = append(buf, `,"text":`...)
	buf = model.AppendJSONString(buf, c.Text)
	buf = append(buf, `,"id":`...)
	buf = strconv.AppendInt(buf, c.ID, 10)
	buf = appendCommentAuthor(buf, c.Author)
	buf = appendCommentTime(buf, "time", c.Time)
	if c.Resolved {
		buf = append(buf, `,"resolved":true`...)
	}
	buf = appendCommentTime(buf, "edited", c.Edited)
	if len(c.Replies) > 0 {
		buf = append(buf, `,"replies":[`...)
		for i, r := range c.Replies {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = r.AppendJSON(buf)
		}
		buf = append(buf, ']')
	}
	return append(buf, '}')
}

// AppendJSON appends r as {"id":..,"text":..}, with "author" unless it is
// "" and "time" and "edited" unless zero.
func (r Reply) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"id":`...)
	buf = strconv.AppendInt(buf, r.ID, 10)
	buf = append(buf, `,"text":`...)
	buf = model.AppendJSONString(buf, r.Text)
	buf = appendCommentAuthor(buf, r.Author)
	buf = appendCommentTime(buf, "time", r.Time)
	buf = appendCommentTime(buf, "edited", r.Edited)
	return append(buf, '}')
}

// appendCommentAuthor appends ,"author":.. unless author is "".
func appendCommentAuthor(buf []byte, author string) []byte {
	if author == "" {
		return buf
	}
	buf = append(buf, `,"author":`...)
	return model.AppendJSONString(buf, author)
}

// appendCommentTime appends ,"key":"t" in RFC 3339 (UTC, nanoseconds, as
// the step log's and checkpoints' times) unless t is zero.
func appendCommentTime(buf []byte, key string, t time.Time) []byte {
	if t.IsZero() {
		return buf
	}
	buf = append(buf, ',', '"')
	buf = append(buf, key...)
	buf = append(buf, `":"`...)
	buf = t.UTC().AppendFormat(buf, time.RFC3339Nano)
	return append(buf, '"')
}

// Comment event types. Clients of the collab demo know only
// CommentCreate and CommentDelete, of a thread's root: the others are
// the thread operations, which Events reports as the threads' states
// (Events.Threads), never among its comment events.
const (
	CommentCreate = "create"
	CommentDelete = "delete"
	// CommentReply adds the reply ID with Text to the thread Thread.
	CommentReply = "reply"
	// CommentEdit sets the Text of the comment or reply ID.
	CommentEdit = "edit"
	// CommentResolve and CommentReopen resolve the thread ID and reopen
	// it.
	CommentResolve = "resolve"
	CommentReopen  = "reopen"
	// CommentDeleteReply deletes the reply ID.
	CommentDeleteReply = "deleteReply"
)

// commentTypes are the comment event types, in the order their errors
// name them.
var commentTypes = []string{CommentCreate, CommentDelete, CommentReply, CommentEdit, CommentResolve, CommentReopen, CommentDeleteReply}

// CommentTypesText names the comment event types, for errors.
const CommentTypesText = `"create", "delete", "reply", "edit", "resolve", "reopen" or "deleteReply"`

// IsCommentType reports whether typ is a comment event type.
func IsCommentType(typ string) bool { return slices.Contains(commentTypes, typ) }

// CommentEvent is a change of a document's comments, as clients submit
// them and Events reports them (creations and deletions of threads
// only).
type CommentEvent struct {
	// Type is CommentCreate, CommentDelete or a thread operation
	// (CommentReply …).
	Type string
	// ID identifies the comment, or the reply (CommentReply,
	// CommentDeleteReply, and CommentEdit of a reply).
	ID int64
	// Thread is the id of the comment that a CommentReply replies to.
	Thread int64
	// From and To are the comment's range (create only). A submitted
	// create gives the range in the document after the submission's
	// steps; Events gives the comment's current range.
	From, To int
	// Text is the text of a create, reply or edit.
	Text string
	// Author is who made the event (not of a delete): Submit records the
	// Submission.Author, whatever a submitted event says.
	Author string
	// Time is when the event was accepted (not of a delete): Submit
	// records the Authority's clock, whatever a submitted event says.
	Time time.Time
}

// AppendJSON appends e as the collab demo writes events:
// {"type":"create","id":..,"text":..,"from":..,"to":..} (with "author"
// unless it is "" and "time" unless zero after them) or
// {"type":"delete","id":..}; a thread operation as
// {"type":..,"id":..} with "thread", "text", "author" and "time" as it
// has them.
func (e CommentEvent) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"type":`...)
	buf = model.AppendJSONString(buf, e.Type)
	buf = append(buf, `,"id":`...)
	buf = strconv.AppendInt(buf, e.ID, 10)
	switch e.Type {
	case CommentDelete, CommentDeleteReply:
		return append(buf, '}')
	case CommentReply:
		buf = append(buf, `,"thread":`...)
		buf = strconv.AppendInt(buf, e.Thread, 10)
	}
	if e.Type == CommentCreate || e.Type == CommentReply || e.Type == CommentEdit {
		buf = append(buf, `,"text":`...)
		buf = model.AppendJSONString(buf, e.Text)
	}
	if e.Type == CommentCreate {
		buf = append(buf, `,"from":`...)
		buf = strconv.AppendInt(buf, int64(e.From), 10)
		buf = append(buf, `,"to":`...)
		buf = strconv.AppendInt(buf, int64(e.To), 10)
	}
	buf = appendCommentAuthor(buf, e.Author)
	buf = appendCommentTime(buf, "time", e.Time)
	return append(buf, '}')
}

// stamped reports whether events of e's type record their author and
// time.
func (e CommentEvent) stamped() bool {
	return e.Type != CommentDelete && e.Type != CommentDeleteReply
}

// maxCommentEvents is how many comment events are kept (in memory and in
// the stored comment base) for Events; older ones answer ErrHistoryGone.
const maxCommentEvents = 1_000

// commentOverhead is what a comment counts towards
// Config.MaxCommentBytes besides its text and author: its JSON object's
// keys, numbers and the comma before it (29 bytes, an id of up to 20 and
// positions of up to 10 digits each, 1), its "time", "edited",
// "resolved" and an empty "replies" (40, 42, 16, 13: a time is at most
// 32 bytes as JSON, 2006-01-02T15:04:05.999999999Z quoted), so that the
// comments' JSON is no longer than their sum. replyOverhead is a reply's:
// its braces and keys but the times' (15), an id of up to 20 digits,
// "time" and "edited" (40, 42), the comma before it: 118.
const (
	commentOverhead = 192
	replyOverhead   = 120
)

// commentSize returns what a comment of text by author counts towards
// Config.MaxCommentBytes: its text as a JSON string plus commentOverhead,
// and its author's "author" field, a bound on its JSON in the answer of
// Get. Its replies count replySize each.
func commentSize(text, author string) int {
	return len(model.AppendJSONString(nil, text)) + commentOverhead + len(appendCommentAuthor(nil, author))
}

// replySize returns what a reply of text by author counts towards
// Config.MaxCommentBytes, as commentSize.
func replySize(text, author string) int {
	return len(model.AppendJSONString(nil, text)) + replyOverhead + len(appendCommentAuthor(nil, author))
}

// commentLimits are the limits that apply checks: Config's.
type commentLimits struct {
	comments, bytes int
}

// commentSpan is the range of a comment.
type commentSpan struct{ from, to int }

// commentNote is what a comment is besides its range. Times are Unix
// nanoseconds, 0 for none.
type commentNote struct {
	id           int64
	text         string
	author       string
	time, edited int64
	resolved     bool
	// replies is never modified in place: a change makes a new slice.
	replies []replyNote
}

// replyNote is a reply, as commentNote.
type replyNote struct {
	id           int64
	text, author string
	time, edited int64
}

// size returns what n and its replies count towards
// Config.MaxCommentBytes.
func (n *commentNote) size() int {
	size := commentSize(n.text, n.author)
	for i := range n.replies {
		size += replySize(n.replies[i].text, n.replies[i].author)
	}
	return size
}

// nanos returns t as Unix nanoseconds, 0 for the zero time.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// timeOf returns the time of Unix nanoseconds n, the zero time for 0.
func timeOf(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// commentEvent is a kept comment event: what happened to which id.
// Events reads the text and range of a created comment from the comment
// itself.
type commentEvent struct {
	id     int64
	delete bool
}

// commentLog is a document's comments and their recent events. It is a
// value that is never modified in place: every change makes new slices, so
// that readers may keep what they were given.
//
// The comments are two slices: spans[i] is the range of the comment
// notes[i] before the step maps in pending, which a keystroke only adds
// to: the ranges are mapped through them (flush) once there are
// maxPendingMaps, or when comment events need the current ranges, and
// read through them meanwhile. spans holds no pointers: neither copying
// it nor the garbage collector looks into it.
type commentLog struct {
	spans   []commentSpan
	notes   []commentNote
	pending []mapSpan
	// bytes is the sum of the size of notes (some of which may be
	// collapsed by pending maps, and dropped by the next flush), and
	// replies the number of their replies.
	bytes   int
	replies int
	// version counts the creations and deletions of comments, the events
	// of the collab demo; events holds the last of them: events[i] is
	// event number version-len(events)+i+1.
	version int64
	events  []commentEvent
	// threadVersion counts the thread operations, which the demo's
	// client must not see (not even as a comment version moving on);
	// threadEvents holds the comment ids of the last of them, as events.
	threadVersion int64
	threadEvents  []int64
}

// maxPendingMaps is how many step maps a commentLog keeps before it maps
// its ranges through them.
const maxPendingMaps = 32

// comment returns comment i and whether it still exists (its range did
// not collapse).
func (l commentLog) comment(i int) (Comment, bool) {
	c := mapRange(l.spans[i], l.pending)
	n := &l.notes[i]
	out := Comment{From: c.from, To: c.to, Text: n.text, ID: n.id, Author: n.author,
		Time: timeOf(n.time), Resolved: n.resolved, Edited: timeOf(n.edited)}
	if len(n.replies) > 0 {
		out.Replies = make([]Reply, len(n.replies))
		for k, r := range n.replies {
			out.Replies[k] = Reply{ID: r.id, Text: r.text, Author: r.author, Time: timeOf(r.time), Edited: timeOf(r.edited)}
		}
	}
	return out, c.from < c.to
}

// list returns the comments.
func (l commentLog) list() []Comment {
	out := make([]Comment, 0, len(l.spans))
	for i := range l.spans {
		if c, ok := l.comment(i); ok {
			out = append(out, c)
		}
	}
	return out
}

// mapThrough returns the log with the comments mapped through maps (from
// with assoc +1, to with assoc −1, dropped when the range collapses).
// Like the demo it records no event for a dropped comment: clients map
// their copies the same way.
func (l commentLog) mapThrough(maps []*transform.StepMap) commentLog {
	if len(maps) == 0 || len(l.spans) == 0 {
		return l
	}
	pending := slices.Clip(l.pending)
	for _, m := range maps {
		if s, ok := spanOf(m); ok {
			pending = append(pending, s)
		}
	}
	l.pending = pending
	if len(l.pending) >= maxPendingMaps {
		return l.flush()
	}
	return l
}

// flush returns the log with the ranges mapped through the pending maps
// and the collapsed comments dropped.
func (l commentLog) flush() commentLog {
	if len(l.pending) == 0 {
		return l
	}
	var out []commentSpan
	dropped := false
	for i, c := range l.spans {
		m := mapRange(c, l.pending)
		if out == nil {
			if m == c {
				continue
			}
			out = make([]commentSpan, len(l.spans))
			copy(out, l.spans[:i])
		}
		out[i] = m
		dropped = dropped || m.from >= m.to
	}
	l.pending = nil
	if out == nil {
		return l
	}
	l.spans = out
	if dropped {
		// Rare: the range of a comment collapsed. Drop it.
		spans := make([]commentSpan, 0, len(out))
		notes := make([]commentNote, 0, len(out))
		for i, c := range out {
			if c.from < c.to {
				spans, notes = append(spans, c), append(notes, l.notes[i])
			} else {
				l.bytes -= l.notes[i].size()
				l.replies -= len(l.notes[i].replies)
			}
		}
		l.spans, l.notes = spans, notes
	}
	return l
}

// mapRange returns c mapped through maps.
func mapRange(c commentSpan, maps []mapSpan) commentSpan {
	from, to := c.from, c.to
	for k := range maps {
		s := &maps[k]
		if from >= s.lo {
			if from > s.hi {
				from += s.shift
			} else {
				from = s.m.Map(from, 1)
			}
		}
		if to >= s.lo {
			if to > s.hi {
				to += s.shift
			} else {
				to = s.m.Map(to, -1)
			}
		}
	}
	return commentSpan{from, to}
}

// mapSpan is a step map with the span of positions it changes: positions
// before lo stay, positions after hi move by shift, and those between are
// mapped by the map itself. Most positions of a document are outside the
// few that a keystroke touches.
type mapSpan struct {
	m             *transform.StepMap
	lo, hi, shift int
}

// spanOf returns m's mapSpan, and false when m changes nothing.
func spanOf(m *transform.StepMap) (mapSpan, bool) {
	s, ok := mapSpan{m: m}, false
	m.ForEach(func(oldStart, oldEnd, _, newEnd int) {
		if !ok {
			s.lo, ok = oldStart, true
		}
		s.hi, s.shift = oldEnd, newEnd-oldEnd
	})
	return s, ok
}

// index returns the index of the comment id, or -1.
func (l commentLog) index(id int64) int {
	return slices.IndexFunc(l.notes, func(n commentNote) bool { return n.id == id })
}

// reply returns the indexes of the reply id: of its comment and in its
// replies, or -1, -1.
func (l commentLog) reply(id int64) (int, int) {
	for i := range l.notes {
		for k := range l.notes[i].replies {
			if l.notes[i].replies[k].id == id {
				return i, k
			}
		}
	}
	return -1, -1
}

// commentActor is who changes comments: author, who may edit and delete
// the comments and replies it created, or anyone when any (an admin,
// events read back from the store).
type commentActor struct {
	author string
	any    bool
}

// mayChange reports whether by may edit or delete what author created.
func (by commentActor) mayChange(author string) bool {
	return by.any || author != "" && author == by.author
}

// notYours is the error of event i, which by may not do to id.
func notYours(i int, id int64, what string) error {
	return fmt.Errorf("comment event %d: comment %d is not yours: only its author or an admin may %s it: %w", i, id, what, ErrForbidden)
}

// apply applies events submitted with a document whose content size is
// size, and returns the new log and whether anything changed. A create
// must fit the document and a create or reply use a new id (of the
// comments' and replies'), and the comments and replies must stay within
// lim; a create or reply that exists with its text changes nothing (a
// client resending a submission whose answer it lost), nor do an edit to
// the same text, resolving a resolved thread, reopening an open one, and
// any event on an unknown id (another client may have deleted it first).
// Editing or deleting a comment or reply that by may not change (created
// by another principal, or anonymously) fails with an error matching
// ErrForbidden. Events read back from the store are applied with a
// negative size, no limits (zero) and any actor: they were checked once.
func (l commentLog) apply(events []CommentEvent, size int, lim commentLimits, by commentActor) (commentLog, bool, error) {
	if len(events) == 0 {
		return l, false, nil
	}
	next := l.flush()
	next.spans, next.notes = slices.Clone(next.spans), slices.Clone(next.notes)
	next.events, next.threadEvents = slices.Clone(next.events), slices.Clone(next.threadEvents)
	grow := func(add int) error {
		if n := len(next.notes) + next.replies; lim.comments > 0 && n >= lim.comments {
			return &LimitError{What: "comments", Limit: lim.comments, Value: n + 1}
		}
		return next.growBytes(add, lim)
	}
	for i, e := range events {
		switch e.Type {
		case CommentCreate:
			if size >= 0 && (e.From < 0 || e.From >= e.To || e.To > size) {
				return l, false, invalidf("comment event %d: range %d-%d is not a non-empty range of the document (size %d)", i, e.From, e.To, size)
			}
			if j := next.index(e.ID); j >= 0 {
				if next.notes[j].text == e.Text {
					continue
				}
				return l, false, invalidf("comment event %d: comment %d exists", i, e.ID)
			}
			if j, _ := next.reply(e.ID); j >= 0 {
				return l, false, invalidf("comment event %d: a reply %d exists", i, e.ID)
			}
			if err := grow(commentSize(e.Text, e.Author)); err != nil {
				return l, false, err
			}
			next.spans = append(next.spans, commentSpan{e.From, e.To})
			next.notes = append(next.notes, commentNote{id: e.ID, text: e.Text, author: e.Author, time: nanos(e.Time)})
			next.events = append(next.events, commentEvent{id: e.ID})
		case CommentDelete:
			j := next.index(e.ID)
			if j < 0 {
				continue
			}
			n := &next.notes[j]
			if !by.mayChange(n.author) {
				return l, false, notYours(i, e.ID, "delete")
			}
			next.bytes -= n.size()
			next.replies -= len(n.replies)
			next.spans, next.notes = slices.Delete(next.spans, j, j+1), slices.Delete(next.notes, j, j+1)
			next.events = append(next.events, commentEvent{id: e.ID, delete: true})
		case CommentReply:
			j := next.index(e.Thread)
			if j < 0 {
				continue
			}
			if next.index(e.ID) >= 0 {
				return l, false, invalidf("comment event %d: a comment %d exists", i, e.ID)
			}
			if rj, rk := next.reply(e.ID); rj >= 0 {
				if rj == j && next.notes[rj].replies[rk].text == e.Text {
					continue
				}
				return l, false, invalidf("comment event %d: reply %d exists", i, e.ID)
			}
			if err := grow(replySize(e.Text, e.Author)); err != nil {
				return l, false, err
			}
			n := &next.notes[j]
			n.replies = append(slices.Clip(n.replies), replyNote{id: e.ID, text: e.Text, author: e.Author, time: nanos(e.Time)})
			next.replies++
			next.threadEvents = append(next.threadEvents, n.id)
		case CommentEdit:
			changed, err := next.edit(i, e, lim, by)
			if err != nil {
				return l, false, err
			}
			if !changed {
				continue
			}
		case CommentResolve, CommentReopen:
			j := next.index(e.ID)
			if j < 0 || next.notes[j].resolved == (e.Type == CommentResolve) {
				continue
			}
			next.notes[j].resolved = e.Type == CommentResolve
			next.threadEvents = append(next.threadEvents, e.ID)
		case CommentDeleteReply:
			j, k := next.reply(e.ID)
			if j < 0 {
				continue
			}
			n := &next.notes[j]
			r := &n.replies[k]
			if !by.mayChange(r.author) {
				return l, false, notYours(i, e.ID, "delete")
			}
			next.bytes -= replySize(r.text, r.author)
			next.replies--
			n.replies = slices.Delete(slices.Clone(n.replies), k, k+1)
			next.threadEvents = append(next.threadEvents, n.id)
		default:
			return l, false, invalidf("comment event %d: unknown type %q (want %s)", i, e.Type, CommentTypesText)
		}
		if e.Type == CommentCreate || e.Type == CommentDelete {
			next.version++
		} else {
			next.threadVersion++
		}
	}
	if next.version == l.version && next.threadVersion == l.threadVersion {
		return l, false, nil
	}
	if len(next.events) > maxCommentEvents {
		next.events = slices.Clone(next.events[len(next.events)-maxCommentEvents:])
	}
	if len(next.threadEvents) > maxCommentEvents {
		next.threadEvents = slices.Clone(next.threadEvents[len(next.threadEvents)-maxCommentEvents:])
	}
	return next, true, nil
}

// growBytes adds add to l.bytes, within lim.
func (l *commentLog) growBytes(add int, lim commentLimits) error {
	l.bytes += add
	if lim.bytes > 0 && l.bytes > lim.bytes {
		return &LimitError{What: "bytes of comments (Limits.MaxCommentBytes)", Limit: lim.bytes, Value: l.bytes}
	}
	return nil
}

// edit applies the edit e, event i, to l (whose notes apply cloned), and
// reports whether it changed anything.
func (l *commentLog) edit(i int, e CommentEvent, lim commentLimits, by commentActor) (bool, error) {
	if j := l.index(e.ID); j >= 0 {
		n := &l.notes[j]
		if !by.mayChange(n.author) {
			return false, notYours(i, e.ID, "edit")
		}
		if n.text == e.Text {
			return false, nil
		}
		if err := l.growBytes(commentSize(e.Text, n.author)-commentSize(n.text, n.author), lim); err != nil {
			return false, err
		}
		n.text, n.edited = e.Text, nanos(e.Time)
		l.threadEvents = append(l.threadEvents, n.id)
		return true, nil
	}
	j, k := l.reply(e.ID)
	if j < 0 {
		return false, nil
	}
	n := &l.notes[j]
	r := n.replies[k]
	if !by.mayChange(r.author) {
		return false, notYours(i, e.ID, "edit")
	}
	if r.text == e.Text {
		return false, nil
	}
	if err := l.growBytes(replySize(e.Text, r.author)-replySize(r.text, r.author), lim); err != nil {
		return false, err
	}
	r.text, r.edited = e.Text, nanos(e.Time)
	n.replies = slices.Clone(n.replies)
	n.replies[k] = r
	l.threadEvents = append(l.threadEvents, n.id)
	return true, nil
}

// replay returns l, the comments at version from, brought to version
// from+len(maps) as Submit changed them: mapped through maps[i], the map
// of the step that made version from+i+1, with the comment events of each
// entry (encodeEntry's) applied after the steps up to its version.
func (l commentLog) replay(from int64, maps []*transform.StepMap, entries []store.MetaEntry) (commentLog, error) {
	at, to := from, from+int64(len(maps))
	for _, e := range entries {
		if e.Version < at || e.Version > to {
			return l, fmt.Errorf("comment entry %d at version %d, outside [%d, %d]", e.Seq, e.Version, at, to)
		}
		l = l.mapThrough(maps[at-from : e.Version-from])
		at = e.Version
		events, err := decodeEntry(e.JSON)
		if err != nil {
			return l, fmt.Errorf("comment entry %d: %w", e.Seq, err)
		}
		if l, _, err = l.apply(events, -1, commentLimits{}, commentActor{any: true}); err != nil {
			return l, fmt.Errorf("comment entry %d: %w", e.Seq, err)
		}
	}
	l = l.mapThrough(maps[at-from:])
	return l, nil
}

// encodeEntry returns the metadata entry that the store keeps for a
// submission's comment events, as CommentEvent.AppendJSON writes them:
// [{"type":"create","id":..,"text":..,"from":..,"to":..},{"type":"delete","id":..},
// {"type":"reply","id":..,"thread":..,"text":..},..].
func encodeEntry(events []CommentEvent) []byte {
	buf := []byte{'['}
	for i, e := range events {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = e.AppendJSON(buf)
	}
	return append(buf, ']')
}

// decodeEntry reads an entry written by encodeEntry.
func decodeEntry(data []byte) ([]CommentEvent, error) {
	d := jsonscan.NewDecoder(data)
	if err := d.BeginArray(); err != nil {
		return nil, err
	}
	var events []CommentEvent
	for {
		more, err := d.NextElem()
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
		e, err := decodeMetaEvent(d)
		if err != nil {
			return nil, err
		}
		if !IsCommentType(e.Type) {
			return nil, fmt.Errorf("unknown comment event type %q", e.Type)
		}
		events = append(events, e)
	}
	if err := d.End(); err != nil {
		return nil, err
	}
	return events, nil
}

// eventsAfter returns the events after version since (which must be kept):
// deletes as they were, creates with the comment's current range and
// text, left out when the comment no longer exists.
func (l commentLog) eventsAfter(since int64) []CommentEvent {
	kept := l.events[len(l.events)-int(l.version-since):]
	if len(kept) == 0 {
		return nil
	}
	var byID map[int64]int
	if len(kept) > 4 && len(l.notes) > 16 {
		byID = l.byID()
	}
	out := make([]CommentEvent, 0, len(kept))
	for _, e := range kept {
		if e.delete {
			out = append(out, CommentEvent{Type: CommentDelete, ID: e.id})
			continue
		}
		if c, ok := l.find(e.id, byID); ok {
			out = append(out, CommentEvent{Type: CommentCreate, ID: c.ID, From: c.From, To: c.To, Text: c.Text, Author: c.Author, Time: c.Time})
		}
	}
	return out
}

// threadsAfter returns the current state of each comment whose thread
// changed after thread version since, once: all the comments when those
// changes are no longer kept, or since is not a thread version l had.
func (l commentLog) threadsAfter(since int64) []Comment {
	behind := l.threadVersion - since
	if behind == 0 {
		return nil
	}
	if since < 0 || behind < 0 || behind > int64(len(l.threadEvents)) {
		return l.list()
	}
	kept := l.threadEvents[len(l.threadEvents)-int(behind):]
	var byID map[int64]int
	if len(kept) > 4 && len(l.notes) > 16 {
		byID = l.byID()
	}
	var out []Comment
	seen := make(map[int64]bool, len(kept))
	for _, id := range kept {
		if seen[id] {
			continue
		}
		seen[id] = true
		if c, ok := l.find(id, byID); ok {
			out = append(out, c)
		}
	}
	return out
}

// byID returns the index of each comment by its id.
func (l commentLog) byID() map[int64]int {
	m := make(map[int64]int, len(l.notes))
	for i, n := range l.notes {
		m[n.id] = i
	}
	return m
}

// find returns the comment id, looked up in byID unless it is nil, and
// whether it exists.
func (l commentLog) find(id int64, byID map[int64]int) (Comment, bool) {
	i := -1
	if byID != nil {
		if j, ok := byID[id]; ok {
			i = j
		}
	} else {
		i = l.index(id)
	}
	if i < 0 {
		return Comment{}, false
	}
	return l.comment(i)
}

// appendComments appends comments as a JSON array.
func appendComments(buf []byte, comments []Comment) []byte {
	buf = append(buf, '[')
	for i, c := range comments {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = c.AppendJSON(buf)
	}
	return append(buf, ']')
}

// appendMeta appends the comment base that the store keeps for the
// document (store.Head.Meta, store.Snapshot.Meta):
// {"comments":[..],"commentVersion":N,"events":[{"type":..,"id":..},..]},
// and, after thread operations, "threadVersion":N,"threads":[id,..] (the
// comments of the kept ones).
func (l commentLog) appendMeta(buf []byte) []byte {
	buf = append(buf, `{"comments":`...)
	buf = appendComments(buf, l.list())
	buf = append(buf, `,"commentVersion":`...)
	buf = strconv.AppendInt(buf, l.version, 10)
	buf = append(buf, `,"events":[`...)
	for i, e := range l.events {
		if i > 0 {
			buf = append(buf, ',')
		}
		typ := CommentCreate
		if e.delete {
			typ = CommentDelete
		}
		buf = CommentEvent{Type: typ, ID: e.id}.appendShort(buf)
	}
	buf = append(buf, ']')
	if l.threadVersion > 0 {
		buf = append(buf, `,"threadVersion":`...)
		buf = strconv.AppendInt(buf, l.threadVersion, 10)
		buf = append(buf, `,"threads":[`...)
		for i, id := range l.threadEvents {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, id, 10)
		}
		buf = append(buf, ']')
	}
	return append(buf, '}')
}

// appendShort appends {"type":..,"id":..}.
func (e CommentEvent) appendShort(buf []byte) []byte {
	buf = append(buf, `{"type":`...)
	buf = model.AppendJSONString(buf, e.Type)
	buf = append(buf, `,"id":`...)
	buf = strconv.AppendInt(buf, e.ID, 10)
	return append(buf, '}')
}

var (
	metaKeys    = jsonscan.NewKeys("comments", "commentVersion", "events", "threadVersion", "threads")
	eventKeys   = jsonscan.NewKeys("from", "to", "text", "id", "type", "author", "thread", "time")
	commentKeys = jsonscan.NewKeys("from", "to", "text", "id", "author", "time", "resolved", "edited", "replies")
	replyKeys   = jsonscan.NewKeys("id", "text", "author", "time", "edited")
)

// decodeMeta reads a comment base written by appendMeta. An empty blob is
// an empty log.
func decodeMeta(data []byte) (commentLog, error) {
	var l commentLog
	if len(data) == 0 {
		return l, nil
	}
	d := jsonscan.NewDecoder(data)
	if err := d.BeginObject(); err != nil {
		return l, err
	}
	for {
		k, key, ok, err := d.NextKeyIndex(metaKeys)
		if err != nil {
			return l, err
		}
		if !ok {
			break
		}
		switch k {
		case 0, 2:
			if err := d.BeginArray(); err != nil {
				return l, err
			}
			for {
				more, err := d.NextElem()
				if err != nil {
					return l, err
				}
				if !more {
					break
				}
				if k == 0 {
					span, note, err := decodeMetaComment(d)
					if err != nil {
						return l, err
					}
					l.spans = append(l.spans, span)
					l.notes = append(l.notes, note)
					l.bytes += note.size()
					l.replies += len(note.replies)
					continue
				}
				e, err := decodeMetaEvent(d)
				if err != nil {
					return l, err
				}
				l.events = append(l.events, commentEvent{id: e.ID, delete: e.Type == CommentDelete})
			}
		case 1, 3:
			n, err := readInt(d)
			if err != nil {
				return l, err
			}
			if k == 1 {
				l.version = n
			} else {
				l.threadVersion = n
			}
		case 4:
			if err := d.BeginArray(); err != nil {
				return l, err
			}
			for {
				more, err := d.NextElem()
				if err != nil {
					return l, err
				}
				if !more {
					break
				}
				id, err := readInt(d)
				if err != nil {
					return l, err
				}
				l.threadEvents = append(l.threadEvents, id)
			}
		default:
			return l, fmt.Errorf("unknown key %q", key)
		}
	}
	if err := d.End(); err != nil {
		return l, err
	}
	if int64(len(l.events)) > l.version {
		return l, fmt.Errorf("%d comment events at comment version %d", len(l.events), l.version)
	}
	if int64(len(l.threadEvents)) > l.threadVersion {
		return l, fmt.Errorf("%d thread events at thread version %d", len(l.threadEvents), l.threadVersion)
	}
	return l, nil
}

// decodeMetaEvent reads an event object of the meta blob or of an entry.
func decodeMetaEvent(d *jsonscan.Decoder) (CommentEvent, error) {
	var e CommentEvent
	if err := d.BeginObject(); err != nil {
		return e, err
	}
	for {
		k, key, ok, err := d.NextKeyIndex(eventKeys)
		if err != nil {
			return e, err
		}
		if !ok {
			return e, nil
		}
		switch k {
		case 0, 1:
			var n int64
			n, err = readInt(d)
			if k == 0 {
				e.From = int(n)
			} else {
				e.To = int(n)
			}
		case 2:
			e.Text, err = d.ReadString()
		case 3:
			e.ID, err = readInt(d)
		case 4:
			e.Type, err = d.ReadString()
		case 5:
			e.Author, err = d.ReadString()
		case 6:
			e.Thread, err = readInt(d)
		case 7:
			e.Time, err = readTime(d)
		default:
			return e, fmt.Errorf("unknown key %q", key)
		}
		if err != nil {
			return e, err
		}
	}
}

// decodeMetaComment reads a comment of the meta blob, as
// Comment.AppendJSON writes it.
func decodeMetaComment(d *jsonscan.Decoder) (commentSpan, commentNote, error) {
	var span commentSpan
	var n commentNote
	if err := d.BeginObject(); err != nil {
		return span, n, err
	}
	for {
		k, key, ok, err := d.NextKeyIndex(commentKeys)
		if err != nil {
			return span, n, err
		}
		if !ok {
			return span, n, nil
		}
		var v int64
		switch k {
		case 0, 1:
			v, err = readInt(d)
			if k == 0 {
				span.from = int(v)
			} else {
				span.to = int(v)
			}
		case 2:
			n.text, err = d.ReadString()
		case 3:
			n.id, err = readInt(d)
		case 4:
			n.author, err = d.ReadString()
		case 5:
			n.time, err = readNanos(d)
		case 6:
			n.resolved, err = d.ReadBool()
		case 7:
			n.edited, err = readNanos(d)
		case 8:
			n.replies, err = decodeMetaReplies(d)
		default:
			return span, n, fmt.Errorf("unknown key %q", key)
		}
		if err != nil {
			return span, n, err
		}
	}
}

// decodeMetaReplies reads the replies of a comment of the meta blob.
func decodeMetaReplies(d *jsonscan.Decoder) ([]replyNote, error) {
	if err := d.BeginArray(); err != nil {
		return nil, err
	}
	var out []replyNote
	for {
		more, err := d.NextElem()
		if err != nil || !more {
			return out, err
		}
		if err := d.BeginObject(); err != nil {
			return nil, err
		}
		var r replyNote
		for {
			k, key, ok, err := d.NextKeyIndex(replyKeys)
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			switch k {
			case 0:
				r.id, err = readInt(d)
			case 1:
				r.text, err = d.ReadString()
			case 2:
				r.author, err = d.ReadString()
			case 3:
				r.time, err = readNanos(d)
			case 4:
				r.edited, err = readNanos(d)
			default:
				return nil, fmt.Errorf("unknown key %q", key)
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
}

// readTime reads a time written by appendCommentTime.
func readTime(d *jsonscan.Decoder) (time.Time, error) {
	s, err := d.ReadString()
	if err != nil {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339Nano, s)
}

// readNanos reads a time written by appendCommentTime as Unix
// nanoseconds.
func readNanos(d *jsonscan.Decoder) (int64, error) {
	t, err := readTime(d)
	return nanos(t), err
}

// readInt reads an integer number.
func readInt(d *jsonscan.Decoder) (int64, error) {
	_, raw, err := d.ReadNumber()
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(raw), 10, 64)
}
