package conformance

// TestStepsCorpus replays the step corpora (js/FORMAT-steps.md) against
// the transform package: every recorded field of every case must come out
// the same, byte for byte where it is JSON. TestStepsCLI sends the same
// cases through `pmauthority apply --jsonl`.
//
// How failures compare. A JS failure is a failed StepResult or a thrown
// exception; in Go both are an error from Step.Apply, and a Step.fromJSON
// throw is an error from transform.StepFromJSON. A recorded failure
// matches when Go fails at the same step, in the same phase (decoding for
// "fromJSON-throw", applying for the other two kinds), with the same kind
// (a Go *model.ReplaceError or one of the explicit StepResult.fail
// messages is "apply-failed", anything else from Apply "apply-throw"), the
// same JS class (errorName) and the same message. The message rule: the
// Go message equals the JS message, or the Go error is a *model.JSONError
// whose Msg equals it (its Error() adds " (at path)", the field at
// fault). Through the command line, where only the text is left, that is:
// equal, or the JS message followed by " (at " … ")".
//
// Two exceptions:
//   - errorName "TypeError" records V8 crashing on malformed input
//     ("Cannot read properties of undefined …"): Go must fail at the same
//     step, with any message, in either phase.
//   - Positions that are negative, fractional or beyond 2^53-1 are
//     rejected by Step decoding by design (DESIGN.md, "Step semantics"
//     and "JSON fidelity"), where JS goes on with undefined behaviour
//     (mutations pos-fractional and number-extreme are marked "JS
//     behaviour only"; pos-negative and replaceAround-gap can produce
//     such positions too). So are such slice open depths (openStart,
//     openEnd; mutation slice-open-depth), on which JS crashes or fails
//     with a message that depends on the arithmetic. When a step carries
//     such a number in one of its kind's position fields or its slice's
//     open depths and JS did not fail before it, Go must fail there in
//     decoding, with the JS message or with its own "… must be a
//     non-negative integer, not N" naming the field; the rest of the case
//     is JS behaviour and not compared. A spelling that JSON.parse rounds
//     to a valid position (1e-9 added to 1e15, 2.0, 2e0 …) is a valid
//     position and compared in full.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// stepsCase is one line of a step corpus. Answers are kept as raw JSON
// (strings included: they may hold lone surrogates, which encoding/json
// would replace) and compared with Go's answers rendered the way
// JSON.stringify writes them.
type stepsCase struct {
	Seed        int               `json:"seed"`
	Case        int               `json:"case"`
	Schema      string            `json:"schema"`
	Mutation    string            `json:"mutation"`
	MutatedStep *int              `json:"mutatedStep"`
	Ops         json.RawMessage   `json:"ops"` // for humans only
	Doc         json.RawMessage   `json:"doc"`
	Steps       []json.RawMessage `json:"steps"`
	StepsText   []json.RawMessage `json:"stepsText"`
	Result      stepsResult       `json:"result"`

	Inverted    []json.RawMessage `json:"inverted"`
	Positions   []int             `json:"positions"`
	Mapped      []json.RawMessage `json:"mapped"`
	MappedFlags []json.RawMessage `json:"mappedFlags"`
	StepMaps    []stepsStepMap    `json:"stepMaps"`
	Merged      []json.RawMessage `json:"merged"`
	Rebased     *stepsRebased     `json:"rebased"`
}

type stepsResult struct {
	Doc        json.RawMessage `json:"doc"`
	FailedStep *int            `json:"failedStep"`
	Kind       string          `json:"kind"`
	Error      json.RawMessage `json:"error"`
	ErrorName  string          `json:"errorName"`
}

// stepsThrown is a recorded exception: {"error", "errorName"}.
type stepsThrown struct {
	Error     json.RawMessage `json:"error"`
	ErrorName string          `json:"errorName"`
}

type stepsStepMap struct {
	Ranges         json.RawMessage   `json:"ranges"`
	Mapped         []json.RawMessage `json:"mapped"`
	InvertedMapped []json.RawMessage `json:"invertedMapped"`
}

type stepsRebased struct {
	Other  []json.RawMessage `json:"other"`
	Mapped []json.RawMessage `json:"mapped"`
	Collab *stepsCollab      `json:"collab"`
}

