package collab

import (
	"bytes"
	"math"
	"strconv"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
)

// ClientID is the JSON text of a client's id as prosemirror-collab sends
// it: a number (an integer from 0 to 2^53) or a string of at most 256
// bytes. It is kept verbatim and given back in Events.
type ClientID []byte

// maxClientIDString is the longest string client id, in bytes.
const maxClientIDString = 256

// maxSafeInteger is 2^53, the largest integer that every JSON reader
// (JavaScript's in particular) keeps exactly.
const maxSafeInteger = 1 << 53

// ParseClientID checks that raw is the JSON text of a client id, an
// integer from 0 to 2^53 or a string of at most 256 bytes, and returns it
// without surrounding whitespace. The error matches ErrInvalidRequest and
// says what is wrong.
func ParseClientID(raw []byte) (ClientID, error) {
	text := bytes.Trim(raw, " \t\r\n")
	if len(text) == 0 {
		return nil, invalidf("clientID is missing")
	}
	d := jsonscan.NewDecoder(text)
	kind, err := d.Peek()
	if err != nil {
		return nil, invalidf("clientID is not JSON: %v", err)
	}
	switch kind {
	case jsonscan.Number:
		n, raw, err := d.ReadNumber()
		if err != nil {
			return nil, invalidf("clientID is not JSON: %v", err)
		}
		ok := n >= 0 && n <= maxSafeInteger && n == math.Trunc(n)
		if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			ok = i >= 0 && i <= maxSafeInteger // exact for plain integers
		}
		if !ok {
			return nil, invalidf("clientID %s is not an integer from 0 to 2^53", text)
		}
	case jsonscan.String:
		s, err := d.ReadStringBytes()
		if err != nil {
			return nil, invalidf("clientID is not JSON: %v", err)
		}
		if len(s) > maxClientIDString {
			return nil, invalidf("clientID is a string of %d bytes (at most %d)", len(s), maxClientIDString)
		}
	default:
		return nil, invalidf("clientID must be a number or a string, not %v", kind)
	}
	if err := d.End(); err != nil {
		return nil, invalidf("clientID is not JSON: %v", err)
	}
	return text, nil
}
