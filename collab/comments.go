package collab

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/transform"
)

// Comment is a comment on the range From..To of a document. Comments are
// mapped through every accepted step and dropped when their range
// collapses.
type Comment struct {
	From, To int
	Text     string
	ID       int64
	// Author is the principal that created the comment (the
	// Submission.Author of its create event; "" when anonymous).
	Author string
}

// AppendJSON appends c as {"from":..,"to":..,"text":..,"id":..}, the
// collab demo's form, with "author":.. after them unless it is "".
func (c Comment) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"from":`...)
	buf = strconv.AppendInt(buf, int64(c.From), 10)
	buf = append(buf, `,"to":`...)
	buf = strconv.AppendInt(buf, int64(c.To), 10)
	buf = append(buf, `,"text":`...)
	buf = model.AppendJSONString(buf, c.Text)
	buf = append(buf, `,"id":`...)
	buf = strconv.AppendInt(buf, c.ID, 10)
	return append(appendCommentAuthor(buf, c.Author), '}')
}

// appendCommentAuthor appends ,"author":.. unless author is "".
func appendCommentAuthor(buf []byte, author string) []byte {
	if author == "" {
		return buf
	}
	buf = append(buf, `,"author":`...)
	return model.AppendJSONString(buf, author)
}

// Comment event types.
const (
	CommentCreate = "create"
	CommentDelete = "delete"
)

// CommentEvent is the creation or deletion of a comment, as clients
// submit them and Events reports them.
type CommentEvent struct {
	// Type is CommentCreate or CommentDelete.
	Type string
	// ID identifies the comment.
	ID int64
	// From, To and Text are the comment's range and text (create only).
	// A submitted create gives the range in the document after the
	// submission's steps; Events gives the comment's current range.
	From, To int
	Text     string
	// Author is the comment's author (create only): Submit records the
	// Submission.Author, whatever a submitted event says.
	Author string
}

// AppendJSON appends e as the collab demo writes events:
// {"type":"create","id":..,"text":..,"from":..,"to":..} (with
// "author":.. after them unless it is "") or {"type":"delete","id":..}.
func (e CommentEvent) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"type":`...)
	buf = model.AppendJSONString(buf, e.Type)
	buf = append(buf, `,"id":`...)
	buf = strconv.AppendInt(buf, e.ID, 10)
	if e.Type != CommentDelete {
		buf = append(buf, `,"text":`...)
		buf = model.AppendJSONString(buf, e.Text)
		buf = append(buf, `,"from":`...)
		buf = strconv.AppendInt(buf, int64(e.From), 10)
		buf = append(buf, `,"to":`...)
		buf = strconv.AppendInt(buf, int64(e.To), 10)
		buf = appendCommentAuthor(buf, e.Author)
	}
	return append(buf, '}')
}

// maxCommentEvents is how many comment events are kept (in memory and in
// the stored comment base) for Events; older ones answer ErrHistoryGone.
const maxCommentEvents = 1_000

// commentOverhead is what a comment counts towards Config.MaxCommentBytes
// besides its text: its JSON object's keys, numbers and the comma before
// it (29 bytes, an id of up to 20 and positions of up to 10 digits each,
// 1), so that the comments' JSON is no longer than their sum.
const commentOverhead = 80

// commentSize returns what a comment of text by author counts towards
// Config.MaxCommentBytes: its text as a JSON string plus commentOverhead,
// and its author's "author" field, a bound on its JSON in the answer of
// Get.
func commentSize(text, author string) int {
	return len(model.AppendJSONString(nil, text)) + commentOverhead + len(appendCommentAuthor(nil, author))
}

// commentLimits are the limits that apply checks: Config's.
type commentLimits struct {
	comments, bytes int
}

// commentSpan is the range of a comment.
type commentSpan struct{ from, to int }

// commentNote is what a comment is besides its range.
type commentNote struct {
	id     int64
	text   string
	author string
}

// commentEvent is a kept comment event: what happened to which id. Events
// reads the text and range of a created comment from the comment itself.
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
	// bytes is the sum of the commentSize of notes (some of which may be
	// collapsed by pending maps, and dropped by the next flush).
	bytes   int
	version int64
	// events holds the last events: events[i] is event number
	// version-len(events)+i+1.
	events []commentEvent
}

// maxPendingMaps is how many step maps a commentLog keeps before it maps
// its ranges through them.
const maxPendingMaps = 32

