package changeset

import (
	"unicode/utf8"

	"github.com/pmauthority/pmauthority/model"
)

// token is a document token as prosemirror-changeset's default encoder
// compares them: a character (its UTF-16 code unit, marks ignored), the
// start of a node or a leaf node (its type), or the end of a node (its
// type). Attributes are ignored.
type token struct {
	typ  *model.NodeType // nil for a character
	code int32           // the code unit of a character; tokStart or tokEnd for a node
}

const (
	tokStart = -1
	tokEnd   = -2
)

// tokens appends the tokens of frag from start to end to target.
func tokens(frag model.Fragment, start, end int, target []token) []token {
	off := 0
	for i := range frag.ChildCount() {
		child := frag.Child(i)
		endOff := off + child.NodeSize()
		from, to := max(off, start), min(endOff, end)
		if from < to {
			switch {
			case child.IsText():
				target = appendCodeUnits(target, child.Text, from-off, to-off)
			case child.IsLeaf():
				target = append(target, token{child.Type, tokStart})
			default:
				if from == off {
					target = append(target, token{child.Type, tokStart})
				}
				target = tokens(child.Content, max(off+1, from)-off-1, min(endOff-1, to)-off-1, target)
				if to == endOff {
					target = append(target, token{child.Type, tokEnd})
				}
			}
		}
		off = endOff
	}
	return target
}

// appendCodeUnits appends the UTF-16 code units from to to of the WTF-8
// text s as character tokens.
func appendCodeUnits(target []token, s string, from, to int) []token {
	eachCodeUnit(s, func(i int, u uint16) bool {
		if i >= to {
			return false
		}
		if i >= from {
			target = append(target, token{code: int32(u)})
		}
		return true
	})
	return target
}

// eachCodeUnit calls f with the offset and value of each UTF-16 code unit
// of the WTF-8 text s, as JavaScript's charCodeAt reads them, until f
// returns false.
func eachCodeUnit(s string, f func(i int, u uint16) bool) {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !f(n, uint16(c)) {
				return
			}
			i++
			n++
			continue
		}
		if c == 0xED && i+2 < len(s) && 0xA0 <= s[i+1] && s[i+1] <= 0xBF {
			// A lone surrogate, which utf8 refuses.
			if !f(n, uint16(c&0x0F)<<12|uint16(s[i+1]&0x3F)<<6|uint16(s[i+2]&0x3F)) {
				return
			}
			i += 3
			n++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r > 0xFFFF {
			r -= 0x10000
			if !f(n, uint16(0xD800+(r>>10)&0x3FF)) || !f(n+1, uint16(0xDC00+r&0x3FF)) {
				return
			}
			n += 2
			continue
		}
		if !f(n, uint16(r)) {
			return
		}
		n++
	}
}

// prosemirror-changeset refuses to compute a diff with more than
// maxDiffSize insertions or deletions, and scans no further than
// maxTokenSize tokens, as a safeguard against runaway computations.
const (
	maxDiffSize  = 2500
	maxTokenSize = 10000
)

// minUnchanged is the minimum length of an unchanged range (not at the
// start or end of the compared content), higher in bigger replacements so
// that replacing a paragraph does not give a soup of coincidentally equal
// letters.
func minUnchanged(sizeA, sizeB int) int {
	return min(15, max(2, max(sizeA, sizeB)/10))
}

// computeDiff compares the content of rng in fragA (old document) and
// fragB (new document) and returns the parts of rng that differ.
func computeDiff[D comparable](fragA, fragB model.Fragment, rng Change[D]) []Change[D] {
	// When one side is longer than the maximum scan distance, the
	// algorithm will never find a diff.
	if max(rng.lenA(), rng.lenB()) > maxTokenSize {
		cutA, cutB := fragA.Cut(rng.FromA, rng.ToA), fragB.Cut(rng.FromB, rng.ToB)
		diffStart, ok := cutA.FindDiffStart(cutB, 0)
		if !ok {
			return nil
		}
		endA, endB, _ := cutA.FindDiffEnd(cutB, cutA.Size(), cutB.Size())
		rng = rng.slice(diffStart, endA, diffStart, endB)
		if max(rng.lenA(), rng.lenB()) > maxTokenSize {
			return []Change[D]{rng}
		}
	}
	tokA := tokens(fragA, rng.FromA, rng.ToA, nil)
	tokB := tokens(fragB, rng.FromB, rng.ToB, nil)
	return diff(tokA, tokB, rng)
}

