package model

func findDiffStart(a, b Fragment, pos int) (int, bool) {
	na, nb := a.ChildCount(), b.ChildCount()
	for i := 0; ; i++ {
		if i == na || i == nb {
			if na == nb {
				return 0, false
			}
			return pos, true
		}
		childA, childB := a.Child(i), b.Child(i)
		if childA == childB {
			pos += childA.size
			continue
		}
		if !childA.SameMarkup(childB) {
			return pos, true
		}
		if childA.Type.IsText && childA.Text != childB.Text {
			return pos + textDiffStart(childA.Text, childB.Text), true
		}
		if childA.Content.size != 0 || childB.Content.size != 0 {
			if inner, ok := findDiffStart(childA.Content, childB.Content, pos+1); ok {
				return inner, true
			}
		}
		pos += childA.size
	}
}

func findDiffEnd(a, b Fragment, posA, posB int) (int, int, bool) {
	for iA, iB := a.ChildCount(), b.ChildCount(); ; {
		if iA == 0 || iB == 0 {
			if iA == iB {
				return 0, 0, false
			}
			return posA, posB, true
		}
		iA--
		iB--
		childA, childB := a.Child(iA), b.Child(iB)
		size := childA.size
		if childA == childB {
			posA -= size
			posB -= size
			continue
		}
		if !childA.SameMarkup(childB) {
			return posA, posB, true
		}
		if childA.Type.IsText && childA.Text != childB.Text {
			same, adjust := textDiffEnd(childA.Text, childB.Text)
			posA -= same
			posB -= same
			if adjust {
				posA++
				posB++
			}
			return posA, posB, true
		}
		if childA.Content.size != 0 || childB.Content.size != 0 {
			if a, b, ok := findDiffEnd(childA.Content, childB.Content, posA-1, posB-1); ok {
				return a, b, true
			}
		}
		posA -= size
		posB -= size
	}
}

// textDiffStart returns the length in UTF-16 units of the common prefix of
// two different texts, moved back before a surrogate pair it would split.
func textDiffStart(a, b string) int {
	// Compare bytes first, then back up to a character boundary (the
	// same in both, since the bytes before it agree) and compare UTF-16
	// units from there: different characters may share a first unit.
	n := min(len(a), len(b))
	k := 0
	for k < n && a[k] == b[k] {
		k++
	}
	for k > 0 && k < len(a) && a[k]&0xC0 == 0x80 {
		k--
	}
	j := textLen(a[:k])
	var prevA uint16
	if k > 0 {
		it := unitIter{s: a, i: k}
		prevA, _ = it.prev()
	}
	ia, ib := unitIter{s: a, i: k}, unitIter{s: b, i: k}
	for {
		ua, okA := ia.next()
		ub, okB := ib.next()
		if !okA || !okB || ua != ub {
			if j > 0 && okA && okB && isHighSurrogate(prevA) && isLowSurrogate(ua) {
				j--
			}
			return j
		}
		j++
		prevA = ua
	}
}

// textDiffEnd returns the length in UTF-16 units of the common suffix of
// two different texts, and whether it splits a surrogate pair (then the
// JS moves the positions forward by one).
func textDiffEnd(a, b string) (same int, adjust bool) {
	n := min(len(a), len(b))
	k := 0
	for k < n && a[len(a)-1-k] == b[len(b)-1-k] {
		k++
	}
	p := len(a) - k
	for p < len(a) && a[p]&0xC0 == 0x80 {
		p++
	}
	q := len(b) - (len(a) - p)
	same = textLen(a[p:])
	var nextA uint16
	if p < len(a) {
		it := unitIter{s: a, i: p}
		nextA, _ = it.next()
	}
	ia, ib := unitIter{s: a, i: p}, unitIter{s: b, i: q}
	for {
		ua, okA := ia.prev()
		ub, okB := ib.prev()
		if !okA || !okB || ua != ub {
			return same, okA && okB && same > 0 && isHighSurrogate(ua) && isLowSurrogate(nextA)
		}
		same++
		nextA = ua
	}
}

func isHighSurrogate(u uint16) bool { return u >= 0xD800 && u < 0xDC00 }
func isLowSurrogate(u uint16) bool  { return u >= 0xDC00 && u < 0xE000 }

// unitIter walks the UTF-16 code units of a WTF-8 string from byte index
// i (which must be a character boundary), forwards or backwards.
type unitIter struct {
	s       string
	i       int
	pending uint16 // the other half of a surrogate pair being walked
	has     bool
}

func (it *unitIter) next() (uint16, bool) {
	if it.has {
		it.has = false
		return it.pending, true
	}
	if it.i >= len(it.s) {
		return 0, false
	}
	u1, u2, n := decodeUnits(it.s, it.i)
	it.i += n
	if u2 != 0 {
		it.pending, it.has = u2, true
	}
	return u1, true
}

func (it *unitIter) prev() (uint16, bool) {
	if it.has {
		it.has = false
		return it.pending, true
	}
	if it.i <= 0 {
		return 0, false
	}
	j := it.i - 1
	for j > 0 && it.i-j < 4 && it.s[j]&0xC0 == 0x80 {
		j--
	}
	u1, u2, _ := decodeUnits(it.s, j)
	it.i = j
	if u2 != 0 {
		it.pending, it.has = u1, true
		return u2, true
	}
	return u1, true
}

// decodeUnits decodes the WTF-8 character at s[i] into one UTF-16 unit
// (u2 == 0) or a surrogate pair, and returns its length in bytes.
func decodeUnits(s string, i int) (u1, u2 uint16, n int) {
	c := s[i]
	switch {
	case c < 0x80:
		return uint16(c), 0, 1
	case c < 0xE0 && i+1 < len(s):
		return uint16(c&0x1F)<<6 | uint16(s[i+1]&0x3F), 0, 2
	case c < 0xF0 && i+2 < len(s):
		return uint16(c&0x0F)<<12 | uint16(s[i+1]&0x3F)<<6 | uint16(s[i+2]&0x3F), 0, 3
	case c >= 0xF0 && i+3 < len(s):
		r := rune(c&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F)
		hi, lo := surrogates(r)
		return uint16(hi), uint16(lo), 4
	}
	return uint16(c), 0, 1 // truncated sequence: not produced by this package
}
