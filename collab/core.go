package collab

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/transform"
)

// The submission core: what a submission does to a document, decided
// from values alone. Nothing here takes a lock, reads a clock, touches
// the store or the Authority: Submit (submit.go) reads the inputs, calls
// the core, and carries out what it decided (the hook, the store append,
// the publish), never recomputing any of it.
//
// A submission goes through it in steps:
//
//  1. prepare checks what needs no document (counts, comment texts, the
//     client id) and returns a submission.
//  2. decide applies it to a view of the document (read at once under
//     the document's lock) and returns a decision: the state to publish,
//     the records and comment entry to append, the answer. A decision
//     that changes nothing is answered at once.
//  3. With Config.BeforeSubmit, the driver gives the hook
//     decision.proposal and folds its verdict in with decision.approve.
//  4. When the append conflicts on the metadata alone (other writers'
//     comments, with a store.MetaSwapper), decision.recomment remakes the
//     decision on the latest state.

// submitLimits are the values of Config that decide a submission.
type submitLimits struct {
	maxSteps       int // steps, and comment events, in one submission
	maxCommentText int // bytes in the text of one comment event
	step           apply.StepOptions
	comments       commentLimits
	history        int  // steps kept for Events
	keepSteps      bool // keep the decoded steps for the proposal (Config.BeforeSubmit is set)
}

// submission is a Submission that prepare checked.
type submission struct {
	Submission          // its comment events authored by Author (and timed by decide)
	id         string   // the document's id
	clientID   ClientID // parsed; nil for a submission without steps
	by         owner    // who the client id must belong to
	actor      commentActor
	server     bool   // the server's own (Restore): client ids are not checked
	record     []byte // a commit's record, for its first step (commit.go)
	// rebased, for a rebased commit, are its steps decoded: Steps holds
	// their JSON no more (decideCommit).
	rebased []transform.Step
}

// prepare checks s, by user, against the limits that need no document,
// and returns it ready for decide. The comment events of s (but
// deletions) are its Author's, whatever the events say.
func prepare(id, user string, s Submission, server bool, lim submitLimits) (submission, error) {
	if n := len(s.Steps); n > lim.maxSteps {
		return submission{}, &LimitError{What: "steps", Limit: lim.maxSteps, Value: n}
	}
	if n := len(s.Comments); n > lim.maxSteps {
		return submission{}, &LimitError{What: "comment events", Limit: lim.maxSteps, Value: n}
	}
	for i, e := range s.Comments {
		if len(e.Text) > lim.maxCommentText {
			return submission{}, &LimitError{What: fmt.Sprintf("bytes in the text of comment event %d", i), Limit: lim.maxCommentText, Value: len(e.Text)}
		}
	}
	if slices.ContainsFunc(s.Comments, func(e CommentEvent) bool { return e.stamped() && e.Author != s.Author }) {
		events := slices.Clone(s.Comments)
		for i := range events {
			if events[i].stamped() {
				events[i].Author = s.Author
			}
		}
		s.Comments = events
	}
	if err := checkRef(s.Ref); err != nil {
		return submission{}, err
	}
	sub := submission{Submission: s, id: id, by: ownerOf(s.Author, user), actor: commentActor{author: s.Author, any: !s.OwnComments}, server: server}
	if len(s.Steps) > 0 { // a comment-only submission's client id is unused
		var err error
		if sub.clientID, err = ParseClientID(s.ClientID); err != nil {
			return submission{}, err
		}
	}
	return sub, nil
}

// view is what a submission is decided on: a document's state, whether
// it was deleted, and the use of the submission's client id on it (zero
// when nobody uses it), read together.
type view struct {
	st      docState
	deleted bool
	client  clientUse
}

// decision is what the core decided for a submission: next is to be
// published once records and meta are durable, appended on base.
type decision struct {
	sub     submission
	base    docState
	next    docState         // base after the submission, as it is once the append succeeded
	records []store.Step     // the steps to append
	added   []StepRecord     // the same steps as Events shows them
	decoded []transform.Step // the decoded steps, with submitLimits.keepSteps
	meta    []byte           // the comment entry to append; nil when the comments did not change
	result  Result
}

// changes reports whether the decision changes the document: when not,
// there is nothing to append, publish or ask the hook, and result is the
// answer.
func (dec decision) changes() bool { return len(dec.records) > 0 || dec.meta != nil }

// add is what the decision adds to the store (as store.Sizer counts it).
func (dec decision) add() int64 { return stepBytes(dec.records, len(dec.meta)) }

