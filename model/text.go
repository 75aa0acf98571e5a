package model

import (
	"strings"
	"unicode/utf8"
)

// Text in this package is stored as WTF-8: UTF-8 in which a lone UTF-16
// surrogate (which JavaScript strings may hold, for instance after a text
// node was cut in the middle of an emoji) is encoded as the three-byte
// sequence of its code point. Valid surrogate pairs are always stored as
// one four-byte UTF-8 sequence. All lengths and offsets below are in
// UTF-16 code units, as JavaScript counts them.

// textLen returns the length of s in UTF-16 code units.
func textLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c < 0x80:
			i++
			n++
		case c < 0xE0:
			i += 2
			n++
		case c < 0xF0:
			i += 3
			n++
		default:
			i += 4
			n += 2
		}
	}
	return n
}

// isASCII reports whether s holds only ASCII, where byte and UTF-16
// offsets agree.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// textSlice returns the part of s between the UTF-16 offsets from and to
// (clamped to the text, like String.prototype.slice with from <= to). A
// surrogate pair cut in half yields a lone surrogate.
func textSlice(s string, from, to int) string {
	if from < 0 {
		from = 0
	}
	if to <= from {
		return ""
	}
	if isASCII(s) {
		if to > len(s) {
			to = len(s)
		}
		if from >= to {
			return ""
		}
		return s[from:to]
	}
	var b strings.Builder
	pos := 0 // UTF-16 offset of s[i]
	for i := 0; i < len(s) && pos < to; {
		c := s[i]
		size, units := 1, 1
		switch {
		case c < 0x80:
		case c < 0xE0:
			size = 2
		case c < 0xF0:
			size = 3
		default:
			size, units = 4, 2
		}
		if units == 1 {
			if pos >= from {
				b.WriteString(s[i : i+size])
			}
		} else {
			r, _ := utf8.DecodeRuneInString(s[i : i+size])
			hi, lo := surrogates(r)
			if pos >= from && pos+1 < to {
				b.WriteString(s[i : i+size])
			} else if pos >= from { // only the high half is inside
				writeSurrogate(&b, hi)
			} else if pos+1 >= from && pos+1 < to { // only the low half
				writeSurrogate(&b, lo)
			}
		}
		i += size
		pos += units
	}
	return b.String()
}

// textConcat joins two texts, merging a lone high surrogate at the end of
// a with a lone low surrogate at the start of b into one character.
func textConcat(a, b string) string {
	if joinsSurrogates(a, b) {
		return string(appendText([]byte(a), b))
	}
	return a + b
}

// joinsSurrogates reports whether a ends with a lone high surrogate and b
// starts with a lone low one (in WTF-8), which concatenated in UTF-16 make
// one code point.
func joinsSurrogates[A, B ~string | ~[]byte](a A, b B) bool {
	n := len(a)
	return n >= 3 && len(b) >= 3 && a[n-3] == 0xED && a[n-2] >= 0xA0 && a[n-2] <= 0xAF &&
		b[0] == 0xED && b[1] >= 0xB0 && b[1] <= 0xBF
}

// appendText appends s to buf as JS concatenates strings: a lone high
// surrogate at the end of buf and a lone low one at the start of s become
// the code point they make together.
func appendText(buf []byte, s string) []byte {
	if !joinsSurrogates(buf, s) {
		return append(buf, s...)
	}
	n := len(buf)
	hi := decodeSurrogate(string(buf[n-3:]))
	lo := decodeSurrogate(s[:3])
	buf = utf8.AppendRune(buf[:n-3], (hi-0xD800)<<10+(lo-0xDC00)+0x10000)
	return append(buf, s[3:]...)
}

// surrogates splits an astral code point into its UTF-16 halves.
func surrogates(r rune) (hi, lo rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

// writeSurrogate writes a lone surrogate code point as WTF-8.
func writeSurrogate(b *strings.Builder, r rune) {
	b.WriteByte(0xE0 | byte(r>>12))
	b.WriteByte(0x80 | byte(r>>6)&0x3F)
	b.WriteByte(0x80 | byte(r)&0x3F)
}

// decodeSurrogate decodes a three-byte WTF-8 surrogate sequence.
func decodeSurrogate(s string) rune {
	return rune(s[0]&0x0F)<<12 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F)
}
