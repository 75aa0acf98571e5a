package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// docState is the part of GET /docs/ID's answer the load needs.
type docState struct {
	Doc struct {
		Content []struct {
			Type    string `json:"type"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"content"`
	} `json:"doc"`
	Version        *int64 `json:"version"`
	CommentVersion *int64 `json:"commentVersion"`
}

// firstText returns the text of the document's first block.
func (d *docState) firstText() string {
	var s string
	if len(d.Doc.Content) > 0 {
		for _, t := range d.Doc.Content[0].Content {
			s += t.Text
		}
	}
	return s
}

// submitAnswer is the answer to an accepted POST /docs/ID/events.
type submitAnswer struct {
	Version        *int64 `json:"version"`
	CommentVersion *int64 `json:"commentVersion"`
}

// eventsAnswer is the answer to GET /docs/ID/events ({} after the
// long-poll timeout: Version is nil).
type eventsAnswer struct {
	Version        *int64            `json:"version"`
	CommentVersion *int64            `json:"commentVersion"`
	Steps          []json.RawMessage `json:"steps"`
	ClientIDs      []json.RawMessage `json:"clientIDs"`
}

// check reports whether the answer is a well-formed events answer to a
// request at version since.
func (a *eventsAnswer) check(since int64) error {
	switch {
	case a.Version == nil || a.CommentVersion == nil:
		return fmt.Errorf("events answer without version or commentVersion")
	case *a.Version != since+int64(len(a.Steps)):
		return fmt.Errorf("events answer at version %d has %d steps after %d", *a.Version, len(a.Steps), since)
	case len(a.ClientIDs) != len(a.Steps):
		return fmt.Errorf("events answer has %d steps and %d clientIDs", len(a.Steps), len(a.ClientIDs))
	}
	return nil
}

// getDoc fetches GET /docs/ID (which creates the document when it is new).
func getDoc(c *conn, id string) (*docState, error) {
	status, body, err := c.do("GET", "/docs/"+id, nil)
	if err != nil {
		return nil, err
	}
	if status != 200 {
		return nil, fmt.Errorf("GET /docs/%s: status %d: %.200s", id, status, body)
	}
	var d docState
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, fmt.Errorf("GET /docs/%s: %v", id, err)
	}
	if d.Version == nil || d.CommentVersion == nil {
		return nil, fmt.Errorf("GET /docs/%s: no version or commentVersion: %.200s", id, body)
	}
	return &d, nil
}

// eventsPath is the path of GET /docs/ID/events at the given versions.
func eventsPath(id string, version, commentVersion int64) string {
	return "/docs/" + id + "/events?version=" + strconv.FormatInt(version, 10) +
		"&commentVersion=" + strconv.FormatInt(commentVersion, 10)
}

// typist makes the steps of an editor that types at the start of the
// document's first paragraph (position 1, valid in any basic document
// whose first block is a paragraph): each step is a replace inserting one
// letter. So that the paragraph does not grow for ever (an ever longer
// text node costs more on every step, and more for the faster server),
// once the document is at version maxText or later each step also
// replaces the letter after position 1: the paragraph's text is then
// min(version, maxText) letters long, whoever typed them, which is what
// the load checks at the end. maxText 0 lets it grow.
type typist struct {
	rng      *rand.Rand
	clientID uint32
	maxText  int64
	buf      []byte
}

// newTypist returns a typist with its own random sequence.
func newTypist(seed uint64, maxText int64) *typist {
	rng := rand.New(rand.NewPCG(seed, 0x636f6c6c6162))
	return &typist{rng: rng, clientID: rng.Uint32(), maxText: maxText}
}

// submission returns the body of a POST of n steps at version.
func (t *typist) submission(version int64, n int) []byte {
	b := append(t.buf[:0], `{"version":`...)
	b = strconv.AppendInt(b, version, 10)
	b = append(b, `,"steps":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		to := 1
		if t.maxText > 0 && version+int64(i) >= t.maxText {
			to = 2
		}
		b = append(b, `{"stepType":"replace","from":1,"to":`...)
		b = strconv.AppendInt(b, int64(to), 10)
		b = append(b, `,"slice":{"content":[{"type":"text","text":"`...)
		b = append(b, byte('a'+t.rng.IntN(26)))
		b = append(b, `"}]}}`...)
	}
	b = append(b, `],"clientID":`...)
	b = strconv.AppendUint(b, uint64(t.clientID), 10)
	b = append(b, '}')
	t.buf = b
	return b
}

// wantText returns the length of the first paragraph's text at version.
func wantText(version, maxText int64) int64 {
	if maxText > 0 {
		return min(version, maxText)
	}
	return version
}

// window is the measured part of a load.
type window struct {
	from, end time.Time
}

// has reports whether t is in the window.
func (w window) has(t time.Time) bool { return !t.Before(w.from) && t.Before(w.end) }
