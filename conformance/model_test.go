package conformance

// TestModelCorpus replays the model corpora (js/FORMAT-model.md) against
// the model package: every recorded field of every case must come out the
// same. Go's answers are rendered as JSON.stringify writes them and
// compared byte for byte with the recorded JSON (also the numbers of
// inexactNumbers cases, which the model formats as JS does); fields under
// the digest rule are compared through their digest. An error matches when
// its message is the JS message, where a *model.JSONError may add its
// location (see errorMessage), and it stands for the recorded JS class (see
// errorType). Run with -args -mismatches=N to see more than 20 mismatches.

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/pmauthority/pmauthority/model"
)

// modelCase is one line of a model corpus. Answers are kept as raw JSON
// and compared with Go's answers rendered the way JSON.stringify writes
// them; inputs are decoded.
type modelCase struct {
	ID     int             `json:"id"`
	Schema string          `json:"schema"`
	Kind   string          `json:"kind"`
	Input  json.RawMessage `json:"input"`

	Error     json.RawMessage `json:"error"`
	ErrorType json.RawMessage `json:"errorType"`

	Output         json.RawMessage `json:"output"`
	Check          json.RawMessage `json:"check"`
	Size           json.RawMessage `json:"size"`
	TextContent    json.RawMessage `json:"textContent"`
	TextBetween    json.RawMessage `json:"textBetween"`
	Positions      []modelPos      `json:"positions"`
	Slices         []modelSlice    `json:"slices"`
	Matches        []modelMatch    `json:"matches"`
	Replace        []modelReplace  `json:"replace"`
	InexactNumbers json.RawMessage `json:"inexactNumbers"`
}

type modelPos struct {
	Pos   int  `json:"pos"`
	Other *int `json:"other"`

	Error     json.RawMessage `json:"error"`
	ErrorType json.RawMessage `json:"errorType"`

	Depth        json.RawMessage `json:"depth"`
	ParentOffset json.RawMessage `json:"parentOffset"`
	TextOffset   json.RawMessage `json:"textOffset"`
	Levels       json.RawMessage `json:"levels"`
	NodeAfter    json.RawMessage `json:"nodeAfter"`
	NodeBefore   json.RawMessage `json:"nodeBefore"`
	Marks        json.RawMessage `json:"marks"`
	NodeAt       json.RawMessage `json:"nodeAt"`
	ChildAfter   json.RawMessage `json:"childAfter"`
	ChildBefore  json.RawMessage `json:"childBefore"`
	SharedDepth  json.RawMessage `json:"sharedDepth"`
	BlockRange   json.RawMessage `json:"blockRange"`
}

type modelSlice struct {
	From int `json:"from"`
	To   int `json:"to"`

	Slice        json.RawMessage `json:"slice"`
	Error        json.RawMessage `json:"error"`
	ErrorType    json.RawMessage `json:"errorType"`
	TextBetween  json.RawMessage `json:"textBetween"`
	RangeHasMark json.RawMessage `json:"rangeHasMark"`
}

type modelMatch struct {
	Type     string            `json:"type"`
	Fragment []json.RawMessage `json:"fragment"`

	Match           json.RawMessage `json:"match"`
	FillBeforeToEnd json.RawMessage `json:"fillBeforeToEnd"`
	CreateAndFill   json.RawMessage `json:"createAndFill"`
}

// modelMatchResult is the `match` object of a matches entry.
type modelMatchResult struct {
	ValidEnd    json.RawMessage `json:"validEnd"`
	DefaultType json.RawMessage `json:"defaultType"`
	EdgeCount   json.RawMessage `json:"edgeCount"`
	Edges       json.RawMessage `json:"edges"`
	Fill        json.RawMessage `json:"fill"`
	WrapTarget  string          `json:"wrapTarget"`
	Wrapping    json.RawMessage `json:"wrapping"`
}

type modelReplace struct {
	From      int `json:"from"`
	To        int `json:"to"`
	SliceFrom int `json:"sliceFrom"`
	SliceTo   int `json:"sliceTo"`

	Slice     json.RawMessage `json:"slice"`
	Result    json.RawMessage `json:"result"`
	Check     json.RawMessage `json:"check"`
	Error     json.RawMessage `json:"error"`
	ErrorType json.RawMessage `json:"errorType"`
}

