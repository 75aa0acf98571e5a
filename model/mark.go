package model

import "slices"

// Mark is a piece of information attached to inline content, such as
// emphasis or a link. Marks are immutable.
type Mark struct {
	// Type is the mark's type.
	Type *MarkType
	// Attrs are the mark's attributes, in the order of the type's spec.
	Attrs Attrs
}

// A mark set is a []*Mark sorted by rank; nil is the empty set. Sets are
// never modified in place: the functions below return new slices.

// AddToSet returns set with m added at its place by rank (set itself when
// m is already in it). Marks that m excludes are dropped; when a mark in
// set excludes m, set is returned unchanged.
func (m *Mark) AddToSet(set []*Mark) []*Mark {
	var out []*Mark
	copied, placed := false, false
	for i, other := range set {
		if m.Eq(other) {
			return set
		}
		if m.Type.Excludes(other.Type) {
			if !copied {
				out = make([]*Mark, i, len(set)+1)
				copy(out, set[:i])
				copied = true
			}
		} else if other.Type.Excludes(m.Type) {
			return set
		} else {
			if !placed && other.Type.Rank > m.Type.Rank {
				if !copied {
					out = make([]*Mark, i, len(set)+1)
					copy(out, set[:i])
					copied = true
				}
				out = append(out, m)
				placed = true
			}
			if copied {
				out = append(out, other)
			}
		}
	}
	if !copied {
		out = make([]*Mark, len(set), len(set)+1)
		copy(out, set)
	}
	if !placed {
		out = append(out, m)
	}
	return out
}

// RemoveFromSet returns set without m (set itself when m is not in it).
func (m *Mark) RemoveFromSet(set []*Mark) []*Mark {
	for i, other := range set {
		if m.Eq(other) {
			return removeMarkAt(set, i)
		}
	}
	return set
}

// removeMarkAt returns a new set without the mark at index i.
func removeMarkAt(set []*Mark, i int) []*Mark {
	if len(set) == 1 {
		return nil
	}
	out := make([]*Mark, 0, len(set)-1)
	out = append(out, set[:i]...)
	return append(out, set[i+1:]...)
}

// IsInSet reports whether m is in set.
func (m *Mark) IsInSet(set []*Mark) bool {
	for _, other := range set {
		if m.Eq(other) {
			return true
		}
	}
	return false
}

// Eq reports whether m and o have the same type and attributes.
func (m *Mark) Eq(o *Mark) bool {
	return m == o || m.Type == o.Type && equalAttrs(m.Attrs, o.Attrs)
}

// SameMarkSet reports whether a and b hold equal marks.
func SameMarkSet(a, b []*Mark) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for i, m := range a {
		if !m.Eq(b[i]) {
			return false
		}
	}
	return true
}

// sameMarkSlice reports whether a and b are the same slice (the JS
// identity comparison of mark arrays).
func sameMarkSlice(a, b []*Mark) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// MarkSetFrom returns a sorted copy of marks (stable by rank, not
// deduplicated); nil for no marks.
func MarkSetFrom(marks []*Mark) []*Mark {
	if len(marks) == 0 {
		return nil
	}
	out := make([]*Mark, len(marks))
	copy(out, marks)
	if len(out) > 1 {
		slices.SortStableFunc(out, func(a, b *Mark) int { return a.Type.Rank - b.Type.Rank })
	}
	return out
}
