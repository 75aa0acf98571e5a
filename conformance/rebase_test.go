package conformance

// TestRebaseCorpus replays the rebase corpora (js/FORMAT-rebase.md)
// against collab.Rebase: for each concurrent history, the steps it keeps
// and the document they make must be prosemirror-collab's rebaseSteps',
// byte for byte, and so must the indexes of the steps it drops.
//
// How failures compare. Where rebaseSteps throws while taking the
// client's steps back (phase "undo", or "invert" when the client could
// not even invert one of them), Rebase must fail with a
// *collab.UndoError naming the same step, with the JS message and class
// (TransformError for a failed result, as stepsApplyFailed tells it); a
// JS TypeError (V8 dereferencing undefined on such a step) is matched by
// the step alone.
//
// Two exceptions, by design (collab/rebase.go):
//   - When the inverses applied but gave another document than the one
//     the steps were made on ("undone": false; a step with from > to),
//     rebaseSteps goes on from that document, and throws when the steps
//     since do not apply to it (phase "over"). The authority's current
//     document is not made from it: Rebase must fail with an UndoError
//     of Index -1, and nothing else is compared.
//   - Where rebaseSteps throws in its redo loop, Transform.maybeStep
//     throwing on a mapped step (phase "apply") or the inverse of one
//     that applied throwing (phase "reinvert"), the client's
//     receiveTransaction fails. Rebase drops a step that does not apply
//     whichever way JS fails, and needs no inverses: it must agree with
//     JS up to that step (dropping it for "apply", keeping it for
//     "reinvert"); what JS never got to is not compared.
//
// Each case runs twice: with the base document, as above, and without
// it, as the authority rebases (from the steps' maps alone). Without it
// the answers must be the same, but for steps with a range that ends
// before it starts (a replace from after to), which Rebase then refuses
// with ErrReversedRange: their inverse's map is not their map inverted.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// rebaseCase is one line of a rebase corpus. Steps and documents are
// kept as raw JSON and compared with Go's rendered the way
// JSON.stringify writes them.
type rebaseCase struct {
	ID        int               `json:"id"`
	Schema    string            `json:"schema"`
	Over      string            `json:"over"`
	Ops       json.RawMessage   `json:"ops"` // for humans only
	Doc       json.RawMessage   `json:"doc"`
	Steps     []json.RawMessage `json:"steps"`
	OverSteps []json.RawMessage `json:"overSteps"`
	Undone    *bool             `json:"undone"`
	Result    *rebaseResult     `json:"result"`
	Threw     *rebaseThrew      `json:"threw"`
}

type rebaseResult struct {
	Steps   []json.RawMessage `json:"steps"`
	Dropped json.RawMessage   `json:"dropped"`
	Doc     json.RawMessage   `json:"doc"`
}

type rebaseThrew struct {
	Phase     string            `json:"phase"`
	Step      int               `json:"step"`
	Error     json.RawMessage   `json:"error"`
	ErrorName string            `json:"errorName"`
	Steps     []json.RawMessage `json:"steps"`
	Dropped   json.RawMessage   `json:"dropped"`
}

const rebaseCommitted = "testdata/rebase/corpus.jsonl"

// rebaseVersions are the packages whose behaviour collab.Rebase ports.
var rebaseVersions = map[string]string{
	"prosemirror-collab":    "1.3.1",
	"prosemirror-transform": "1.12.7",
	"prosemirror-model":     "1.25.13",
}

func TestRebaseCorpus(t *testing.T) {
	schemas := loadSchemas(t)
	for _, file := range corpusFiles(rebaseCommitted, "PMA_REBASE_CORPUS") {
		h, lines := readCorpus(t, file, "pmauthority-rebase-conformance", 1)
		checkVersions(t, file, h, rebaseVersions, "collab.Rebase")
		var stats stepsStats
		r := checkCases(lines, func(line []byte) *caseCheck { return rebaseCheckCase(schemas, line, &stats) })
		r.report(t, file)
		t.Logf("%s: seed %d; JS outcomes %s; by design (not compared in full): %s",
			file, h.Seed, countsText(stats.outcomes), countsText(stats.byDesign))
	}
}