func TestModelCorpus(t *testing.T) {
	schemas := loadSchemas(t)
	for _, file := range corpusFiles("testdata/model/corpus.jsonl", "PMA_MODEL_CORPUS") {
		h, lines := readCorpus(t, file, "pmauthority-model-conformance", 1)
		if v := h.Versions["prosemirror-model"]; v != "1.25.13" {
			t.Errorf("%s: recorded with prosemirror-model %q, the model ports 1.25.13", file, v)
		}
		r := checkCases(lines, func(line []byte) *caseCheck { return checkModelCase(schemas, line) })
		r.report(t, file)
	}
}

// checkModelCase replays one case line.
func checkModelCase(schemas map[string]*model.Schema, line []byte) *caseCheck {
	var mc modelCase
	if err := strictUnmarshal(line, &mc); err != nil {
		c := &caseCheck{id: -1}
		c.fail("line", "", "a case", err.Error())
		return c
	}
	c := &caseCheck{id: mc.ID, schema: mc.Schema, kind: mc.Kind}
	s := schemas[mc.Schema]
	if s == nil {
		c.fail("schema", "", "a known schema", mc.Schema)
		return c
	}

	doc, err := s.NodeFromJSON(mc.Input)
	if err != nil {
		if mc.Error == nil {
			c.fail("error", "", "(absent: the JS parsed the input)", err.Error())
			return c
		}
		if !c.eq("error", "", mc.Error, jsonString(errorMessage(err))) {
			c.diffs[len(c.diffs)-1].detail = "Go error: " + err.Error()
		}
		c.eq("errorType", "", mc.ErrorType, jsonString(errorType(err)))
		for _, f := range mc.answers() {
			c.eq(f.name, "", f.raw, nil)
		}
		return c
	}
	c.eq("error", "", mc.Error, nil)
	c.eq("errorType", "", mc.ErrorType, nil)
	if mc.Error != nil {
		return c
	}

	c.eq("output", "", mc.Output, jsonString(string(doc.AppendJSON(nil))))
	c.eq("check", "", mc.Check, checkResult(doc))
	size := doc.Content.Size()
	c.eq("size", "", mc.Size, jsonInt(size))
	c.eq("textContent", "", mc.TextContent, jsonString(doc.TextContent()))
	c.eq("textBetween", "", mc.TextBetween, jsonString(doc.TextBetween(0, size, "\n", "*")))

	if mc.Positions == nil || mc.Slices == nil || mc.Matches == nil || mc.Replace == nil {
		c.fail("positions/slices/matches/replace", "", "(absent)", "recorded for every parsed document")
	}
	inexact := hasInexactNumber(doc)
	for i := range mc.Positions {
		checkPosition(c, doc, &mc.Positions[i])
	}
	for i := range mc.Slices {
		checkSlice(c, s, doc, &mc.Slices[i])
	}
	for i := range mc.Matches {
		if checkMatch(c, s, &mc.Matches[i]) {
			inexact = true
		}
	}
	for i := range mc.Replace {
		checkReplace(c, doc, &mc.Replace[i])
	}
	var got []byte
	if inexact {
		got = jsonBool(true)
	}
	c.eq("inexactNumbers", "", mc.InexactNumbers, got)
	return c
}

// namedField is a recorded answer with its name.
type namedField struct {
	name string
	raw  json.RawMessage
}

// answers lists the fields recorded only when the document parsed.
func (mc *modelCase) answers() []namedField {
	f := []namedField{{"output", mc.Output}, {"check", mc.Check}, {"size", mc.Size}, {"textContent", mc.TextContent},
		{"textBetween", mc.TextBetween}, {"inexactNumbers", mc.InexactNumbers}}
	if mc.Positions != nil || mc.Slices != nil || mc.Matches != nil || mc.Replace != nil {
		f = append(f, namedField{"positions/slices/matches/replace", json.RawMessage("[…]")})
	}
	return f
}

// answers lists the fields recorded only for a resolved position.
func (p *modelPos) answers() []namedField {
	f := []namedField{{"depth", p.Depth}, {"parentOffset", p.ParentOffset}, {"textOffset", p.TextOffset},
		{"levels", p.Levels}, {"nodeAfter", p.NodeAfter}, {"nodeBefore", p.NodeBefore}, {"marks", p.Marks},
		{"nodeAt", p.NodeAt}, {"childAfter", p.ChildAfter}, {"childBefore", p.ChildBefore},
		{"sharedDepth", p.SharedDepth}, {"blockRange", p.BlockRange}}
	if p.Other != nil {
		f = append(f, namedField{"other", json.RawMessage(strconv.Itoa(*p.Other))})
	}
	return f
}