// diff runs Myers' diff algorithm on the tokens of rng in the old and
// the new document and returns the changed parts of rng.
func diff[D comparable](tokA, tokB []token, rng Change[D]) []Change[D] {
	// Scan from both sides to cheaply eliminate work.
	start, endA, endB := 0, len(tokA), len(tokB)
	for start < len(tokA) && start < len(tokB) && tokA[start] == tokB[start] {
		start++
	}
	if start == len(tokA) && start == len(tokB) {
		return nil
	}
	for endA > start && endB > start && tokA[endA-1] == tokB[endB-1] {
		endA--
		endB--
	}
	if endA == start && endB == start {
		return nil
	}
	// If the result is simple or too big to compute cheaply, the
	// remaining region is the diff.
	if endA == start || endB == start || (endA == endB && endA == start+1) || max(endA, endB)-start > maxDiffSize {
		return []Change[D]{rng.slice(start, endA, start, endB)}
	}

	// See https://neil.fraser.name/writing/diff/myers.pdf and
	// https://blog.jcoglan.com/2017/02/12/the-myers-diff-algorithm-part-1/
	lenA, lenB := endA-start, endB-start
	// same compares the tokens at x in A and y in B (relative to start);
	// outside the token lists nothing is equal (JS reads undefined).
	same := func(x, y int) bool {
		x, y = start+x, start+y
		return x >= 0 && y >= 0 && x < len(tokA) && y < len(tokB) && tokA[x] == tokB[y]
	}
	maxD := min(maxDiffSize, lenA+lenB)
	var history [][]int16
	frontier := make([]int16, (maxD+1)*2)
	for i := range frontier {
		frontier[i] = -1
	}
	// moveFrom tells whether diagonal diag was reached from diag-1 (an
	// insertion) rather than diag+1 (a deletion) and returns the x it
	// starts from. At the lowest diagonal the frontier has no diag-1
	// (JS reads undefined, which compares false).
	moveFrom := func(frontier []int16, diag int) (x int, fromPrev bool) {
		j := diag + 1 + maxD
		if j < 0 || j >= len(frontier) {
			return 0, false // not reached: diag stays within the frontier
		}
		next := int(frontier[j])
		if i := diag - 1 + maxD; i >= 0 && next < int(frontier[i]) {
			return int(frontier[i]), true
		}
		return next, false
	}

	for size := 0; size <= maxD; size++ {
		for diag := -size; diag <= size; diag += 2 {
			x, fromPrev := moveFrom(frontier, diag)
			if !fromPrev {
				x++
			}
			y := x + diag
			for x < lenA && y < lenB && same(x, y) {
				x++
				y++
			}
			frontier[diag+maxD] = int16(x)
			if x >= lenA && y >= lenB {
				return traceBack(rng, frontier, history, size, diag, maxD, start, minUnchanged(endA-start, endB-start), moveFrom)
			}
		}
		// Only odd or even diagonals are read from each frontier, so it is
		// kept every other round.
		if size%2 == 0 {
			history = append(history, append([]int16(nil), frontier...))
		}
	}
	// The maximum amount of work was done: the whole range is the diff.
	return []Change[D]{rng.slice(start, endA, start, endB)}
}

// traceBack follows the frontiers of a diff found at size and diag back
// to the start and returns the changed ranges, front to back, merging
// those less than minSpan tokens apart.
func traceBack[D comparable](rng Change[D], frontier []int16, history [][]int16, size, diag, maxD, start, minSpan int,
	moveFrom func([]int16, int) (int, bool)) []Change[D] {
	var out []Change[D]
	fromA, toA, fromB, toB := -1, -1, -1, -1
	// add adds a step, back to front.
	add := func(fA, tA, fB, tB int) {
		if fromA > -1 && fromA < tA+minSpan {
			fromA, fromB = fA, fB
			return
		}
		if fromA > -1 {
			out = append(out, rng.slice(fromA, toA, fromB, toB))
		}
		fromA, toA, fromB, toB = fA, tA, fB, tB
	}
	for i := size - 1; i >= 0; i-- {
		x, fromPrev := moveFrom(frontier, diag)
		if fromPrev {
			diag--
			x += start
			y := x + diag
			add(x, x, y, y+1)
		} else {
			diag++
			x += start
			y := x + diag
			add(x, x+1, y, y)
		}
		if i>>1 < len(history) {
			frontier = history[i>>1]
		}
	}
	if fromA > -1 {
		out = append(out, rng.slice(fromA, toA, fromB, toB))
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// DiffMemory returns the most memory, in bytes, that AddSteps holds for
// one diff while it minimises a change between documents of content
// sizes sizeA and sizeB: the token lists of both sides and the frontiers
// the Myers diff keeps (at most about 13 MB, for changes of 2,500 tokens
// and more). AddSteps runs one diff at a time.
func DiffMemory(sizeA, sizeB int) int64 {
	const tokenSize = 16 // a token: a pointer and an int32
	tokens := int64(min(sizeA, maxTokenSize)+min(sizeB, maxTokenSize)) * tokenSize
	d := int64(min(maxDiffSize, sizeA+sizeB))
	frontier := (d + 1) * 2 * 2 // int16s
	return tokens + (d/2+2)*frontier
}