// rebaseCheckCase replays one case line and compares every recorded
// field.
func rebaseCheckCase(schemas map[string]*model.Schema, line []byte, stats *stepsStats) *caseCheck {
	var rc rebaseCase
	if err := strictUnmarshal(line, &rc); err != nil {
		c := &caseCheck{id: -1}
		c.fail("line", "", "a case", err.Error())
		return c
	}
	c := &caseCheck{id: rc.ID, schema: rc.Schema, kind: "over " + rc.Over}
	s := schemas[rc.Schema]
	if s == nil {
		c.fail("schema", "", "a known schema", rc.Schema)
		return c
	}
	base, err := s.NodeFromJSON(rc.Doc)
	if err != nil {
		c.fail("doc", "", "a valid start document", err.Error())
		return c
	}
	c.eq("doc", "round trip", rc.Doc, base.AppendJSON(nil))
	steps, ok := rebaseSteps(c, s, "steps", rc.Steps)
	if !ok {
		return c
	}
	over, ok := rebaseSteps(c, s, "overSteps", rc.OverSteps)
	if !ok {
		return c
	}
	current := base
	maps := make([]*transform.StepMap, len(over))
	for i, st := range over {
		if current, err = st.Apply(current); err != nil {
			c.fail("overSteps", "step "+strconv.Itoa(i), "applies to the start document after the ones before", err.Error())
			return c
		}
		maps[i] = st.GetMap()
	}
	got, err := collab.Rebase(base, steps, maps, current)
	// The authority rebases without base, from the maps alone.
	fromMaps, mapsErr := collab.Rebase(nil, steps, maps, current)
	var ue *collab.UndoError
	errors.As(err, &ue)

	th := rc.Threw
	switch {
	case th != nil && (th.Phase == "invert" || th.Phase == "undo"):
		stats.add(&stats.outcomes, "threw in "+th.Phase)
		rebaseCheckUndo(c, th, err, ue)
	case rc.Undone == nil:
		c.fail("undone", "", "(absent)", "recorded when the inverses applied")
	case !*rc.Undone:
		outcome := "undone to another document"
		if th != nil {
			outcome += ", threw in " + th.Phase
		}
		stats.add(&stats.outcomes, outcome)
		stats.add(&stats.byDesign, "undone to another document")
		if ue == nil || ue.Index != -1 {
			c.fail("undone", "", "false: Rebase fails with an UndoError of Index -1", rebaseOutcome(got, err))
		}
	case err != nil:
		c.fail("result", "", "Rebase succeeds", err.Error())
	case th != nil && (th.Phase == "apply" || th.Phase == "reinvert"):
		stats.add(&stats.outcomes, "threw in "+th.Phase)
		stats.add(&stats.byDesign, "threw in "+th.Phase)
		rebaseCheckPrefix(c, "", th, got, len(steps))
		if rebaseMapsCheck(c, stats, steps, mapsErr) {
			rebaseCheckPrefix(c, "maps.", th, fromMaps, len(steps))
		}
	case th != nil:
		c.fail("threw.phase", "", th.Phase, "not a phase after the undo, which gave back the start document")
	case rc.Result == nil:
		c.fail("result", "", "(absent)", "a result or a throw")
	default:
		res := rc.Result
		if len(got.Dropped) == 0 {
			stats.add(&stats.outcomes, "all kept")
		} else {
			stats.add(&stats.outcomes, "some dropped")
		}
		c.eq("result.dropped", "", res.Dropped, stepsIntsText(got.Dropped))
		rebaseCheckSteps(c, "result.steps", res.Steps, got.Steps)
		c.eq("result.doc", "", res.Doc, got.Doc.AppendJSON(nil))
		if rebaseMapsCheck(c, stats, steps, mapsErr) {
			c.eq("maps.result.dropped", "", res.Dropped, stepsIntsText(fromMaps.Dropped))
			rebaseCheckSteps(c, "maps.result.steps", res.Steps, fromMaps.Steps)
			c.eq("maps.result.doc", "", res.Doc, fromMaps.Doc.AppendJSON(nil))
		}
	}
	return c
}