// checkResult renders n.Check() as recorded: null or the message.
func checkResult(n *model.Node) []byte {
	if err := n.Check(); err != nil {
		return jsonString(err.Error())
	}
	return jsonNull
}

func checkPosition(c *caseCheck, doc *model.Node, p *modelPos) {
	where := "pos " + strconv.Itoa(p.Pos)
	r, err := doc.Resolve(p.Pos)
	if err != nil {
		c.eq("positions.error", where, p.Error, jsonString(errorMessage(err)))
		c.eq("positions.errorType", where, p.ErrorType, jsonString(errorType(err)))
		for _, f := range p.answers() {
			c.eq("positions."+f.name, where, f.raw, nil)
		}
		return
	}
	c.eq("positions.error", where, p.Error, nil)
	c.eq("positions.errorType", where, p.ErrorType, nil)
	if p.Error != nil {
		return
	}
	c.eq("positions.depth", where, p.Depth, jsonInt(r.Depth))
	c.eq("positions.parentOffset", where, p.ParentOffset, jsonInt(r.ParentOffset))
	c.eq("positions.textOffset", where, p.TextOffset, jsonInt(r.TextOffset()))

	levels := make([]any, r.Depth+1)
	for d := range levels {
		var before, after any
		if d > 0 {
			b, errB := r.Before(d)
			a, errA := r.After(d)
			if errB != nil || errA != nil {
				c.fail("positions.levels", where, "before/after at depth "+strconv.Itoa(d), fmt.Sprint(errB, errA))
			}
			before, after = b, a
		}
		levels[d] = []any{r.Node(d).Type.Name, r.Index(d), r.IndexAfter(d), r.Start(d), r.End(d), before, after}
	}
	c.eq("positions.levels", where, p.Levels, jsonValue(levels))

	c.eqDigest("positions.nodeAfter", where, p.NodeAfter, nodeText(r.NodeAfter()))
	c.eqDigest("positions.nodeBefore", where, p.NodeBefore, nodeText(r.NodeBefore()))
	c.eq("positions.marks", where, p.Marks, jsonString(string(marksText(r.Marks()))))
	c.eqDigest("positions.nodeAt", where, p.NodeAt, nodeText(doc.NodeAt(p.Pos)))
	child, index, offset := doc.ChildAfter(p.Pos)
	c.eq("positions.childAfter", where, p.ChildAfter, jsonValue([]any{index, offset, typeName(child)}))
	child, index, offset = doc.ChildBefore(p.Pos)
	c.eq("positions.childBefore", where, p.ChildBefore, jsonValue([]any{index, offset, typeName(child)}))

	if p.Other == nil {
		c.fail("positions.other", where, "(absent)", "a position")
		return
	}
	c.eq("positions.sharedDepth", where, p.SharedDepth, jsonInt(r.SharedDepth(*p.Other)))
	ro, err := doc.Resolve(*p.Other)
	if err != nil {
		c.fail("positions.blockRange", where, string(p.BlockRange), "resolve other: "+err.Error())
		return
	}
	got := jsonNull
	if br := r.BlockRange(ro, nil); br != nil {
		got = jsonValue([]any{br.Start(), br.End(), br.Depth, br.StartIndex(), br.EndIndex()})
	}
	c.eq("positions.blockRange", where, p.BlockRange, got)
}

// typeName is the name of n's type, or nil for no node.
func typeName(n *model.Node) any {
	if n == nil {
		return nil
	}
	return n.Type.Name
}

// marksText is JSON.stringify(marks.map(m => m.toJSON())).
func marksText(marks []*model.Mark) []byte {
	buf := []byte{'['}
	for i, m := range marks {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = m.AppendJSON(buf)
	}
	return append(buf, ']')
}

// fragmentText is JSON.stringify(f.content.map(n => n.toJSON())): "[]"
// for the empty fragment (where Fragment.toJSON gives null).
func fragmentText(f model.Fragment) []byte {
	buf := []byte{'['}
	for i, n := range f.Children() {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = n.AppendJSON(buf)
	}
	return append(buf, ']')
}