type stepsCollab struct {
	Error     json.RawMessage   `json:"error"`
	ErrorName string            `json:"errorName"`
	Steps     []json.RawMessage `json:"steps"`
	Doc       json.RawMessage   `json:"doc"`
	Mirror    []int             `json:"mirror"`
	Positions []int             `json:"positions"`
	Mapped    []json.RawMessage `json:"mapped"`
}

// stepsCollabStep is an element of collab.steps (null aside).
type stepsCollabStep struct {
	Step      json.RawMessage `json:"step"`
	Failed    json.RawMessage `json:"failed"`
	Error     json.RawMessage `json:"error"`
	ErrorName string          `json:"errorName"`
}

const stepsCommitted = "testdata/steps/corpus.jsonl"

func TestStepsCorpus(t *testing.T) {
	schemas := loadSchemas(t)
	for _, file := range corpusFiles(stepsCommitted, "PMA_STEP_CORPUS") {
		lines := stepsReadCorpus(t, file)
		var stats stepsStats
		r := checkCases(lines, func(line []byte) *caseCheck {
			c, _ := stepsCheckCase(schemas, line, &stats)
			return c
		})
		r.report(t, file)
		stats.log(t, file)
	}
}

// stepsReadCorpus reads a step corpus (no header line: every line is a
// case) and checks that its lines are cases 0, 1, … of one seed.
func stepsReadCorpus(t testing.TB, path string) [][]byte {
	t.Helper()
	lines := readLines(t, path)
	// Every line opens with its seed and case number.
	var seed int
	if _, err := fmt.Sscanf(string(lines[0][:min(len(lines[0]), 40)]), `{"seed":%d,`, &seed); err != nil {
		t.Fatalf("%s:1: no seed: %v", path, err)
	}
	for i, line := range lines {
		if !bytes.HasPrefix(line, fmt.Appendf(nil, `{"seed":%d,"case":%d,`, seed, i)) {
			t.Fatalf("%s:%d: line does not start with seed %d, case %d", path, i+1, seed, i)
		}
	}
	return lines
}

// stepsStats counts what a corpus exercised besides field comparisons.
type stepsStats struct {
	mu         sync.Mutex
	outcomes   map[string]int // "doc", "fromJSON-throw/RangeError" …
	byDesign   map[string]int // mutation → cases whose positions Go rejects by design
	typeErrors int            // JS TypeErrors matched by index only
}

func (s *stepsStats) add(m *map[string]int, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[key]++
}

func (s *stepsStats) log(t testing.TB, file string) {
	t.Helper()
	t.Logf("%s: JS outcomes %s; JS TypeErrors matched by step index only: %d; positions rejected by design (DESIGN.md; JS behaviour not compared): %s",
		file, countsText(s.outcomes), s.typeErrors, countsText(s.byDesign))
}

func countsText(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, m[k])
	}
	return b.String()
}

// stepsRun is Go's replay of a case's steps.
type stepsRun struct {
	texts [][]byte         // the exact JSON text of each step
	steps []transform.Step // the decoded steps, up to the failing one
	docs  []*model.Node    // docs[i] is the document step i applies to; the last is the result
	fail  int              // the failing step, -1 when all applied
	phase string           // "fromJSON" or "apply" when one failed
	err   error
}

// final returns the document after all steps (nil when one failed).
func (r *stepsRun) final() *model.Node {
	if r.fail >= 0 {
		return nil
	}
	return r.docs[len(r.docs)-1]
}

// stepTexts returns the exact JSON text of each step: stepsText when
// present (authoritative, FORMAT-steps.md), else the recorded steps.
func (sc *stepsCase) stepTexts() ([][]byte, error) {
	if sc.StepsText == nil {
		texts := make([][]byte, len(sc.Steps))
		for i, s := range sc.Steps {
			texts[i] = s
		}
		return texts, nil
	}
	if len(sc.StepsText) != len(sc.Steps) {
		return nil, fmt.Errorf("%d stepsText for %d steps", len(sc.StepsText), len(sc.Steps))
	}
	texts := make([][]byte, len(sc.StepsText))
	for i, raw := range sc.StepsText {
		// jsonscan keeps lone surrogates (as WTF-8), as the step text has them.
		s, err := jsonscan.NewDecoder(raw).ReadString()
		if err != nil {
			return nil, fmt.Errorf("stepsText[%d]: %v", i, err)
		}
		texts[i] = []byte(s)
	}
	return texts, nil
}

