package collab

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// Commit mode. A commit is a submission with a Ref (Submission.Ref). At
// the current version it is decided as any submission is. Made on an
// older version, still in the history, its steps are rebased onto the
// current document (Rebase, as prosemirror-collab's rebaseSteps does on
// the client) and the steps that still apply are decided on it: the
// limits, Config.BeforeSubmit and the comment checks see the rebased
// steps.
//
// The first step that a commit adds carries its record (StepRecord.commit,
// store.Step.Commit): its ref, how many steps it kept, which it dropped
// and a digest of the steps submitted. A commit submitted again under its
// ref is answered from the record and the steps after it, and applies
// nothing; under its ref with other steps it fails with ErrRefReused. A
// commit that kept no step leaves no record: submitted again, it is
// rebased again.

// MaxRefBytes is the longest Submission.Ref.
const MaxRefBytes = 64

// ErrRefReused is matched by the refusal of a commit under a ref that
// names an earlier commit of other steps (HTTP 422).
var ErrRefReused = errors.New("collab: the ref names another commit, with other steps")

// checkRef checks a Submission.Ref.
func checkRef(ref string) error {
	if len(ref) > MaxRefBytes {
		return invalidf("invalid ref: %d bytes, over the limit of %d", len(ref), MaxRefBytes)
	}
	return nil
}

// commitRecord is what the first step of a commit records of it.
type commitRecord struct {
	Ref     string `json:"ref"`
	Kept    int    `json:"kept"`
	Dropped []int  `json:"dropped,omitempty"`
	Sum     string `json:"sum"`
}