func checkSlice(c *caseCheck, s *model.Schema, doc *model.Node, sl *modelSlice) {
	where := fmt.Sprintf("slice %d-%d", sl.From, sl.To)
	slice, err := doc.Slice(sl.From, sl.To, false)
	if err != nil {
		c.eq("slices.error", where, sl.Error, jsonString(errorMessage(err)))
		c.eq("slices.errorType", where, sl.ErrorType, jsonString(errorType(err)))
		c.eq("slices.slice", where, sl.Slice, nil)
	} else {
		c.eq("slices.error", where, sl.Error, nil)
		c.eq("slices.errorType", where, sl.ErrorType, nil)
		c.eqDigest("slices.slice", where, sl.Slice, slice.AppendJSON(nil))
	}

	// textBetween and rangeHasMark are recorded for in-range pairs only.
	size := doc.Content.Size()
	inRange := 0 <= sl.From && sl.From <= sl.To && sl.To <= size
	var tb []byte
	if inRange {
		tb = jsonString(doc.TextBetween(sl.From, sl.To, "\n", "*"))
	}
	c.eq("slices.textBetween", where, sl.TextBetween, tb)
	if !inRange || len(s.Marks) == 0 {
		c.eq("slices.rangeHasMark", where, sl.RangeHasMark, nil)
		return
	}
	var rhm struct {
		Mark   string          `json:"mark"`
		Result json.RawMessage `json:"result"`
	}
	if err := strictUnmarshal(sl.RangeHasMark, &rhm); err != nil {
		c.fail("slices.rangeHasMark", where, shown(sl.RangeHasMark), "{mark, result}")
		return
	}
	mt := s.MarkType(rhm.Mark)
	if mt == nil {
		c.fail("slices.rangeHasMark", where, rhm.Mark, "(no such mark type)")
		return
	}
	c.eq("slices.rangeHasMark", where+" "+rhm.Mark, rhm.Result, jsonBool(doc.RangeHasMark(sl.From, sl.To, mt)))
}

// checkMatch checks a content-match entry. It reports whether the
// fragment holds an inexact number.
func checkMatch(c *caseCheck, s *model.Schema, m *modelMatch) (inexact bool) {
	where := "match " + m.Type
	t := s.NodeType(m.Type)
	if t == nil {
		c.fail("matches.type", where, m.Type, "(no such node type)")
		return false
	}
	nodes := make([]*model.Node, len(m.Fragment))
	for i, raw := range m.Fragment {
		n, err := s.NodeFromJSON(raw)
		if err != nil {
			c.fail("matches.fragment", where, string(raw), err.Error())
			return false
		}
		inexact = inexact || hasInexactNumber(n)
		nodes[i] = n
	}
	frag := model.NewFragment(nodes)
	if frag.ChildCount() != len(nodes) {
		c.fail("matches.fragment", where, strconv.Itoa(len(nodes))+" children", strconv.Itoa(frag.ChildCount())+" children")
	}

	checkMatchResult(c, s, where, m.Match, t.ContentMatch.MatchFragment(frag, 0, frag.ChildCount()))

	fill, ok, err := t.ContentMatch.FillBefore(frag, true, 0)
	switch {
	case err != nil:
		c.fail("matches.fillBeforeToEnd", where, shown(m.FillBeforeToEnd), "error: "+err.Error())
	case !ok:
		c.eq("matches.fillBeforeToEnd", where, m.FillBeforeToEnd, jsonNull)
	default:
		c.eq("matches.fillBeforeToEnd", where, m.FillBeforeToEnd, jsonString(string(fragmentText(fill))))
	}

	if t.HasRequiredAttrs() {
		c.eq("matches.createAndFill", where, m.CreateAndFill, nil)
		return inexact
	}
	n, err := t.CreateAndFill(nil, frag, nil)
	if err != nil {
		c.fail("matches.createAndFill", where, shown(m.CreateAndFill), "error: "+err.Error())
		return inexact
	}
	c.eqDigest("matches.createAndFill", where, m.CreateAndFill, nodeText(n))
	return inexact
}

