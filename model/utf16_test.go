package model

import (
	"strings"
	"testing"
)

func TestUTF16Len(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want int // "x".length in JavaScript
	}{
		{"empty", "", 0},
		{"ASCII", "hello", 5},
		{"two bytes", "é", 1},
		{"three bytes", "€", 1},
		{"BMP mix", "aé€z", 4},
		{"emoji", "😀", 2},
		{"emoji in text", "a😀b", 4},
		{"flag", "🇫🇷", 4},
		{"U+FFFD itself", "\uFFFD", 1},
		{"lone high surrogate", "\xED\xA0\xBD", 1},
		{"lone low surrogate", "\xED\xB8\x80", 1},
		{"lone surrogates around text", "\xED\xA0\xBDa\xED\xB8\x80", 3},
		{"high then low, unpaired in WTF-8", "\xED\xA0\xBD\xED\xB8\x80", 2},
		{"U+D7FF (last before the surrogates)", "\xED\x9F\xBF", 1},
		{"stray continuation byte", "\x80", 1},
		{"stray bytes", "a\x80\xBFb", 4},
		{"cut emoji", "\xF0\x9F\x98", 3},
		{"cut surrogate", "\xED\xA0", 2},
		{"overlong", "\xC0\xAF", 2},
		{"invalid lead", "\xFF\xFE", 2},
	}
	for _, tc := range tests {
		if got := UTF16Len(tc.s); got != tc.want {
			t.Errorf("%s: UTF16Len(%q) = %d, want %d", tc.name, tc.s, got, tc.want)
		}
	}
}

// TestUTF16LenAgrees: on the WTF-8 that the model holds, UTF16Len counts
// as textLen and as toUTF16 converts.
func TestUTF16LenAgrees(t *testing.T) {
	for _, s := range []string{"", "abc", "é€😀", "a\xED\xA0\xBDb", strings.Repeat("x😀\xED\xB8\x80", 10)} {
		if got, want := UTF16Len(s), textLen(s); got != want {
			t.Errorf("UTF16Len(%q) = %d, textLen %d", s, got, want)
		}
		if got, want := UTF16Len(s), len(toUTF16(s)); got != want {
			t.Errorf("UTF16Len(%q) = %d, len(toUTF16) %d", s, got, want)
		}
	}
}