// stepsSum is the digest of a commit's submitted steps, which tells a
// resend from another commit under the same ref.
func stepsSum(steps [][]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, s := range steps {
		h.Write(strconv.AppendInt(n[:0], int64(len(s)), 10))
		h.Write([]byte{':'})
		h.Write(s)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// refPrefix is how a record of ref begins: records are looked up by it
// without being decoded.
func refPrefix(ref string) []byte {
	return append(model.AppendJSONString([]byte(`{"ref":`), ref), ',')
}

// encode writes r as JSON, its ref first (refPrefix).
func (r commitRecord) encode() []byte {
	buf := refPrefix(r.Ref)
	buf = append(buf, `"kept":`...)
	buf = strconv.AppendInt(buf, int64(r.Kept), 10)
	if len(r.Dropped) > 0 {
		buf = append(buf, `,"dropped":[`...)
		for i, d := range r.Dropped {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, int64(d), 10)
		}
		buf = append(buf, ']')
	}
	buf = append(buf, `,"sum":`...)
	buf = model.AppendJSONString(buf, r.Sum)
	return append(buf, '}')
}

// decideCommit decides sub, a commit, on st (decide has checked the
// document, the client id and that sub.Version is one st had).
func decideCommit(st docState, sub submission, lim submitLimits, now time.Time) (decision, error) {
	behind := st.version - sub.Version
	if behind > int64(len(st.steps)) {
		return decision{}, ErrHistoryGone
	}
	since := st.steps[len(st.steps)-int(behind):]
	sum := stepsSum(sub.Steps)
	if dec, found, err := resent(st, sub, sum); found || err != nil {
		return dec, err
	}
	dec := decision{sub: sub, base: st}
	var dropped []int
	var kept []int // the submitted index of each applied step
	var mapping *transform.Mapping
	if behind > 0 {
		rebased, err := rebaseOnto(st, since, sub)
		if err != nil {
			return decision{}, err
		}
		dropped = rebased.Dropped
		mapping = rebased.Mapping
		for i := range sub.Steps {
			if !slices.Contains(rebased.Dropped, i) {
				kept = append(kept, i)
			}
		}
		dec.sub.Steps, dec.sub.rebased = nil, rebased.Steps
		if dec.sub.rebased == nil {
			dec.sub.rebased = []transform.Step{} // all dropped
		}
		dec.sub.Comments = mapComments(sub.Comments, mapping)
	}
	if kept := len(dec.sub.Steps) + len(dec.sub.rebased); kept > 0 {
		dec.sub.record = commitRecord{Ref: sub.Ref, Kept: kept, Dropped: dropped, Sum: sum}.encode()
	}
	var err error
	if dec.next, dec.records, dec.added, dec.decoded, err = applySteps(st, dec.sub, lim, now); err != nil {
		var se *transform.StepError
		if kept != nil && errors.As(err, &se) && se.Index < len(kept) {
			err = &transform.StepError{Index: kept[se.Index], Err: se.Err}
		}
		return decision{}, err
	}
	if dec, err = dec.withComments(dec.next, lim.comments); err != nil {
		return decision{}, err
	}
	c := &Committed{From: dec.base.version, Steps: make([][]byte, len(dec.records)), Dropped: dropped}
	for i, r := range dec.records {
		c.Steps[i] = r.JSON
	}
	dec.result.Commit = c
	return dec, nil
}

// resent looks for the record of sub.Ref in st's history, latest first
// (not only after sub.Version: a client may send a commit again from a
// later version): found, sub is answered as the commit was, when it
// submitted the same steps (sum), and fails with ErrRefReused otherwise.
func resent(st docState, sub submission, sum string) (decision, bool, error) {
	prefix := refPrefix(sub.Ref)
	steps := st.steps
	for i := len(steps) - 1; i >= 0; i-- {
		r := steps[i]
		if r.commit == nil || !bytes.HasPrefix(r.commit, prefix) {
			continue
		}
		var rec commitRecord
		if err := json.Unmarshal(r.commit, &rec); err != nil || rec.Ref != sub.Ref || rec.Kept < 1 || rec.Kept > len(steps)-i {
			return decision{}, true, fmt.Errorf("collab: %q: a step's commit record is damaged: %s", sub.id, r.commit)
		}
		if rec.Sum != sum {
			return decision{}, true, ErrRefReused
		}
		from := st.version - int64(len(steps)) + int64(i)
		c := &Committed{From: from, Steps: make([][]byte, rec.Kept), Dropped: rec.Dropped}
		for j := range rec.Kept {
			c.Steps[j] = steps[i+j].JSON
		}
		res := Result{Version: from + int64(rec.Kept), CommentVersion: st.comments.version, Commit: c}
		return decision{sub: sub, base: st, next: st, result: res}, true, nil
	}
	return decision{}, false, nil
}

// rebaseOnto rebases sub's steps over since onto st's document.
func rebaseOnto(st docState, since []StepRecord, sub submission) (Rebased, error) {
	over := make([]*transform.StepMap, len(since))
	for i, r := range since {
		over[i] = r.Map
		if r.Map == nil { // loaded, not replayed: before the snapshot
			step, err := transform.StepFromJSON(st.schema, r.JSON)
			if err != nil {
				return Rebased{}, fmt.Errorf("collab: %q: step %d of the history does not decode: %w", sub.id, st.version-int64(len(since)-i), err)
			}
			over[i] = step.GetMap()
		}
	}
	steps := make([]transform.Step, len(sub.Steps))
	for i, raw := range sub.Steps {
		step, err := transform.StepFromJSON(st.schema, raw)
		if err != nil {
			return Rebased{}, &transform.StepError{Index: i, Err: err}
		}
		steps[i] = step
	}
	return Rebase(nil, steps, over, st.node)
}

// mapComments maps the ranges of the comments that events create from
// the document that the commit's steps made to the current one (from
// with assoc +1, to with assoc −1), as comments are mapped through
// steps: a comment whose range collapses is not created.
func mapComments(events []CommentEvent, m *transform.Mapping) []CommentEvent {
	if m == nil || !slices.ContainsFunc(events, func(e CommentEvent) bool { return e.Type == CommentCreate }) {
		return events
	}
	out := make([]CommentEvent, 0, len(events))
	for _, e := range events {
		if e.Type == CommentCreate {
			e.From, e.To = m.Map(e.From, 1), m.Map(e.To, -1)
			if e.From >= e.To {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}