// checkMatchResult compares the `match` object with Go's match (nil for
// JS null).
func checkMatchResult(c *caseCheck, s *model.Schema, where string, want json.RawMessage, got *model.ContentMatch) {
	if got == nil || string(want) == "null" {
		render := jsonNull
		if got != nil {
			render = []byte(fmt.Sprintf("a match (validEnd %t, %d edges)", got.ValidEnd, got.EdgeCount()))
		}
		c.eq("matches.match", where, want, render)
		return
	}
	var w modelMatchResult
	if err := strictUnmarshal(want, &w); err != nil {
		c.fail("matches.match", where, shown(want), "a match object: "+err.Error())
		return
	}
	c.eq("matches.match.validEnd", where, w.ValidEnd, jsonBool(got.ValidEnd))
	c.eq("matches.match.defaultType", where, w.DefaultType, jsonValue(typeNameOf(got.DefaultType())))
	c.eq("matches.match.edgeCount", where, w.EdgeCount, jsonInt(got.EdgeCount()))
	edges := make([]any, got.EdgeCount())
	for i := range edges {
		edges[i] = got.Edge(i).Type.Name
	}
	c.eq("matches.match.edges", where, w.Edges, jsonValue(edges))

	fill, ok, err := got.FillBefore(model.Fragment{}, true, 0)
	switch {
	case err != nil:
		c.fail("matches.match.fill", where, shown(w.Fill), "error: "+err.Error())
	case !ok:
		c.eq("matches.match.fill", where, w.Fill, jsonNull)
	default:
		c.eq("matches.match.fill", where, w.Fill, jsonString(string(fragmentText(fill))))
	}

	target := s.NodeType(w.WrapTarget)
	if target == nil {
		c.fail("matches.match.wrapTarget", where, w.WrapTarget, "(no such node type)")
		return
	}
	wrapping := jsonNull
	if types, ok := got.FindWrapping(target); ok {
		names := make([]any, len(types))
		for i, t := range types {
			names[i] = t.Name
		}
		wrapping = jsonValue(names)
	}
	c.eq("matches.match.wrapping", where+" → "+w.WrapTarget, w.Wrapping, wrapping)
}

// typeNameOf is t's name, or nil for no type.
func typeNameOf(t *model.NodeType) any {
	if t == nil {
		return nil
	}
	return t.Name
}

func checkReplace(c *caseCheck, doc *model.Node, r *modelReplace) {
	where := fmt.Sprintf("replace %d-%d with slice %d-%d", r.From, r.To, r.SliceFrom, r.SliceTo)
	slice, err := doc.Slice(r.SliceFrom, r.SliceTo, false)
	if err != nil {
		c.fail("replace.slice", where, shown(r.Slice), "error: "+err.Error())
		return
	}
	c.eqDigest("replace.slice", where, r.Slice, slice.AppendJSON(nil))
	res, err := doc.Replace(r.From, r.To, slice)
	if err != nil {
		c.eq("replace.error", where, r.Error, jsonString(errorMessage(err)))
		c.eq("replace.errorType", where, r.ErrorType, jsonString(errorType(err)))
		c.eq("replace.result", where, r.Result, nil)
		c.eq("replace.check", where, r.Check, nil)
		return
	}
	c.eq("replace.error", where, r.Error, nil)
	c.eq("replace.errorType", where, r.ErrorType, nil)
	c.eqDigest("replace.result", where, r.Result, res.AppendJSON(nil))
	c.eq("replace.check", where, r.Check, checkResult(res))
}

// hasInexactNumber reports whether an attribute of n, its marks or its
// descendants holds a number that is not a safe integer (the corpus flags
// such documents with inexactNumbers).
func hasInexactNumber(n *model.Node) bool {
	found := attrsInexact(n.Attrs)
	for _, m := range n.Marks {
		found = found || attrsInexact(m.Attrs)
	}
	for _, child := range n.Content.Children() {
		found = found || hasInexactNumber(child)
	}
	return found
}

func attrsInexact(attrs model.Attrs) bool {
	for _, a := range attrs {
		if valueInexact(a.Value) {
			return true
		}
	}
	return false
}

func valueInexact(v any) bool {
	switch x := v.(type) {
	case float64:
		return x != math.Trunc(x) || math.Abs(x) > 1<<53-1
	case []any:
		for _, e := range x {
			if valueInexact(e) {
				return true
			}
		}
	case model.JSONObject:
		for _, p := range x {
			if valueInexact(p.Value) {
				return true
			}
		}
	}
	return false
}
