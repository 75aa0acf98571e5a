package transform

import (
	"errors"
	"strconv"

	"github.com/pmauthority/pmauthority/model"
)

// MapBias decides where an inserting ReplaceStep (one whose From equals
// its To) goes when it is mapped over an insertion at the same position:
// with 1, the default, it moves after the inserted content; with -1 it
// stays before it, which keeps redone insertions where the user made them
// in collaborative editing. It is ReplaceStep.MAP_BIAS of
// prosemirror-transform; like that static, it is global. Set it before
// mapping steps concurrently; it is read without synchronization.
var MapBias = 1

var (
	errStructureReplace    = errors.New("Structure replace would overwrite content")
	errStructureGapReplace = errors.New("Structure gap-replace would overwrite content")
	errGapNotFlat          = errors.New("Gap is not a flat range")
	errGapMisfit           = errors.New("Content does not fit in gap")
)

// ReplaceStep replaces a part of the document with a slice of new content.
//
// The slice should fit the gap between From and To: the depths must line
// up, and the surrounding nodes must be able to join the open sides of the
// slice. From may be larger than To; JavaScript accepts that (the content
// between them ends up duplicated), and so does this port.
type ReplaceStep struct {
	// From is the start of the replaced range.
	From int
	// To is the end of the replaced range.
	To int
	// Slice is the content to insert.
	Slice model.Slice
	// Structure makes the step fail when the range holds anything but a
	// sequence of closing and then opening tokens, which guards rebased
	// steps against overwriting content they were not meant to.
	Structure bool
}

// Apply replaces the range with the slice.
func (s *ReplaceStep) Apply(doc *model.Node) (*model.Node, error) {
	if s.Structure {
		between, err := contentBetween(doc, s.From, s.To)
		if err != nil {
			return nil, err
		}
		if between {
			return nil, errStructureReplace
		}
	}
	return doc.Replace(s.From, s.To, s.Slice)
}

// GetMap returns a map replacing To-From positions at From with the
// slice's size.
func (s *ReplaceStep) GetMap() *StepMap {
	return NewStepMap([]int{s.From, s.To - s.From, s.Slice.Size()}, false)
}

// Invert returns a step putting back what the step replaced in doc.
func (s *ReplaceStep) Invert(doc *model.Node) (Step, error) {
	old, err := doc.Slice(s.From, s.To, false)
	if err != nil {
		return nil, err
	}
	return &ReplaceStep{From: s.From, To: s.From + s.Slice.Size(), Slice: old}, nil
}

// Map maps the step's range, returning nil when the mapping deleted all
// of it.
func (s *ReplaceStep) Map(m Mappable) Step {
	to := m.MapResult(s.To, -1)
	var from MapResult
	if s.From == s.To && MapBias < 0 {
		from = to
	} else {
		from = m.MapResult(s.From, 1)
	}
	if from.DeletedAcross() && to.DeletedAcross() {
		return nil
	}
	return &ReplaceStep{From: from.Pos, To: max(from.Pos, to.Pos), Slice: s.Slice, Structure: s.Structure}
}

// Merge joins the step with a non-structure ReplaceStep that continues it
// (adjacent typing or deleting).
func (s *ReplaceStep) Merge(other Step) (Step, bool) {
	o, ok := other.(*ReplaceStep)
	if !ok || o.Structure || s.Structure {
		return nil, false
	}
	size := s.Slice.Size() + o.Slice.Size()
	switch {
	case s.From+s.Slice.Size() == o.From && s.Slice.OpenEnd == 0 && o.Slice.OpenStart == 0:
		slice := model.EmptySlice
		if size != 0 {
			slice = model.NewSlice(s.Slice.Content.Append(o.Slice.Content), s.Slice.OpenStart, o.Slice.OpenEnd)
		}
		return &ReplaceStep{From: s.From, To: s.To + (o.To - o.From), Slice: slice}, true
	case o.To == s.From && s.Slice.OpenStart == 0 && o.Slice.OpenEnd == 0:
		slice := model.EmptySlice
		if size != 0 {
			slice = model.NewSlice(o.Slice.Content.Append(s.Slice.Content), o.Slice.OpenStart, s.Slice.OpenEnd)
		}
		return &ReplaceStep{From: o.From, To: s.To, Slice: slice}, true
	}
	return nil, false
}

