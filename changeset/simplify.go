package changeset

import (
	"unicode"

	"github.com/pmauthority/pmauthority/model"
)

// maxSimplifyDistance is how far apart changes must be not to be
// considered together.
const maxSimplifyDistance = 30

// SimplifyChanges simplifies changes for presentation. Insertions and
// deletions within a word are confusing: where such changes occur with
// no word boundary between them, they are expanded to cover the whole
// words (in doc, the new document) they touch. Single-character
// replacements are left alone. The data of the spans it makes are
// merged only where equal (==), whatever Combine the set has. It fails
// with ErrInconsistent where a change has no spans at all (where
// prosemirror-changeset throws).
func SimplifyChanges[D comparable](changes []Change[D], doc *model.Node) (result []Change[D], err error) {
	defer recoverInconsistent(&err)
	for i := 0; i < len(changes); i++ {
		end, start := changes[i].ToB, i
		for i < len(changes)-1 && changes[i+1].FromB <= end+maxSimplifyDistance {
			i++
			end = changes[i].ToB
		}
		result = simplifyAdjacent(changes, start, i+1, doc, result)
	}
	return result, nil
}

func simplifyAdjacent[D comparable](changes []Change[D], from, to int, doc *model.Node, target []Change[D]) []Change[D] {
	start := max(0, changes[from].FromB-maxSimplifyDistance)
	end := min(doc.Content.Size(), changes[to-1].ToB+maxSimplifyDistance)
	text := textOf(doc.Content, start, end)
	// letterAt tells whether the character at pos is a letter; outside
	// the text it is not (JS's charCodeAt gives NaN).
	letterAt := func(pos int) bool {
		i := pos - start
		return i >= 0 && i < len(text) && isLetter(text[i])
	}

	for i := from; i < to; i++ {
		startI, last := i, changes[i]
		deleted, inserted := last.lenA(), last.lenB()
		for i < to-1 {
			next, boundary := changes[i+1], false
			prevLetter := last.ToB != end && letterAt(last.ToB-1)
			for pos := last.ToB; !boundary && pos < next.FromB; pos++ {
				nextLetter := pos != end && letterAt(pos)
				if (!prevLetter || !nextLetter) && pos != changes[startI].FromB {
					boundary = true
				}
				prevLetter = nextLetter
			}
			if boundary {
				break
			}
			deleted += next.lenA()
			inserted += next.lenB()
			last = next
			i++
		}

		if inserted > 0 && deleted > 0 && !(inserted == 1 && deleted == 1) {
			from, to := changes[startI].FromB, changes[i].ToB
			if from < end && letterAt(from) {
				for from > start && letterAt(from-1) {
					from--
				}
			}
			if to > start && letterAt(to-1) {
				for to < end && letterAt(to) {
					to++
				}
			}
			joined := fillChange(changes[startI:i+1], from, to)
			if n := len(target); n > 0 && target[n-1].ToA == joined.FromA {
				last := target[n-1]
				target[n-1] = Change[D]{last.FromA, joined.ToA, last.FromB, joined.ToB,
					concatSpans(last.Deleted, joined.Deleted), concatSpans(last.Inserted, joined.Inserted)}
			} else {
				target = append(target, joined)
			}
		} else {
			target = append(target, changes[startI:i+1]...)
		}
	}
	return target
}

func concatSpans[D comparable](a, b []Span[D]) []Span[D] {
	return append(append(make([]Span[D], 0, len(a)+len(b)), a...), b...)
}

