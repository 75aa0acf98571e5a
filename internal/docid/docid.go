// Package docid is the rule for document ids, which the server checks on
// every route that names a document and the web pages check for
// /edit/{id}: any name of 1 to MaxBytes bytes of UTF-8 without control
// characters, other than "." and "..".
package docid

import (
	"strconv"
	"unicode/utf8"
)

// MaxBytes is the longest document id, in bytes.
const MaxBytes = 512

// Check returns nil when id is a valid document id, and otherwise an
// error saying why ("empty", "over 512 bytes", "not UTF-8", "not . or
// ..", "a control character").
func Check(id string) error {
	switch {
	case id == "":
		return problem("empty")
	case len(id) > MaxBytes:
		return problem("over " + strconv.Itoa(MaxBytes) + " bytes")
	case !utf8.ValidString(id):
		return problem("not UTF-8")
	case id == "." || id == "..":
		// Browsers and proxies resolve "." and ".." in URLs, so no
		// client could reach such a document.
		return problem("not . or ..")
	}
	for _, r := range id {
		if r < 0x20 || 0x7f <= r && r < 0xa0 {
			return problem("a control character")
		}
	}
	return nil
}

// problem is why an id is invalid.
type problem string

func (p problem) Error() string { return string(p) }