// stepsReplay decodes and applies the steps in order, as a server would.
func stepsReplay(schema *model.Schema, doc *model.Node, texts [][]byte) *stepsRun {
	r := &stepsRun{texts: texts, docs: []*model.Node{doc}, fail: -1}
	for i, text := range texts {
		st, err := transform.StepFromJSON(schema, text)
		if err != nil {
			r.fail, r.phase, r.err = i, "fromJSON", err
			return r
		}
		next, err := st.Apply(doc)
		if err != nil {
			r.fail, r.phase, r.err = i, "apply", err
			return r
		}
		r.steps = append(r.steps, st)
		r.docs = append(r.docs, next)
		doc = next
	}
	return r
}

// stepsCheckCase replays one case line and compares every recorded field.
// It also returns the case and Go's run (nil if the case could not be
// read) for the command-line check.
func stepsCheckCase(schemas map[string]*model.Schema, line []byte, stats *stepsStats) (*caseCheck, *stepsCaseRun) {
	var sc stepsCase
	if err := strictUnmarshal(line, &sc); err != nil {
		c := &caseCheck{id: -1}
		c.fail("line", "", "a case", err.Error())
		return c, nil
	}
	kind := sc.Mutation
	if kind == "" {
		kind = "generated"
	}
	c := &caseCheck{id: sc.Case, schema: sc.Schema, kind: kind}
	s := schemas[sc.Schema]
	if s == nil {
		c.fail("schema", "", "a known schema", sc.Schema)
		return c, nil
	}
	doc, err := s.NodeFromJSON(sc.Doc)
	if err != nil {
		c.fail("doc", "", "a valid start document", err.Error())
		return c, nil
	}
	c.eq("doc", "round trip", sc.Doc, doc.AppendJSON(nil))
	texts, err := sc.stepTexts()
	if err != nil {
		c.fail("stepsText", "", "one JSON string per step", err.Error())
		return c, nil
	}
	run := stepsReplay(s, doc, texts)
	cr := &stepsCaseRun{sc: &sc, run: run}

	res := &sc.Result
	outcome := "doc"
	if res.Doc == nil {
		outcome = res.Kind
		if res.ErrorName != "" {
			outcome += "/" + res.ErrorName
		}
	}
	stats.add(&stats.outcomes, outcome)

	if bad := stepsFirstBadPosition(texts); bad >= 0 && (res.FailedStep == nil || *res.FailedStep >= bad) {
		if !stepsSameFailure(run, res) {
			if run.fail != bad || run.phase != "fromJSON" || !stepsRejectsPosition(run.err) {
				c.fail("result", fmt.Sprintf("step %d has a position DESIGN.md rejects", bad),
					"Go rejects it in decoding (\"… must be a non-negative integer, not N\")", stepsRunText(run))
			} else {
				cr.byDesign = true
				stats.add(&stats.byDesign, kind)
				if stepsJSOnly[sc.Mutation] && sc.MutatedStep != nil && *sc.MutatedStep != bad {
					c.fail("mutatedStep", "", fmt.Sprintf("%d, the step with the position Go rejects", bad), strconv.Itoa(*sc.MutatedStep))
				}
			}
			return c, cr
		}
	}

	ok := stepsCheckResult(c, run, res)
	if ok && res.ErrorName == "TypeError" {
		stats.mu.Lock()
		stats.typeErrors++
		stats.mu.Unlock()
	}
	switch {
	case res.Doc != nil && run.fail < 0:
		// Compared even when the documents differ: the diffs may tell why.
		stepsCheckSuccess(c, s, &sc, run)
	case res.Doc == nil:
		for _, f := range sc.successFields() {
			c.eq(f.name, "", f.raw, nil)
		}
	}
	return c, cr
}

// stepsJSOnly are the mutations whose cases FORMAT-steps.md marks "JS
// behaviour only": positions that JSON.parse reads as fractional or out
// of range. Those that JSON.parse rounds to a valid position (1e-9 added
// to 1e15, N.00000000000000001) are compared in full like any other.
var stepsJSOnly = map[string]bool{"pos-fractional": true, "number-extreme": true}

// stepsCaseRun is what the command-line check needs of a replayed case.
type stepsCaseRun struct {
	sc       *stepsCase
	run      *stepsRun
	byDesign bool // Go rejected a position by design where JS went on
}

