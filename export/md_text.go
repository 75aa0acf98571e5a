package export

import (
	"html"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/util"
)

// This file decodes text as markdown-it 14 does (common/utils.mjs and the
// escape and entity rules, MIT, see NOTICE): goldmark's tree keeps text as
// it is in the source, with its backslash escapes and entities.

// isEscapable reports whether a backslash escapes c (ASCII punctuation).
func isEscapable(c byte) bool {
	return strings.IndexByte("\\!\"#$%&'()*+,./:;<=>?@[]^_`{|}~-", c) >= 0
}

// isValidEntityCode is markdown-it's isValidEntityCode.
func isValidEntityCode(c int) bool {
	switch {
	case c >= 0xD800 && c <= 0xDFFF, c >= 0xFDD0 && c <= 0xFDEF, c&0xFFFF == 0xFFFF, c&0xFFFF == 0xFFFE,
		c <= 0x08, c == 0x0B, c >= 0x0E && c <= 0x1F, c >= 0x7F && c <= 0x9F, c > 0x10FFFF:
		return false
	}
	return true
}

// entityAt matches markdown-it's entity patterns at s[0] == '&': a numeric
// reference (maxHex and maxDec digits) or a name ([a-z][a-z0-9]{1,31},
// any case), followed by ";". It returns the length of the match, the
// name or digits, and whether it is numeric.
func entityAt(s string, maxHex, maxDec int) (n int, name string, numeric bool) {
	if len(s) < 3 || s[0] != '&' {
		return 0, "", false
	}
	if s[1] == '#' {
		i, max := 2, maxDec
		hex := s[2] == 'x' || s[2] == 'X'
		if hex {
			i, max = 3, maxHex
		}
		j := i
		for j < len(s) && j-i < max && (hex && isHex(s[j]) || !hex && s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j == i || j >= len(s) || s[j] != ';' {
			return 0, "", false
		}
		return j + 1, s[2:j], true
	}
	if !isASCIILetter(s[1]) {
		return 0, "", false
	}
	j := 2
	for j < len(s) && j-1 < 32 && isASCIIAlnum(s[j]) {
		j++
	}
	if j-1 < 2 || j >= len(s) || s[j] != ';' {
		return 0, "", false
	}
	return j + 1, s[1:j], false
}

// numericEntity returns the code point of digits ("x41" or "65").
func numericEntity(digits string) int {
	var v uint64
	var err error
	if digits[0] == 'x' || digits[0] == 'X' {
		v, err = strconv.ParseUint(digits[1:], 16, 64)
	} else {
		v, err = strconv.ParseUint(digits, 10, 64)
	}
	if err != nil || v > 0x7fffffff {
		return -1
	}
	return int(v)
}

// inlineSpecial returns the text markdown-it's escape or entity rule makes
// of the start of s (a text_special token), and the length it takes; 0
// when neither applies.
func inlineSpecial(s string) (string, int) {
	switch s[0] {
	case '\\':
		if len(s) < 2 {
			return "", 0
		}
		if s[1] == ' ' {
			return "\\", 1
		}
		if isEscapable(s[1]) {
			return s[1:2], 2
		}
		_, size := utf8.DecodeRuneInString(s[1:])
		return s[:1+size], 1 + size
	case '&':
		n, name, numeric := entityAt(s, 6, 7)
		if n == 0 {
			return "", 0
		}
		if numeric {
			if c := numericEntity(name); c >= 0 && isValidEntityCode(c) {
				return string(rune(c)), n
			}
			return "\ufffd", n
		}
		if e, ok := util.LookUpHTML5EntityByName(name); ok {
			return string(e.Characters), n
		}
	}
	return "", 0
}

// decodeInline returns the text markdown-it makes of raw inline source
// that goldmark left as text: escapes and entities decoded.
func decodeInline(raw string) string {
	if !strings.ContainsAny(raw, "\\&") {
		return raw
	}
	var b strings.Builder
	for i := 0; i < len(raw); {
		if c := raw[i]; c == '\\' || c == '&' {
			if text, n := inlineSpecial(raw[i:]); n > 0 {
				b.WriteString(text)
				i += n
				continue
			}
		}
		b.WriteByte(raw[i])
		i++
	}
	return b.String()
}

// leadingText splits raw as markdown-it's tokens of an image description
// do: it returns the text before the first escape or entity, the decoded
// special when raw starts with one, and whether there is one.
func leadingText(raw string) (text, special string, stop bool) {
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c == '\\' || c == '&' {
			if t, n := inlineSpecial(raw[i:]); n > 0 {
				if i == 0 {
					return "", t, true
				}
				return raw[:i], "", true
			}
		}
	}
	return raw, "", false
}

// unescapeAll is markdown-it's unescapeAll (used for link destinations
// and titles): escapes and entities decoded, invalid numeric references
// kept as they are.
func unescapeAll(s string) string {
	if !strings.ContainsAny(s, "\\&") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\\' && i+1 < len(s) && isEscapable(s[i+1]) {
			b.WriteByte(s[i+1])
			i += 2
			continue
		}
		if c == '&' {
			if n, name, numeric := entityAt(s[i:], 8, 8); n > 0 {
				match := s[i : i+n]
				if numeric {
					if code := numericEntity(name); code >= 0 && isValidEntityCode(code) {
						b.WriteRune(rune(code))
					} else {
						b.WriteString(match)
					}
				} else {
					b.WriteString(html.UnescapeString(match))
				}
				i += n
				continue
			}
			// ENTITY_RE also takes "&#" followed by letters and digits,
			// which decodes to itself.
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}