// comment returns comment i and whether it still exists (its range did
// not collapse).
func (l commentLog) comment(i int) (Comment, bool) {
	c := mapRange(l.spans[i], l.pending)
	n := &l.notes[i]
	return Comment{From: c.from, To: c.to, Text: n.text, ID: n.id, Author: n.author}, c.from < c.to
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
				l.bytes -= commentSize(l.notes[i].text, l.notes[i].author)
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

// commentDeleter is who deletes comments: author, who may delete the
// comments it created, or anyone when any (an editor, events read back
// from the store).
type commentDeleter struct {
	author string
	any    bool
}

// apply applies events submitted with a document whose content size is
// size, and returns the new log and whether anything changed. A create
// must fit the document and use a new id, and the comments must stay
// within lim; a create of an existing comment with its text changes
// nothing (a client resending a submission whose answer it lost), and
// deleting an unknown id changes nothing (another client may have deleted
// it first). Deleting a comment that by may not delete (created by
// another principal, or anonymously) fails with an error matching
// ErrForbidden. Events read back from the store are applied with a
// negative size, no limits (zero) and any deleter: they were checked
// once.
func (l commentLog) apply(events []CommentEvent, size int, lim commentLimits, by commentDeleter) (commentLog, bool, error) {
	if len(events) == 0 {
		return l, false, nil
	}
	next := l.flush()
	next.spans, next.notes, next.events = slices.Clone(next.spans), slices.Clone(next.notes), slices.Clone(next.events)
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
			if n := len(next.notes); lim.comments > 0 && n >= lim.comments {
				return l, false, &LimitError{What: "comments", Limit: lim.comments, Value: n + 1}
			}
			next.bytes += commentSize(e.Text, e.Author)
			if lim.bytes > 0 && next.bytes > lim.bytes {
				return l, false, &LimitError{What: "bytes of comments (Limits.MaxCommentBytes)", Limit: lim.bytes, Value: next.bytes}
			}
			next.spans = append(next.spans, commentSpan{e.From, e.To})
			next.notes = append(next.notes, commentNote{id: e.ID, text: e.Text, author: e.Author})
			next.events = append(next.events, commentEvent{id: e.ID})
		case CommentDelete:
			j := next.index(e.ID)
			if j < 0 {
				continue
			}
			if n := &next.notes[j]; !by.any && (n.author == "" || n.author != by.author) {
				return l, false, fmt.Errorf("comment event %d: comment %d is not yours: only its author, an editor or an admin may delete it: %w", i, e.ID, ErrForbidden)
			}
			next.bytes -= commentSize(next.notes[j].text, next.notes[j].author)
			next.spans, next.notes = slices.Delete(next.spans, j, j+1), slices.Delete(next.notes, j, j+1)
			next.events = append(next.events, commentEvent{id: e.ID, delete: true})
		default:
			return l, false, invalidf("comment event %d: unknown type %q (want %q or %q)", i, e.Type, CommentCreate, CommentDelete)
		}
		next.version++
	}
	if next.version == l.version {
		return l, false, nil
	}
	if len(next.events) > maxCommentEvents {
		next.events = slices.Clone(next.events[len(next.events)-maxCommentEvents:])
	}
	return next, true, nil
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
		if l, _, err = l.apply(events, -1, commentLimits{}, commentDeleter{any: true}); err != nil {
			return l, fmt.Errorf("comment entry %d: %w", e.Seq, err)
		}
	}
	l = l.mapThrough(maps[at-from:])
	return l, nil
}

// encodeEntry returns the metadata entry that the store keeps for a
// submission's comment events: [{"type":"create","id":..,"text":..,"from":..,"to":..},{"type":"delete","id":..}].
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
		if e.Type != CommentCreate && e.Type != CommentDelete {
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
		byID = make(map[int64]int, len(l.notes))
		for i, n := range l.notes {
			byID[n.id] = i
		}
	}
	out := make([]CommentEvent, 0, len(kept))
	for _, e := range kept {
		if e.delete {
			out = append(out, CommentEvent{Type: CommentDelete, ID: e.id})
			continue
		}
		i := -1
		if byID != nil {
			if j, ok := byID[e.id]; ok {
				i = j
			}
		} else {
			i = l.index(e.id)
		}
		if i >= 0 {
			if c, ok := l.comment(i); ok {
				out = append(out, CommentEvent{Type: CommentCreate, ID: c.ID, From: c.From, To: c.To, Text: c.Text, Author: c.Author})
			}
		}
	}
	return out
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
// {"comments":[..],"commentVersion":N,"events":[{"type":..,"id":..},..]}.
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
	return append(buf, "]}"...)
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
	metaKeys    = jsonscan.NewKeys("comments", "commentVersion", "events")
	commentKeys = jsonscan.NewKeys("from", "to", "text", "id", "type", "author")
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
				e, err := decodeMetaEvent(d)
				if err != nil {
					return l, err
				}
				if k == 0 {
					l.spans = append(l.spans, commentSpan{e.From, e.To})
					l.notes = append(l.notes, commentNote{id: e.ID, text: e.Text, author: e.Author})
					l.bytes += commentSize(e.Text, e.Author)
				} else {
					l.events = append(l.events, commentEvent{id: e.ID, delete: e.Type == CommentDelete})
				}
			}
		case 1:
			n, err := readInt(d)
			if err != nil {
				return l, err
			}
			l.version = n
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
	return l, nil
}

// decodeMetaEvent reads a comment or an event object of the meta blob.
func decodeMetaEvent(d *jsonscan.Decoder) (CommentEvent, error) {
	var e CommentEvent
	if err := d.BeginObject(); err != nil {
		return e, err
	}
	for {
		k, key, ok, err := d.NextKeyIndex(commentKeys)
		if err != nil {
			return e, err
		}
		if !ok {
			return e, nil
		}
		var n int64
		switch k {
		case 0, 1, 3:
			if n, err = readInt(d); err != nil {
				return e, err
			}
		case 2, 4, 5:
			s, err := d.ReadString()
			if err != nil {
				return e, err
			}
			switch k {
			case 2:
				e.Text = s
			case 4:
				e.Type = s
			default:
				e.Author = s
			}
			continue
		default:
			return e, fmt.Errorf("unknown key %q", key)
		}
		switch k {
		case 0:
			e.From = int(n)
		case 1:
			e.To = int(n)
		case 3:
			e.ID = n
		}
	}
}

// readInt reads an integer number.
func readInt(d *jsonscan.Decoder) (int64, error) {
	_, raw, err := d.ReadNumber()
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(raw), 10, 64)
}