// successFields lists the fields recorded only when every step applied.
func (sc *stepsCase) successFields() []namedField {
	var f []namedField
	present := func(name string, ok bool) {
		if ok {
			f = append(f, namedField{name, json.RawMessage("(present)")})
		}
	}
	present("inverted", sc.Inverted != nil)
	present("positions", sc.Positions != nil)
	present("mapped", sc.Mapped != nil)
	present("mappedFlags", sc.MappedFlags != nil)
	present("stepMaps", sc.StepMaps != nil)
	present("merged", sc.Merged != nil)
	present("rebased", sc.Rebased != nil)
	return f
}

// stepsRunText describes Go's outcome for a report.
func stepsRunText(r *stepsRun) string {
	if r.fail < 0 {
		return fmt.Sprintf("all %d steps applied", len(r.steps))
	}
	return fmt.Sprintf("step %d fails in %s: %v", r.fail, r.phase, r.err)
}

// stepsCheckResult compares the outcome of applying the steps: the final
// document, or the failing step and its error. It reports whether Go's
// outcome matched.
func stepsCheckResult(c *caseCheck, run *stepsRun, res *stepsResult) bool {
	if res.Doc != nil {
		if run.fail >= 0 {
			c.fail("result", "", "all steps apply", stepsRunText(run))
			return false
		}
		return c.eq("result.doc", "", res.Doc, jsonString(string(run.final().AppendJSON(nil))))
	}
	if res.FailedStep == nil {
		c.fail("result", "", "(a result without doc or failedStep)", stepsRunText(run))
		return false
	}
	if run.fail != *res.FailedStep {
		c.fail("result.failedStep", "", fmt.Sprintf("%d (%s: %s)", *res.FailedStep, res.Kind, res.Error), stepsRunText(run))
		return false
	}
	c.fields++
	if res.ErrorName == "TypeError" {
		// V8 crashed on malformed input: the step index is all that counts.
		return true
	}
	ok := c.eq("result.kind", "", jsonString(res.Kind), jsonString(stepsKind(run)))
	if !c.eq("result.error", "", res.Error, jsonString(errorMessage(run.err))) {
		c.diffs[len(c.diffs)-1].detail = "Go error: " + run.err.Error()
		ok = false
	}
	var name []byte
	if res.Kind != "apply-failed" {
		name = jsonString(stepsErrorName(run.err))
	}
	return c.eq("result.errorName", "", stepsOptString(res.ErrorName), name) && ok
}

// stepsSameFailure reports whether Go failed exactly as recorded (step,
// kind, message), without recording anything.
func stepsSameFailure(run *stepsRun, res *stepsResult) bool {
	if res.FailedStep == nil || run.fail != *res.FailedStep {
		return false
	}
	return res.Kind == stepsKind(run) && bytes.Equal(res.Error, jsonString(errorMessage(run.err)))
}

func stepsOptString(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return jsonString(s)
}

// stepsFailResults are the messages of the failed StepResults that
// prosemirror-transform returns explicitly (StepResult.fail); the others
// are ReplaceErrors caught by StepResult.fromReplace.
var stepsFailResults = map[string]bool{
	"Structure replace would overwrite content":     true,
	"Structure gap-replace would overwrite content": true,
	"Gap is not a flat range":                       true,
	"Content does not fit in gap":                   true,
	"No node at attribute step's position":          true,
	"No node at mark step's position":               true,
}

// stepsApplyFailed reports whether an error of Step.Apply stands for a
// failed StepResult in JS (rather than a thrown exception).
func stepsApplyFailed(err error) bool {
	var re *model.ReplaceError
	return errors.As(err, &re) || stepsFailResults[err.Error()]
}

// stepsKind is the corpus kind of a failed run.
func stepsKind(run *stepsRun) string {
	switch {
	case run.phase == "fromJSON":
		return "fromJSON-throw"
	case stepsApplyFailed(run.err):
		return "apply-failed"
	}
	return "apply-throw"
}

// stepsPlainErrors are the messages prosemirror-model throws as a plain
// Error rather than a RangeError.
var stepsPlainErrors = map[string]bool{
	"NodeType.create can't construct text nodes":           true,
	"Called contentMatchAt on a node with invalid content": true,
}

