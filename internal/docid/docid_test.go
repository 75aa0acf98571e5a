package docid

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, id := range []string{"d", "My notes", "Café crème", "😀 plans", "team-a/notes", "a..b", "%41", strings.Repeat("é", 256)} {
		if err := Check(id); err != nil {
			t.Errorf("Check(%q) = %v, want nil", id, err)
		}
	}
	for id, want := range map[string]string{
		"": "empty", ".": "not . or ..", "..": "not . or ..", "a\x00b": "a control character", "a\nb": "a control character",
		"a\u0085b": "a control character", "a\x7fb": "a control character", "\xffx": "not UTF-8", strings.Repeat("é", 257): "over 512 bytes",
	} {
		if err := Check(id); err == nil || err.Error() != want {
			t.Errorf("Check(%q) = %v, want %q", id, err, want)
		}
	}
}