// fillChange joins changes into one change from fromB to toB in the new
// document, the content between them counted as deleted and inserted
// with the data of the change before it.
func fillChange[D comparable](changes []Change[D], fromB, toB int) Change[D] {
	first, last := changes[0], changes[len(changes)-1]
	fromA := first.FromA - (first.FromB - fromB)
	toA := last.ToA + (toB - last.ToB)
	var deleted, inserted []Span[D]
	delData := firstData(first.Deleted, first.Inserted)
	insData := firstData(first.Inserted, first.Deleted)
	combine := sameData[D]
	for posA, posB, i := fromA, fromB, 0; ; i++ {
		var next *Change[D]
		endA, endB := toA, toB
		if i < len(changes) {
			next = &changes[i]
			endA, endB = next.FromA, next.FromB
		}
		if endA > posA {
			deleted = joinSpans(deleted, []Span[D]{{endA - posA, delData}}, combine)
		}
		if endB > posB {
			inserted = joinSpans(inserted, []Span[D]{{endB - posB, insData}}, combine)
		}
		if next == nil {
			break
		}
		deleted = joinSpans(deleted, next.Deleted, combine)
		inserted = joinSpans(inserted, next.Inserted, combine)
		if len(deleted) > 0 {
			delData = deleted[len(deleted)-1].Data
		}
		if len(inserted) > 0 {
			insData = inserted[len(inserted)-1].Data
		}
		posA, posB = next.ToA, next.ToB
	}
	return Change[D]{fromA, toA, fromB, toB, deleted, inserted}
}

// firstData returns the data of the first span of a, or of b when a is
// empty.
func firstData[D comparable](a, b []Span[D]) D {
	if len(a) > 0 {
		return a[0].Data
	}
	if len(b) == 0 {
		panic(inconsistent("a change to simplify has no spans"))
	}
	return b[0].Data
}

// textOf returns the UTF-16 code units of frag from start to end, each
// node boundary and leaf node as a space so that it is not taken as part
// of a word. Like prosemirror-changeset's getText, it passes end-off
// (not end-off-1) into a node's content.
func textOf(frag model.Fragment, start, end int) []uint16 {
	var out []uint16
	var convert func(frag model.Fragment, start, end int)
	convert = func(frag model.Fragment, start, end int) {
		off := 0
		for i := range frag.ChildCount() {
			child := frag.Child(i)
			endOff := off + child.NodeSize()
			from, to := max(off, start), min(endOff, end)
			if from < to {
				switch {
				case child.IsText():
					lo, hi := max(0, start-off), min(child.NodeSize(), end-off)
					eachCodeUnit(child.Text, func(j int, u uint16) bool {
						if j >= hi {
							return false
						}
						if j >= lo {
							out = append(out, u)
						}
						return true
					})
				case child.IsLeaf():
					out = append(out, ' ')
				default:
					if from == off {
						out = append(out, ' ')
					}
					convert(child.Content, max(0, from-off-1), min(child.Content.Size(), end-off))
					if to == endOff {
						out = append(out, ' ')
					}
				}
			}
			off = endOff
		}
	}
	convert(frag, start, end)
	return out
}

// isLetter tells whether the UTF-16 code unit c is a letter: an ASCII
// letter or digit, or above ASCII a character with the Unicode property
// Alphabetic (JavaScript's /[\p{Alphabetic}_]/u on the one code unit; a
// surrogate half is none).
func isLetter(c uint16) bool {
	if c < 128 {
		return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
	}
	r := rune(c)
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_Alphabetic, r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r) ||
		unicode.Is(alphabeticSince15, r)
}

// alphabeticSince15 holds the code points of the Basic Multilingual Plane
// that are Alphabetic in node 20's Unicode tables but not in Unicode 15.0
// (Go's): letters added since, and the combining letters that Unicode 16
// made Other_Alphabetic.
var alphabeticSince15 = &unicode.RangeTable{R16: []unicode.Range16{
	{0x0363, 0x036F, 1}, {0x088F, 0x088F, 1}, {0x0897, 0x0897, 1}, {0x0C5C, 0x0C5C, 1}, {0x0CDC, 0x0CDC, 1},
	{0x1C89, 0x1C8A, 1}, {0x1DD3, 0x1DE6, 1}, {0xA7CB, 0xA7CF, 1}, {0xA7D2, 0xA7D4, 2}, {0xA7DA, 0xA7DC, 1},
	{0xA7F1, 0xA7F1, 1},
}}