// stepsErrorName is the JS class of a thrown error: errorType, except for
// the plain Errors of prosemirror-model.
func stepsErrorName(err error) string {
	if stepsPlainErrors[errorMessage(err)] {
		return "Error"
	}
	return errorType(err)
}

// stepsPositionFields are the position fields of each step kind, read by
// its fromJSON.
var stepsPositionFields = map[string][]string{
	"replace":        {"from", "to"},
	"replaceAround":  {"from", "to", "gapFrom", "gapTo", "insert"},
	"addMark":        {"from", "to"},
	"removeMark":     {"from", "to"},
	"addNodeMark":    {"pos"},
	"removeNodeMark": {"pos"},
	"attr":           {"pos"},
}

// stepsFirstBadPosition returns the index of the first step with a
// position that DESIGN.md rejects, -1 if none.
func stepsFirstBadPosition(texts [][]byte) int {
	for i, text := range texts {
		if stepsHasBadPosition(text) {
			return i
		}
	}
	return -1
}

// stepsHasBadPosition reports whether a step's JSON has, in a position
// field of its kind (or of a markSet's steps) or in its slice's openStart
// or openEnd, a number that JSON.parse reads as negative, fractional,
// infinite or beyond 2^53-1.
func stepsHasBadPosition(text []byte) bool {
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return false
	}
	var bad func(v any, nested bool) bool
	bad = func(v any, nested bool) bool {
		obj, ok := v.(map[string]any)
		if !ok {
			return false
		}
		typ, _ := obj["stepType"].(string)
		if typ == "markSet" && !nested {
			steps, _ := obj["steps"].([]any)
			for _, s := range steps {
				if bad(s, true) {
					return true
				}
			}
			return false
		}
		for _, f := range stepsPositionFields[typ] {
			if n, ok := obj[f].(json.Number); ok && stepsBadNumber(string(n)) {
				return true
			}
		}
		if slice, ok := obj["slice"].(map[string]any); ok && (typ == "replace" || typ == "replaceAround") {
			for _, f := range [2]string{"openStart", "openEnd"} {
				if n, ok := slice[f].(json.Number); ok && stepsBadNumber(string(n)) {
					return true
				}
			}
		}
		return false
	}
	return bad(v, false)
}

// stepsBadNumber reports whether JSON number text is not a position once
// JSON.parse has read it.
func stepsBadNumber(text string) bool {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return true
	}
	return f < 0 || f > 1<<53-1 || f != math.Trunc(f)
}

// stepsRejectsPosition reports whether err is Step decoding rejecting a
// position by design: a *model.JSONError "… F must be a non-negative
// integer, not N" where N really is not one.
func stepsRejectsPosition(err error) bool {
	var je *model.JSONError
	if !errors.As(err, &je) || je.Path == "" {
		return false
	}
	_, n, ok := strings.Cut(je.Msg, " must be a non-negative integer, not ")
	return ok && stepsBadNumber(n)
}