// decide applies sub to the document as v shows it, at now (the steps'
// time). Its checks, in order: the document exists, the client id is
// sub's to use, the version is one the document had and is its current
// one (stale, otherwise), the steps decode and apply within the limits,
// the comment events apply within theirs.
func decide(v view, sub submission, lim submitLimits, now time.Time) (decision, error) {
	st := v.st
	if v.deleted {
		return decision{}, fmt.Errorf("collab: %q: %w", sub.id, ErrNotFound)
	}
	if len(sub.clientID) > 0 && !sub.server {
		if err := checkClient(sub.clientID, v.client, sub.by); err != nil {
			return decision{}, err
		}
	}
	if sub.Version < 0 || sub.Version > st.version {
		return decision{}, &versionError{version: sub.Version}
	}
	sub = sub.at(now)
	if sub.Ref != "" {
		return decideCommit(st, sub, lim, now)
	}
	if sub.Version != st.version {
		return stale(st, sub)
	}
	dec := decision{sub: sub, base: st}
	var err error
	if dec.next, dec.records, dec.added, dec.decoded, err = applySteps(st, sub, lim, now); err != nil {
		return decision{}, err
	}
	return dec.withComments(dec.next, lim.comments)
}

// at returns sub with its comment events (but deletions) made at now,
// whatever they say.
func (sub submission) at(now time.Time) submission {
	if !slices.ContainsFunc(sub.Comments, func(e CommentEvent) bool { return e.stamped() && !e.Time.Equal(now) }) {
		return sub
	}
	events := slices.Clone(sub.Comments)
	for i := range events {
		if events[i].stamped() {
			events[i].Time = now
		}
	}
	sub.Comments = events
	return sub
}

// stale decides a submission made on an older version than st's, not a
// commit: it conflicts (ErrConflict; the client rebases and submits
// again). A commit is rebased instead (decideCommit).
func stale(st docState, sub submission) (decision, error) {
	return decision{}, ErrConflict
}

// withComments completes dec, whose steps made st from dec.base (st is
// dec.base when there are none), with sub's comment events applied to
// st's comments: the comment entry to append, the metadata sequence once
// appended, and the answer.
func (dec decision) withComments(st docState, lim commentLimits) (decision, error) {
	comments, changed, err := st.comments.apply(dec.sub.Comments, st.node.Content.Size(), lim, dec.sub.actor)
	if err != nil {
		return decision{}, err
	}
	dec.meta = nil
	if changed {
		dec.meta = encodeEntry(dec.sub.Comments)
	}
	if !dec.changes() {
		dec.result = Result{Version: dec.base.version, CommentVersion: dec.base.comments.version, Commit: dec.result.Commit}
		return dec, nil
	}
	st.comments = comments
	st.metaSeq, st.metaBytes = dec.base.metaSeq, dec.base.metaBytes
	if changed {
		st.metaSeq++
		st.metaBytes += int64(len(dec.meta))
	}
	dec.next = st
	dec.result = Result{Version: st.version, CommentVersion: st.comments.version, Commit: dec.result.Commit}
	return dec, nil
}

// recomment remakes dec on cur, the document's state after an append of
// dec conflicted: when only the comments moved on (another writer's
// comment events at the same version, same document), the same steps
// with cur's comments mapped through them and the events applied again;
// otherwise ErrConflict.
func (dec decision) recomment(cur docState, lim submitLimits) (decision, error) {
	if cur.version != dec.base.version || cur.node != dec.base.node {
		return decision{}, ErrConflict
	}
	next := dec.next
	next.comments = cur.comments.mapThrough(stepMaps(dec.added))
	dec.base = cur
	return dec.withComments(next, lim.comments)
}

// proposal is dec as Config.BeforeSubmit sees it.
func (dec decision) proposal() *Proposal {
	p := &Proposal{
		ID:       dec.sub.id,
		Author:   dec.sub.Author,
		ClientID: dec.sub.clientID,
		Version:  dec.base.version,
		Steps:    dec.decoded,
		Before:   dec.base.node,
		After:    dec.next.node,
		Comments: dec.sub.Comments,
	}
	if len(dec.records) > 0 {
		p.StepsJSON = make([][]byte, len(dec.records))
		for i, r := range dec.records {
			p.StepsJSON[i] = r.JSON
		}
	}
	return p
}

// approve folds Config.BeforeSubmit's verdict on dec.proposal in: nil
// lets dec go on; an error refuses it with a *RefusedError, and nothing
// is appended.
func (dec decision) approve(verdict error) error {
	if verdict != nil {
		return &RefusedError{Err: verdict}
	}
	return nil
}

// commit is dec, made durable and published at now, as Config.AfterCommit
// sees it.
func (dec decision) commit(now time.Time) Commit {
	c := Commit{
		ID:             dec.sub.id,
		Author:         dec.sub.Author,
		ClientID:       dec.sub.clientID,
		From:           dec.base.version,
		To:             dec.next.version,
		Comments:       dec.sub.Comments,
		CommentVersion: dec.next.comments.version,
		Time:           now,
	}
	if len(dec.records) > 0 {
		c.Steps = dec.added
		c.Time = dec.records[0].Time
	}
	return c
}

// checkClient checks that o may use the client id cid, whose use on the
// document is u, or returns a *ClientIDError.
func checkClient(cid ClientID, u clientUse, o owner) error {
	if bytes.Equal(cid, RestoreClientID) || bytes.Equal(cid, EditClientID) {
		return &ClientIDError{ClientID: cid}
	}
	if u.inUse() && !u.owner.admits(o) {
		return &ClientIDError{ClientID: cid}
	}
	return nil
}

