package model

import "unicode/utf8"

// UTF16Len returns the length of the WTF-8 text s in UTF-16 code units,
// as JavaScript's String.prototype.length counts it: a character outside
// the Basic Multilingual Plane (four bytes) counts 2, a lone surrogate
// (three bytes, ED A0–BF 80–BF) counts 1, as does every other character.
// Bytes that are not WTF-8 count 1 each, as the U+FFFD that each decodes
// to.
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c < utf8.RuneSelf:
			i++
		case c == 0xED && i+2 < len(s) && 0xA0 <= s[i+1] && s[i+1] <= 0xBF && 0x80 <= s[i+2] && s[i+2] <= 0xBF:
			i += 3 // a lone surrogate, which utf8 refuses
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			if r > 0xFFFF {
				n++
			}
		}
		n++
	}
	return n
}