// stepsCheckSuccess compares the fields recorded when every step applied.
func stepsCheckSuccess(c *caseCheck, s *model.Schema, sc *stepsCase, run *stepsRun) {
	steps := run.steps
	n := len(steps)
	start, final := run.docs[0], run.final()

	// inverted
	inverted := make([]transform.Step, n)
	allInverted := true
	if len(sc.Inverted) != n {
		c.fail("inverted", "length", strconv.Itoa(n), strconv.Itoa(len(sc.Inverted)))
	} else {
		for i, st := range steps {
			inv, err := st.Invert(run.docs[i])
			where := "step " + strconv.Itoa(i)
			if err != nil {
				allInverted = false
				stepsCheckThrown(c, "inverted", where, sc.Inverted[i], err)
				continue
			}
			inverted[i] = inv
			c.eq("inverted", where, sc.Inverted[i], jsonString(string(inv.AppendJSON(nil))))
		}
	}

	// positions, mapped, mappedFlags
	maps := make([]*transform.StepMap, n)
	for i, st := range steps {
		maps[i] = st.GetMap()
	}
	mapping := transform.NewMapping(maps)
	size := start.Content.Size()
	for i, p := range sc.Positions {
		if p < 0 || p > size || (i > 0 && p <= sc.Positions[i-1]) {
			c.fail("positions", "", fmt.Sprintf("ascending positions in 0..%d", size), fmt.Sprint(sc.Positions))
			break
		}
	}
	if len(sc.Mapped) != 2*len(sc.Positions) || len(sc.MappedFlags) != len(sc.Mapped) {
		c.fail("mapped", "length", fmt.Sprintf("%d entries in mapped and mappedFlags", 2*len(sc.Positions)),
			fmt.Sprintf("%d and %d", len(sc.Mapped), len(sc.MappedFlags)))
	} else {
		k := 0
		for _, p := range sc.Positions {
			for _, assoc := range [2]int{-1, 1} {
				r := mapping.MapResult(p, assoc)
				where := fmt.Sprintf("pos %d assoc %d", p, assoc)
				c.eq("mapped", where, sc.Mapped[k], fmt.Appendf(nil, "[%d,%d,%d,%t]", p, assoc, r.Pos, r.Deleted()))
				c.eq("mappedFlags", where, sc.MappedFlags[k],
					fmt.Appendf(nil, "[%t,%t,%t]", r.DeletedBefore(), r.DeletedAfter(), r.DeletedAcross()))
				k++
			}
		}
	}

	// stepMaps
	if len(sc.StepMaps) != n {
		c.fail("stepMaps", "length", strconv.Itoa(n), strconv.Itoa(len(sc.StepMaps)))
	} else {
		for i, m := range maps {
			rec := &sc.StepMaps[i]
			where := "step " + strconv.Itoa(i)
			ranges := []byte{'['}
			m.ForEach(func(oldStart, oldEnd, newStart, newEnd int) {
				if len(ranges) > 1 {
					ranges = append(ranges, ',')
				}
				ranges = fmt.Appendf(ranges, "[%d,%d,%d,%d]", oldStart, oldEnd, newStart, newEnd)
			})
			c.eq("stepMaps.ranges", where, rec.Ranges, append(ranges, ']'))
			stepsCheckMapResults(c, "stepMaps.mapped", where, rec.Mapped, m)
			stepsCheckMapResults(c, "stepMaps.invertedMapped", where, rec.InvertedMapped, m.Invert())
		}
	}

	// merged
	if len(sc.Merged) != max(n-1, 0) {
		c.fail("merged", "length", strconv.Itoa(max(n-1, 0)), strconv.Itoa(len(sc.Merged)))
	} else {
		for i := 0; i+1 < n; i++ {
			var got []byte = jsonNull
			if m, ok := steps[i].Merge(steps[i+1]); ok {
				got = jsonString(string(m.AppendJSON(nil)))
			}
			c.eq("merged", fmt.Sprintf("steps %d+%d", i, i+1), sc.Merged[i], got)
		}
	}

	if sc.Rebased == nil {
		c.fail("rebased", "", "(absent)", "recorded when every step applies")
		return
	}
	stepsCheckRebased(c, s, sc, steps, final, inverted, allInverted)
}

// stepsCheckThrown compares a recorded {"error", "errorName"} with a Go
// error.
func stepsCheckThrown(c *caseCheck, field, where string, want json.RawMessage, err error) {
	var th stepsThrown
	if strictUnmarshal(want, &th) != nil || th.Error == nil {
		c.fail(field, where, string(want), "error: "+err.Error())
		return
	}
	if th.ErrorName == "TypeError" {
		c.fields++
		return
	}
	if !c.eq(field+".error", where, th.Error, jsonString(errorMessage(err))) {
		c.diffs[len(c.diffs)-1].detail = "Go error: " + err.Error()
	}
	c.eq(field+".errorName", where, jsonString(th.ErrorName), jsonString(stepsErrorName(err)))
}

// stepsCheckMapResults compares recorded [p, assoc, pos, deleted,
// deletedBefore, deletedAfter, deletedAcross] entries with m.
func stepsCheckMapResults(c *caseCheck, field, where string, entries []json.RawMessage, m transform.Mappable) {
	if entries == nil {
		c.fail(field, where, "(absent)", "a list")
		return
	}
	for _, e := range entries {
		var in []json.RawMessage
		var p, assoc int
		if json.Unmarshal(e, &in) != nil || len(in) != 7 || json.Unmarshal(in[0], &p) != nil || json.Unmarshal(in[1], &assoc) != nil {
			c.fail(field, where, string(e), "an entry [p, assoc, pos, deleted, deletedBefore, deletedAfter, deletedAcross]")
			continue
		}
		c.eq(field, fmt.Sprintf("%s pos %d assoc %d", where, p, assoc), e, mapResultText(p, assoc, m.MapResult(p, assoc)))
	}
}

