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
func tokens(frag model.Fragment, start, end int, target []token, units units) []token {
	off := 0
	for i := range frag.ChildCount() {
		child := frag.Child(i)
		endOff := off + child.NodeSize()
		from, to := max(off, start), min(endOff, end)
		if from < to {
			switch {
			case child.IsText():
				units.each(child, from-off, to-off, func(u uint16) { target = append(target, token{code: int32(u)}) })
			case child.IsLeaf():
				target = append(target, token{child.Type, tokStart})
			default:
				if from == off {
					target = append(target, token{child.Type, tokStart})
				}
				target = tokens(child.Content, max(off+1, from)-off-1, min(endOff-1, to)-off-1, target, units)
				if to == endOff {
					target = append(target, token{child.Type, tokEnd})
				}
			}
		}
		off = endOff
	}
	return target
}

// units caches the UTF-16 code units of the long text nodes that diffs
// and simplification read, so that each is decoded once however many
// changes fall in it (JavaScript indexes its strings at no cost). Short
// texts are decoded where they are read.
type units map[*model.Node][]uint16

// cachedText is the length in code units from which a text is cached.
const cachedText = 256

// each calls f with the code units from to to of the text node n.
func (c units) each(n *model.Node, from, to int, f func(u uint16)) {
	if n.NodeSize() < cachedText {
		eachCodeUnit(n.Text, func(i int, u uint16) bool {
			if i >= to {
				return false
			}
			if i >= from {
				f(u)
			}
			return true
		})
		return
	}
	all, ok := c[n]
	if !ok {
		all = make([]uint16, 0, n.NodeSize())
		eachCodeUnit(n.Text, func(_ int, u uint16) bool {
			all = append(all, u)
			return true
		})
		c[n] = all
	}
	for _, u := range all[min(max(from, 0), len(all)):max(min(to, len(all)), 0)] {
		f(u)
	}
}

// append appends the code units from to to of the text node n to out.
func (c units) append(out []uint16, n *model.Node, from, to int) []uint16 {
	c.each(n, from, to, func(u uint16) { out = append(out, u) })
	return out
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

// work counts the tokens that the diffs of an AddSteps call read and
// compare against Options.MaxDiffWork (limit 0: no bound).
type work struct {
	limit, left int64
	units       units
}

// spend takes n from what is left, and panics with tooMuchWork when that
// goes below 0.
func (w *work) spend(n int) {
	if w.limit == 0 {
		return
	}
	if w.left -= int64(n); w.left < 0 {
		panic(tooMuchWork{w.limit})
	}
}

// computeDiff compares the content of rng in fragA (old document) and
// fragB (new document) and returns the parts of rng that differ.
func computeDiff[D comparable](fragA, fragB model.Fragment, rng Change[D], w *work) []Change[D] {
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
	w.spend(max(0, rng.lenA()) + max(0, rng.lenB()))
	tokA := tokens(fragA, rng.FromA, rng.ToA, nil, w.units)
	tokB := tokens(fragB, rng.FromB, rng.ToB, nil, w.units)
	return diff(tokA, tokB, rng, w)
}

// diff runs Myers' diff algorithm on the tokens of rng in the old and
// the new document and returns the changed parts of rng.
func diff[D comparable](tokA, tokB []token, rng Change[D], w *work) []Change[D] {
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
		w.spend(size + 1)
		for diag := -size; diag <= size; diag += 2 {
			x, fromPrev := moveFrom(frontier, diag)
			if !fromPrev {
				x++
			}
			y := x + diag
			x0 := x
			for x < lenA && y < lenB && same(x, y) {
				x++
				y++
			}
			w.spend(x - x0)
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

// DiffMemory returns the most memory, in bytes, that AddSteps (or
// SimplifyChanges) holds for its diffs between documents of content
// sizes sizeA and sizeB: the code units of their long texts, decoded
// once, and, for the one diff it runs at a time, the token lists of both
// sides and the frontiers of the Myers diff (at most about 13 MB, for
// changes of 2,500 tokens and more).
func DiffMemory(sizeA, sizeB int) int64 {
	const tokenSize = 16            // a token: a pointer and an int32
	texts := 3 * int64(sizeA+sizeB) // 2 bytes a code unit, and the cache's entries
	tokens := int64(min(sizeA, maxTokenSize)+min(sizeB, maxTokenSize)) * tokenSize
	d := int64(min(maxDiffSize, sizeA+sizeB))
	frontier := (d + 1) * 2 * 2 // int16s
	return texts + tokens + (d/2+2)*frontier
}