// AppendJSON appends {"stepType":"replace","from":…,"to":…} with "slice"
// when the slice's size is not zero (so a slice of size zero, such as an
// empty paragraph open on both sides, is left out, as in JavaScript) and
// "structure" when set.
func (s *ReplaceStep) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"stepType":"replace","from":`...)
	buf = strconv.AppendInt(buf, int64(s.From), 10)
	buf = append(buf, `,"to":`...)
	buf = strconv.AppendInt(buf, int64(s.To), 10)
	buf = appendSliceAndStructure(buf, s.Slice, s.Structure)
	return append(buf, '}')
}

// MarshalJSON returns AppendJSON(nil).
func (s *ReplaceStep) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

func appendSliceAndStructure(buf []byte, slice model.Slice, structure bool) []byte {
	if slice.Size() != 0 {
		buf = append(buf, `,"slice":`...)
		buf = slice.AppendJSON(buf)
	}
	if structure {
		buf = append(buf, `,"structure":true`...)
	}
	return buf
}

func replaceStepFromJSON(obj *jsonObject) (Step, error) {
	const where = "ReplaceStep.fromJSON"
	if err := obj.checkNumbers(where, fFrom, fTo); err != nil {
		return nil, err
	}
	slice, err := obj.sliceField()
	if err != nil {
		return nil, err
	}
	if err := obj.checkPositions(where, fFrom, fTo); err != nil {
		return nil, err
	}
	return &ReplaceStep{From: obj.pos(fFrom), To: obj.pos(fTo), Slice: slice, Structure: obj.truthy(fStructure)}, nil
}

// ReplaceAroundStep replaces a part of the document with a slice of
// content, but keeps a range of the replaced content (the gap) by moving
// it into the slice at Insert. It wraps, unwraps and changes the type of
// blocks.
type ReplaceAroundStep struct {
	// From is the start of the replaced range.
	From int
	// To is the end of the replaced range.
	To int
	// GapFrom is the start of the preserved range.
	GapFrom int
	// GapTo is the end of the preserved range.
	GapTo int
	// Slice is the content to insert.
	Slice model.Slice
	// Insert is the position in the slice where the preserved range goes.
	Insert int
	// Structure has the meaning it has in ReplaceStep, for the ranges on
	// either side of the gap.
	Structure bool
}

// Apply replaces the range with the slice, the gap's content moved into it.
func (s *ReplaceAroundStep) Apply(doc *model.Node) (*model.Node, error) {
	if s.Structure {
		between, err := contentBetween(doc, s.From, s.GapFrom)
		if err == nil && !between {
			between, err = contentBetween(doc, s.GapTo, s.To)
		}
		if err != nil {
			return nil, err
		}
		if between {
			return nil, errStructureGapReplace
		}
	}
	gap, err := doc.Slice(s.GapFrom, s.GapTo, false)
	if err != nil {
		return nil, err
	}
	if gap.OpenStart != 0 || gap.OpenEnd != 0 {
		return nil, errGapNotFlat
	}
	inserted, ok, err := s.Slice.InsertAt(s.Insert, gap.Content)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errGapMisfit
	}
	return doc.Replace(s.From, s.To, inserted)
}

// GetMap returns a map with two ranges: the replaced content before the
// gap and the replaced content after it.
func (s *ReplaceAroundStep) GetMap() *StepMap {
	return NewStepMap([]int{
		s.From, s.GapFrom - s.From, s.Insert,
		s.GapTo, s.To - s.GapTo, s.Slice.Size() - s.Insert,
	}, false)
}

// Invert returns a step putting back what the step replaced in doc around
// the gap.
func (s *ReplaceAroundStep) Invert(doc *model.Node) (Step, error) {
	gap := s.GapTo - s.GapFrom
	old, err := doc.Slice(s.From, s.To, false)
	if err != nil {
		return nil, err
	}
	old, err = old.RemoveBetween(s.GapFrom-s.From, s.GapTo-s.From)
	if err != nil {
		return nil, err
	}
	return &ReplaceAroundStep{
		From:      s.From,
		To:        s.From + s.Slice.Size() + gap,
		GapFrom:   s.From + s.Insert,
		GapTo:     s.From + s.Insert + gap,
		Slice:     old,
		Insert:    s.GapFrom - s.From,
		Structure: s.Structure,
	}, nil
}

// Map maps the step's positions, returning nil when the mapping deleted
// its range or broke its gap.
func (s *ReplaceAroundStep) Map(m Mappable) Step {
	from, to := m.MapResult(s.From, 1), m.MapResult(s.To, -1)
	gapFrom := from.Pos
	if s.From != s.GapFrom {
		gapFrom = m.Map(s.GapFrom, -1)
	}
	gapTo := to.Pos
	if s.To != s.GapTo {
		gapTo = m.Map(s.GapTo, 1)
	}
	if (from.DeletedAcross() && to.DeletedAcross()) || gapFrom < from.Pos || gapTo > to.Pos || gapFrom > gapTo {
		return nil
	}
	return &ReplaceAroundStep{From: from.Pos, To: to.Pos, GapFrom: gapFrom, GapTo: gapTo,
		Slice: s.Slice, Insert: s.Insert, Structure: s.Structure}
}

// Merge reports false: replace-around steps do not merge.
func (s *ReplaceAroundStep) Merge(other Step) (Step, bool) { return nil, false }

// AppendJSON appends {"stepType":"replaceAround",…} as JavaScript writes it.
func (s *ReplaceAroundStep) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"stepType":"replaceAround","from":`...)
	buf = strconv.AppendInt(buf, int64(s.From), 10)
	buf = append(buf, `,"to":`...)
	buf = strconv.AppendInt(buf, int64(s.To), 10)
	buf = append(buf, `,"gapFrom":`...)
	buf = strconv.AppendInt(buf, int64(s.GapFrom), 10)
	buf = append(buf, `,"gapTo":`...)
	buf = strconv.AppendInt(buf, int64(s.GapTo), 10)
	buf = append(buf, `,"insert":`...)
	buf = strconv.AppendInt(buf, int64(s.Insert), 10)
	buf = appendSliceAndStructure(buf, s.Slice, s.Structure)
	return append(buf, '}')
}