// mapResultText renders a 7-element mapping entry.
func mapResultText(p, assoc int, r transform.MapResult) []byte {
	return fmt.Appendf(nil, "[%d,%d,%d,%t,%t,%t,%t]", p, assoc, r.Pos, r.Deleted(), r.DeletedBefore(), r.DeletedAfter(), r.DeletedAcross())
}

// stepsCheckRebased compares rebased: each step mapped through the other
// branch, and prosemirror-collab's rebaseSteps over it.
func stepsCheckRebased(c *caseCheck, s *model.Schema, sc *stepsCase, steps []transform.Step, final *model.Node,
	inverted []transform.Step, allInverted bool) {
	rb := sc.Rebased
	other := make([]transform.Step, len(rb.Other))
	otherMaps := make([]*transform.StepMap, len(rb.Other))
	for i, raw := range rb.Other {
		st, err := transform.StepFromJSON(s, raw)
		if err != nil {
			c.fail("rebased.other", "step "+strconv.Itoa(i), string(raw), err.Error())
			return
		}
		c.eq("rebased.other", "step "+strconv.Itoa(i), raw, st.AppendJSON(nil))
		other[i], otherMaps[i] = st, st.GetMap()
	}
	if len(rb.Mapped) != len(steps) {
		c.fail("rebased.mapped", "length", strconv.Itoa(len(steps)), strconv.Itoa(len(rb.Mapped)))
	} else {
		otherMapping := transform.NewMapping(otherMaps)
		for i, st := range steps {
			var got []byte = jsonNull
			if m := st.Map(otherMapping); m != nil {
				got = jsonString(string(m.AppendJSON(nil)))
			}
			c.eq("rebased.mapped", "step "+strconv.Itoa(i), rb.Mapped[i], got)
		}
	}
	if !allInverted {
		c.eq("rebased.collab", "", stepsPresent(rb.Collab != nil), nil)
		return
	}
	if rb.Collab == nil {
		c.fail("rebased.collab", "", "(absent)", "present: every step inverted")
		return
	}
	stepsCheckCollab(c, rb.Collab, steps, other, final, inverted)
}

func stepsPresent(ok bool) []byte {
	if ok {
		return []byte("(present)")
	}
	return nil
}

// stepsCollabTransform is the part of a prosemirror-transform Transform
// that rebaseSteps uses: a document, the mapping of the steps applied and
// the number of steps.
type stepsCollabTransform struct {
	doc     *model.Node
	mapping transform.Mapping
	mirror  []int
}

// maybeStep applies st, appending its map when it applies.
func (tr *stepsCollabTransform) maybeStep(st transform.Step) error {
	next, err := st.Apply(tr.doc)
	if err != nil {
		return err
	}
	tr.doc = next
	tr.mapping.AppendMap(st.GetMap(), -1)
	return nil
}

