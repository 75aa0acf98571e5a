package suggest

import "github.com/pmauthority/pmauthority/model"

// markEnd is the package's findSuggestionMarkEnd: from $pos, at the end of
// a node marked with t, the end of that suggestion, which goes on into the
// start of the following blocks as long as their first leaf (or first
// node marked with t) carries a mark of t with the same id.
func markEnd(r *model.ResolvedPos, t *model.MarkType) (int, error) {
	first := r.NodeAfter()
	if first == nil {
		first = r.NodeBefore()
	}
	var initial *model.Mark
	if first != nil {
		initial = markOf(first.Marks, t)
	}
	if initial == nil {
		return r.Pos, nil
	}
	doc := r.Doc()
	after := r.Pos
	if n := r.NodeAfter(); n != nil {
		after += n.NodeSize()
	}
	for {
		ra, err := doc.Resolve(after)
		if err != nil {
			return 0, err
		}
		if ra.Depth < 1 || ra.NodeAfter() != nil && t.IsInSet(ra.Marks()) == nil {
			return ra.Pos, nil
		}
		// At the end of a node: does the next block start with the same
		// suggestion?
		parentPos, err := ra.After(ra.Depth)
		if err != nil {
			return 0, err
		}
		rp, err := doc.Resolve(parentPos)
		if err != nil {
			return 0, err
		}
		next := rp.NodeAfter()
		for rp.Depth > 0 && next == nil {
			if parentPos, err = ra.After(rp.Depth); err != nil {
				return 0, err
			}
			if rp, err = doc.Resolve(parentPos); err != nil {
				return 0, err
			}
			next = rp.NodeAfter()
		}
		cousinStart := parentPos + 1
		var cousin *model.Node
		if next != nil {
			cousin = next.FirstChild()
		}
		for cousin != nil && !cousin.IsLeaf() && t.IsInSet(cousin.Marks) == nil {
			cousin = cousin.FirstChild()
			cousinStart++
		}
		if cousin == nil {
			return ra.Pos, nil
		}
		m := markOf(cousin.Marks, t)
		if id, _ := initial.Attrs.Get("id"); m == nil || !sameID(m.Attrs, id) {
			return ra.Pos, nil
		}
		rc, err := doc.Resolve(cousinStart)
		if err != nil {
			return 0, err
		}
		after = rc.Pos
		if n := rc.NodeAfter(); n != nil {
			after += n.NodeSize()
		}
	}
}

// markOf returns the first mark of type t in set (Array.find), or nil.
func markOf(set []*model.Mark, t *model.MarkType) *model.Mark {
	for _, m := range set {
		if m.Type == t {
			return m
		}
	}
	return nil
}