// MarshalJSON returns AppendJSON(nil).
func (s *ReplaceAroundStep) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

func replaceAroundStepFromJSON(obj *jsonObject) (Step, error) {
	const where = "ReplaceAroundStep.fromJSON"
	if err := obj.checkNumbers(where, fFrom, fTo, fGapFrom, fGapTo, fInsert); err != nil {
		return nil, err
	}
	slice, err := obj.sliceField()
	if err != nil {
		return nil, err
	}
	if err := obj.checkPositions(where, fFrom, fTo, fGapFrom, fGapTo, fInsert); err != nil {
		return nil, err
	}
	return &ReplaceAroundStep{
		From: obj.pos(fFrom), To: obj.pos(fTo), GapFrom: obj.pos(fGapFrom), GapTo: obj.pos(fGapTo),
		Slice: slice, Insert: obj.pos(fInsert), Structure: obj.truthy(fStructure),
	}, nil
}

// contentBetween reports whether the range from..to in doc holds anything
// but closing tokens followed by opening tokens.
func contentBetween(doc *model.Node, from, to int) (bool, error) {
	rFrom, err := doc.Resolve(from)
	if err != nil {
		return false, err
	}
	dist, depth := to-from, rFrom.Depth
	for dist > 0 && depth > 0 && rFrom.IndexAfter(depth) == rFrom.Node(depth).ChildCount() {
		depth--
		dist--
	}
	if dist > 0 {
		next := rFrom.Node(depth).MaybeChild(rFrom.IndexAfter(depth))
		for ; dist > 0; dist-- {
			if next == nil || next.IsLeaf() {
				return true, nil
			}
			next = next.FirstChild()
		}
	}
	return false, nil
}
