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

// commitAnswer is the answer to POST /docs/ID/commits: the kept steps,
// as the server applied them, make versions From+1 to Version.
type commitAnswer struct {
	From           *int64       `json:"from"`
	Version        *int64       `json:"version"`
	Steps          []answerStep `json:"steps"`
	Dropped        []int        `json:"dropped"`
	CommentVersion *int64       `json:"commentVersion"`
}

// answerStep is the part of a rebased replace step the load needs.
type answerStep struct {
	StepType string `json:"stepType"`
	From     int64  `json:"from"`
	To       int64  `json:"to"`
}

// check reports whether the answer is a well-formed answer to a commit
// of n steps at version, and returns how many of its kept steps insert a
// letter (the others replace one).
func (a *commitAnswer) check(version int64, n int) (inserts int64, err error) {
	switch {
	case a.From == nil || a.Version == nil || a.CommentVersion == nil:
		return 0, fmt.Errorf("commit answer without from, version or commentVersion")
	case *a.From < version:
		return 0, fmt.Errorf("commit at version %d answered from %d", version, *a.From)
	case *a.Version != *a.From+int64(len(a.Steps)):
		return 0, fmt.Errorf("commit answer from %d to %d has %d steps", *a.From, *a.Version, len(a.Steps))
	case len(a.Steps)+len(a.Dropped) != n:
		return 0, fmt.Errorf("commit of %d steps answered %d kept and %d dropped", n, len(a.Steps), len(a.Dropped))
	}
	for _, s := range a.Steps {
		switch {
		case s.StepType != "replace" || s.To < s.From || s.To > s.From+1:
			return 0, fmt.Errorf("commit answer has step %+v, not the insert or one-letter replace sent", s)
		case s.From == s.To:
			inserts++
		}
	}
	return inserts, nil
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
	// refBase starts the refs of its commits, commits counts them.
	refBase string
	commits int64
}

// newTypist returns a typist with its own random sequence.
func newTypist(seed uint64, maxText int64) *typist {
	rng := rand.New(rand.NewPCG(seed, 0x636f6c6c6162))
	t := &typist{rng: rng, clientID: rng.Uint32(), maxText: maxText}
	// The same seed makes the same load, but a ref is never used again:
	// the refs of a load against a server that has the documents of an
	// earlier one would get that load's answers.
	t.refBase = strconv.FormatUint(uint64(t.clientID), 36) + "." + strconv.FormatInt(time.Now().UnixNano(), 36) + "."
	return t
}

// submission returns the body of a POST of n steps at version.
func (t *typist) submission(version int64, n int) []byte {
	return t.body(version, n, false)
}

// commit returns the body of a commit (POST /docs/ID/commits) of n steps
// at version, under a ref of its own. Its steps are those of submission:
// rebased over other editors' steps they still apply (an insert at
// position 1 stays an insert, a replace of one letter stays a replace of
// one letter), so the text the document ends with is as long as the
// inserts the server kept.
func (t *typist) commit(version int64, n int) []byte {
	return t.body(version, n, true)
}

// body returns a submission's or, with commit, a commit's body.
func (t *typist) body(version int64, n int, commit bool) []byte {
	b := append(t.buf[:0], `{"version":`...)
	b = strconv.AppendInt(b, version, 10)
	if commit {
		t.commits++
		b = append(b, `,"ref":"`...)
		b = append(b, t.refBase...)
		b = strconv.AppendInt(b, t.commits, 36)
		b = append(b, '"')
	}
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