// stepsCheckCollab replays prosemirror-collab's rebaseSteps as
// FORMAT-steps.md quotes it, with tr = new Transform(final).
func stepsCheckCollab(c *caseCheck, cb *stepsCollab, steps, other []transform.Step, final *model.Node, inverted []transform.Step) {
	tr := &stepsCollabTransform{doc: final}
	// tr.step throws on a failed result (a TransformError with its
	// message) as well as passing exceptions on.
	var thrown error
	for i := len(inverted) - 1; i >= 0 && thrown == nil; i-- {
		thrown = tr.maybeStep(inverted[i])
	}
	for i := 0; i < len(other) && thrown == nil; i++ {
		thrown = tr.maybeStep(other[i])
	}
	if thrown != nil || cb.Error != nil {
		if thrown == nil {
			c.fail("rebased.collab.error", "", string(cb.Error), "(none: the inverted and other steps apply)")
			return
		}
		name := "TransformError"
		if !stepsApplyFailed(thrown) {
			name = stepsErrorName(thrown)
		}
		if cb.ErrorName != "TypeError" {
			c.eq("rebased.collab.error", "", cb.Error, jsonString(errorMessage(thrown)))
			c.eq("rebased.collab.errorName", "", stepsOptString(cb.ErrorName), jsonString(name))
		} else {
			c.fields++
		}
		c.eq("rebased.collab.steps", "", stepsPresent(cb.Steps != nil), nil)
		c.eq("rebased.collab.doc", "", cb.Doc, nil)
		return
	}
	c.eq("rebased.collab.error", "", cb.Error, nil)
	if len(cb.Steps) == 0 && len(steps) > 0 {
		c.fail("rebased.collab.steps", "", "(absent)", fmt.Sprintf("%d entries", len(steps)))
		return
	}
	stopped := false
	for i, mapFrom := 0, len(steps); i < len(steps); i++ {
		where := "step " + strconv.Itoa(i)
		mapped := steps[i].Map(tr.mapping.Slice(mapFrom, len(tr.mapping.Maps())))
		mapFrom--
		if i >= len(cb.Steps) {
			c.fail("rebased.collab.steps", where, "(list ended)", "an entry")
			return
		}
		want := cb.Steps[i]
		if mapped == nil {
			c.eq("rebased.collab.steps", where, want, jsonNull)
			continue
		}
		var rec stepsCollabStep
		if strictUnmarshal(want, &rec) != nil {
			c.fail("rebased.collab.steps", where, string(want), "{\"step\": …}")
			return
		}
		c.eq("rebased.collab.steps.step", where, rec.Step, jsonString(string(mapped.AppendJSON(nil))))
		err := tr.maybeStep(mapped)
		switch {
		case err == nil:
			c.eq("rebased.collab.steps.failed", where, rec.Failed, nil)
			c.eq("rebased.collab.steps.error", where, rec.Error, nil)
			tr.mapping.SetMirror(mapFrom, len(tr.mapping.Maps())-1)
			tr.mirror = append(tr.mirror, mapFrom, len(tr.mapping.Maps())-1)
		case stepsApplyFailed(err):
			c.eq("rebased.collab.steps.failed", where, rec.Failed, jsonString(errorMessage(err)))
			c.eq("rebased.collab.steps.error", where, rec.Error, nil)
		default:
			// maybeStep threw: the list stops here.
			c.eq("rebased.collab.steps.failed", where, rec.Failed, nil)
			if rec.ErrorName == "TypeError" {
				c.eq("rebased.collab.steps.error", where, stepsPresent(rec.Error != nil), []byte("(present)"))
			} else {
				c.eq("rebased.collab.steps.error", where, rec.Error, jsonString(errorMessage(err)))
				c.eq("rebased.collab.steps.errorName", where, stepsOptString(rec.ErrorName), jsonString(stepsErrorName(err)))
			}
			stopped = true
		}
		if stopped {
			c.eq("rebased.collab.steps", "length", jsonInt(len(cb.Steps)), jsonInt(i+1))
			break
		}
	}
	if stopped {
		c.eq("rebased.collab.doc", "", cb.Doc, nil)
		c.eq("rebased.collab.mirror", "", stepsPresent(cb.Mirror != nil), nil)
		c.eq("rebased.collab.positions", "", stepsPresent(cb.Positions != nil), nil)
		return
	}
	c.eq("rebased.collab.steps", "length", jsonInt(len(cb.Steps)), jsonInt(len(steps)))
	c.eq("rebased.collab.doc", "", cb.Doc, jsonString(string(tr.doc.AppendJSON(nil))))
	var mirror []byte
	if cb.Mirror != nil {
		mirror = stepsIntsText(cb.Mirror)
	}
	c.eq("rebased.collab.mirror", "", mirror, stepsIntsText(tr.mirror))
	if len(cb.Mapped) != 2*len(cb.Positions) {
		c.fail("rebased.collab.mapped", "length", strconv.Itoa(2*len(cb.Positions)), strconv.Itoa(len(cb.Mapped)))
		return
	}
	k := 0
	for _, p := range cb.Positions {
		if p < 0 || p > final.Content.Size() {
			c.fail("rebased.collab.positions", "", fmt.Sprintf("positions in 0..%d", final.Content.Size()), strconv.Itoa(p))
		}
		for _, assoc := range [2]int{-1, 1} {
			c.eq("rebased.collab.mapped", fmt.Sprintf("pos %d assoc %d", p, assoc), cb.Mapped[k],
				mapResultText(p, assoc, tr.mapping.MapResult(p, assoc)))
			k++
		}
	}
}

// stepsIntsText renders a list of integers as JSON.
func stepsIntsText(v []int) []byte {
	b := []byte{'['}
	for i, n := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, ']')
}
