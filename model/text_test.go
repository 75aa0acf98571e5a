package model

import "testing"

func TestTextUTF16(t *testing.T) {
	emoji := "a😀b" // 😀 is U+1F600: D83D DE00
	if got := textLen(emoji); got != 4 {
		t.Fatalf("textLen = %d, want 4", got)
	}
	hi := textSlice(emoji, 0, 2)
	lo := textSlice(emoji, 2, 4)
	if hi != "a\xed\xa0\xbd" {
		t.Errorf("high half = %q", hi)
	}
	if lo != "\xed\xb8\x80b" {
		t.Errorf("low half = %q", lo)
	}
	if got := textConcat(hi, lo); got != emoji {
		t.Errorf("concat = %q, want %q", got, emoji)
	}
	if textLen(hi) != 2 || textLen(lo) != 2 {
		t.Errorf("lengths of halves: %d %d", textLen(hi), textLen(lo))
	}
	cases := []struct {
		s        string
		from, to int
		want     string
	}{
		{"hello", 1, 3, "el"},
		{"hello", 3, 99, "lo"},
		{"héllo", 1, 3, "él"},
		{"x😀😀y", 1, 5, "😀😀"},
		{"x😀😀y", 2, 4, "\xed\xb8\x80\xed\xa0\xbd"},
		{"日本語", 2, 3, "語"},
		{"abc", 2, 1, ""},
	}
	for _, c := range cases {
		if got := textSlice(c.s, c.from, c.to); got != c.want {
			t.Errorf("textSlice(%q, %d, %d) = %q, want %q", c.s, c.from, c.to, got, c.want)
		}
	}
}
