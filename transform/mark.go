package transform

import (
	"github.com/pmauthority/pmauthority/model"
)

func addMark(tr *Transform, from, to int, mark *model.Mark) error {
	var added []Step
	tr.Doc.NodesBetween(from, to, func(node *model.Node, pos int, parent *model.Node, _ int) bool {
		if !node.IsInline() {
			return true
		}
		if !mark.IsInSet(node.Marks) && parent.Type.AllowsMarkType(mark.Type) {
			start, end := max(pos, from), min(pos+node.NodeSize(), to)
			added = pushMarkStep(added, false, start, end, mark)
		}
		return true
	}, 0)
	if to > tr.Doc.Content.Size() {
		return errNodesBetweenEnd
	}
	for _, s := range added {
		if err := tr.Step(s); err != nil {
			return err
		}
	}
	return nil
}

// markMatcher says which marks removeMark removes: mark when set, the
// marks of typ when set, all marks otherwise.
type markMatcher struct {
	mark *model.Mark
	typ  *model.MarkType
}

func removeMark(tr *Transform, from, to int, which markMatcher) error {
	type match struct {
		style    *model.Mark
		from, to int
		step     int
	}
	var matched []match
	step := 0
	tr.Doc.NodesBetween(from, to, func(node *model.Node, pos int, _ *model.Node, _ int) bool {
		if !node.IsInline() || !node.IsAtom() {
			return true
		}
		step++
		var toRemove []*model.Mark
		switch {
		case which.typ != nil:
			for set := node.Marks; ; {
				found := which.typ.IsInSet(set)
				if found == nil {
					break
				}
				toRemove = append(toRemove, found)
				set = found.RemoveFromSet(set)
			}
		case which.mark != nil:
			if which.mark.IsInSet(node.Marks) {
				toRemove = []*model.Mark{which.mark}
			}
		default:
			toRemove = node.Marks
		}
		end := min(pos+node.NodeSize(), to)
		for _, style := range toRemove {
			found := -1
			for j := range matched {
				if matched[j].step == step-1 && style.Eq(matched[j].style) {
					found = j
				}
			}
			if found >= 0 {
				matched[found].to = end
				matched[found].step = step
			} else {
				matched = append(matched, match{style: style, from: max(pos, from), to: end, step: step})
			}
		}
		return true
	}, 0)
	if to > tr.Doc.Content.Size() {
		return errNodesBetweenEnd
	}
	for _, m := range matched {
		if err := tr.Step(&RemoveMarkStep{From: m.from, To: m.to, Mark: m.style}); err != nil {
			return err
		}
	}
	return nil
}

func clearIncompatible(tr *Transform, pos int, parentType *model.NodeType, match *model.ContentMatch, clearNewlines bool) error {
	if match == nil {
		match = parentType.ContentMatch
	}
	node, err := nodeAt(tr.Doc, pos)
	if err != nil {
		return err
	}
	if node == nil {
		return typeError("null", "childCount")
	}
	var replSteps []Step
	cur := pos + 1
	for i := 0; i < node.ChildCount(); i++ {
		child := node.Child(i)
		end := cur + child.NodeSize()
		allowed := match.MatchType(child.Type)
		if allowed == nil {
			replSteps = append(replSteps, &ReplaceStep{From: cur, To: end, Slice: model.EmptySlice})
		} else {
			match = allowed
			for _, m := range child.Marks {
				if !parentType.AllowsMarkType(m.Type) {
					if err := tr.Step(&RemoveMarkStep{From: cur, To: end, Mark: m}); err != nil {
						return err
					}
				}
			}
			if clearNewlines && child.IsText() && parentType.Whitespace() != "pre" {
				var slice *model.Slice
				err := newlineIndexes(child.Text, func(index, length int) error {
					if slice == nil {
						space, err := parentType.Schema.Text(" ", parentType.AllowedMarks(child.Marks))
						if err != nil {
							return err
						}
						s := model.NewSlice(model.FragmentOf(space), 0, 0)
						slice = &s
					}
					replSteps = append(replSteps, &ReplaceStep{From: cur + index, To: cur + index + length, Slice: *slice})
					return nil
				})
				if err != nil {
					return err
				}
			}
		}
		cur = end
	}
	if !match.ValidEnd {
		fill, ok, err := match.FillBefore(model.Fragment{}, true, 0)
		if err != nil {
			return err
		}
		if !ok {
			return typeError("null", "size")
		}
		if err := tr.Replace(cur, cur, model.NewSlice(fill, 0, 0)); err != nil {
			return err
		}
	}
	for i := len(replSteps) - 1; i >= 0; i-- {
		if err := tr.Step(replSteps[i]); err != nil {
			return err
		}
	}
	return nil
}