// rebaseSteps decodes a list of recorded steps, checking that each
// comes back as recorded.
func rebaseSteps(c *caseCheck, s *model.Schema, field string, raws []json.RawMessage) ([]transform.Step, bool) {
	steps := make([]transform.Step, len(raws))
	for i, raw := range raws {
		st, err := transform.StepFromJSON(s, raw)
		if err != nil {
			c.fail(field, "step "+strconv.Itoa(i), string(raw), err.Error())
			return nil, false
		}
		c.eq(field, "step "+strconv.Itoa(i)+" round trip", raw, st.AppendJSON(nil))
		steps[i] = st
	}
	return steps, true
}

// rebaseCheckSteps compares recorded steps with Go's.
func rebaseCheckSteps(c *caseCheck, field string, want []json.RawMessage, got []transform.Step) {
	if len(want) != len(got) {
		c.fail(field, "length", strconv.Itoa(len(want)), strconv.Itoa(len(got)))
	}
	for i := range min(len(want), len(got)) {
		c.eq(field, "step "+strconv.Itoa(i), want[i], got[i].AppendJSON(nil))
	}
}

// rebaseCheckUndo compares a throw while taking the client's steps back
// with Go's UndoError.
func rebaseCheckUndo(c *caseCheck, th *rebaseThrew, err error, ue *collab.UndoError) {
	if ue == nil || ue.Index != th.Step || ue.Err == nil {
		c.fail("threw", "", fmt.Sprintf("an UndoError at step %d (%s: %s)", th.Step, th.ErrorName, th.Error), fmt.Sprint(err))
		return
	}
	c.fields++
	if th.ErrorName == "TypeError" {
		return
	}
	if !c.eq("threw.error", "", th.Error, jsonString(errorMessage(ue.Err))) {
		c.diffs[len(c.diffs)-1].detail = "Go error: " + ue.Err.Error()
	}
	name := stepsErrorName(ue.Err)
	if th.Phase == "undo" && stepsApplyFailed(ue.Err) {
		name = "TransformError"
	}
	c.eq("threw.errorName", "", jsonString(th.ErrorName), jsonString(name))
}

// rebaseCheckPrefix compares Go's result with what rebaseSteps had done
// when it threw in its redo loop at step th.Step.
func rebaseCheckPrefix(c *caseCheck, prefix string, th *rebaseThrew, got collab.Rebased, n int) {
	if th.Step < 0 || th.Step >= n {
		c.fail(prefix+"threw.step", "", "a step of the case", strconv.Itoa(th.Step))
		return
	}
	var dropped []int
	kept := 0 // Go's kept steps before th.Step
	for i := range th.Step {
		if slices.Contains(got.Dropped, i) {
			dropped = append(dropped, i)
		} else {
			kept++
		}
	}
	c.eq(prefix+"threw.dropped", "", th.Dropped, stepsIntsText(dropped))
	dropsIt := slices.Contains(got.Dropped, th.Step)
	if want := th.Phase == "apply"; dropsIt != want {
		c.fail(prefix+"threw.phase", "", th.Phase, fmt.Sprintf("Go drops step %d: %t", th.Step, dropsIt))
		return
	}
	if !dropsIt {
		kept++
	}
	rebaseCheckSteps(c, prefix+"threw.steps", th.Steps, got.Steps[:min(kept, len(got.Steps))])
}

// rebaseMapsCheck reports whether the rebase from the maps alone
// succeeded, so that its result is to be compared.
func rebaseMapsCheck(c *caseCheck, stats *stepsStats, steps []transform.Step, err error) bool {
	if err == nil {
		return true
	}
	if se, ok := errors.AsType[*transform.StepError](err); ok && errors.Is(err, collab.ErrReversedRange) {
		if st, ok := steps[se.Index].(*transform.ReplaceStep); ok && st.From > st.To {
			stats.add(&stats.byDesign, "a replace from after to, refused without the base")
			return false
		}
		if st, ok := steps[se.Index].(*transform.ReplaceAroundStep); ok && (st.From > st.GapFrom || st.GapFrom > st.GapTo || st.GapTo > st.To) {
			stats.add(&stats.byDesign, "a replaceAround with its gap outside, refused without the base")
			return false
		}
	}
	c.fail("maps", "", "Rebase without base succeeds", err.Error())
	return false
}

// rebaseOutcome describes Go's outcome for a report.
func rebaseOutcome(got collab.Rebased, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d steps kept, dropped %v", len(got.Steps), got.Dropped)
}