// applySteps decodes and applies sub's steps (a rebased commit's are decoded
// already: submission.rebased) to st within lim, at now,
// and returns the new state (its history extended, comments mapped
// through the steps), the steps to append, the same as Events shows
// them, and, with lim.keepSteps, the decoded steps.
func applySteps(st docState, sub submission, lim submitLimits, now time.Time) (docState, []store.Step, []StepRecord, []transform.Step, error) {
	n := len(sub.Steps)
	if sub.rebased != nil {
		n = len(sub.rebased)
	}
	if n == 0 {
		return st, nil, nil, nil, nil
	}
	maps := make([]*transform.StepMap, n)
	ends := make([]int, n)  // where each step's JSON ends in buf
	sizes := make([]int, n) // the content size after each step
	scratch := jsonScratch.Get().(*[]byte)
	defer func() {
		if cap(*scratch) <= 1<<20 { // keep no huge buffers
			jsonScratch.Put(scratch)
		}
	}()
	buf := (*scratch)[:0]
	marks, suggestions := suggestionMarks(st.schema)
	if sub.SuggestOnly && !suggestions {
		return st, nil, nil, nil, suggestOnlyError("needs a schema with the suggestion marks: %v", suggestErr(st.schema))
	}
	var decoded []transform.Step
	if lim.keepSteps || suggestions {
		decoded = make([]transform.Step, n)
	}
	visit := func(i int, step transform.Step, _, after *model.Node) error {
		if decoded != nil {
			decoded[i] = step
		}
		maps[i] = step.GetMap()
		sizes[i] = after.Content.Size()
		buf = step.AppendJSON(buf)
		ends[i] = len(buf)
		return nil
	}
	var node *model.Node
	var err error
	if sub.rebased != nil {
		node, err = apply.Decoded(st.node, sub.rebased, lim.step, visit)
	} else {
		node, err = apply.Steps(st.node, n, func(i int) []byte { return sub.Steps[i] }, lim.step, visit)
	}
	if err != nil {
		return st, nil, nil, nil, stepError(err)
	}
	owners := st.owners
	if suggestions {
		if sub.SuggestOnly {
			if err := checkSuggestOnly(st.node, node, marks, st.owners, sub.Author); err != nil {
				return st, nil, nil, nil, err
			}
		}
		var added []any
		owners, added = recordSuggestions(owners, marks, decoded, sub.Author)
		if limit := lim.comments.comments; len(added) > 0 && limit > 0 && owners.len() > limit {
			return st, nil, nil, nil, &LimitError{What: "suggestion ids of the document (as many as it may have comments)", Limit: limit, Value: owners.len()}
		}
		if !lim.keepSteps {
			decoded = nil
		}
	}
	*scratch = buf
	// The steps' JSON stays in the history for long: one allocation of
	// the exact size holds all of it.
	all := bytes.Clone(buf)
	records := make([]store.Step, n)
	added := make([]StepRecord, n)
	start := 0
	for i, end := range ends {
		js := all[start:end:end]
		records[i] = store.Step{Version: st.version + int64(i) + 1, JSON: js, ClientID: sub.clientID, Author: sub.by.author, Time: now}
		added[i] = StepRecord{JSON: js, ClientID: sub.clientID, Map: maps[i], Size: sizes[i], owner: sub.by}
		start = end
	}
	if sub.record != nil {
		records[0].Commit, added[0].commit = sub.record, sub.record
	}
	next := st
	next.node = node
	next.version += int64(n)
	next = next.addHistory(added, lim.history)
	next.comments = st.comments.mapThrough(maps)
	next.owners = owners
	return next, records, added, decoded, nil
}

// stepError is the error of a submission whose steps failed in
// apply.Steps: a *LimitError for a document over MaxDocSize or
// MaxDocBytes, a *transform.StepError naming the step otherwise.
func stepError(err error) error {
	var se *apply.StepError
	if !errors.As(err, &se) {
		return err
	}
	if se.Kind == apply.ErrDocTooLarge {
		what := "document size"
		if se.Bytes {
			what = "document bytes (JSON)"
		}
		return &LimitError{What: what, Limit: se.Limit, Value: se.Size}
	}
	return &transform.StepError{Index: se.Index, Err: se.Err}
}

// stepMaps returns the maps of steps.
func stepMaps(steps []StepRecord) []*transform.StepMap {
	maps := make([]*transform.StepMap, len(steps))
	for i, r := range steps {
		maps[i] = r.Map
	}
	return maps
}

// appendHistory returns history with added appended, keeping the last
// limit entries. Appending never overwrites what readers were given: they
// get slices clipped to the published length. The dropped front is freed
// when append next moves the slice to a larger array.
func appendHistory(history, added []StepRecord, limit int) []StepRecord {
	out := append(history, added...)
	return out[max(0, len(out)-limit):]
}

// jsonScratch holds buffers that a submission's steps are encoded into.
// It only saves allocations: what a buffer held never outlives the call.
var jsonScratch = sync.Pool{New: func() any { return new([]byte) }}
