package model

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
)

// JSON values held in attributes are nil, bool, float64, string, []any and
// JSONObject. This file has what every part of the package needs to treat
// them as JavaScript does: property order, deep comparison, typeof,
// String() coercion and JSON.stringify encoding.

// isArrayIndex reports whether key is a canonical array index ("0" …
// "4294967294"), which JavaScript orders before other property keys.
func isArrayIndex(key string) (uint32, bool) {
	if key == "" || len(key) > 10 || (len(key) > 1 && key[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n >= 4294967295 {
		return 0, false
	}
	return uint32(n), true
}

// Get returns the value of key and whether it is present.
func (o JSONObject) Get(key string) (any, bool) {
	for _, p := range o {
		if p.Key == key {
			return p.Value, true
		}
	}
	return nil, false
}

// With returns o with key set to v, keeping JavaScript property order: an
// existing key keeps its place, array-index keys sort ascending before the
// others, other new keys go last. o itself is not modified.
func (o JSONObject) With(key string, v any) JSONObject {
	for i, p := range o {
		if p.Key == key {
			out := append(JSONObject(nil), o...)
			out[i].Value = v
			return out
		}
	}
	out := make(JSONObject, 0, len(o)+1)
	idx, isIdx := isArrayIndex(key)
	if !isIdx {
		return append(append(out, o...), JSONProp{key, v})
	}
	inserted := false
	for _, p := range o {
		if !inserted {
			pi, pIdx := isArrayIndex(p.Key)
			if !pIdx || pi > idx {
				out = append(out, JSONProp{key, v})
				inserted = true
			}
		}
		out = append(out, p)
	}
	if !inserted {
		out = append(out, JSONProp{key, v})
	}
	return out
}

// compareDeep is prosemirror-model's compareDeep: structural equality
// where object key order does not matter.
func compareDeep(a, b any) bool {
	switch av := a.(type) {
	case nil:
		return b == nil
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case float64:
		bv, ok := b.(float64)
		return ok && av == bv
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !compareDeep(av[i], bv[i]) {
				return false
			}
		}
		return true
	case JSONObject:
		bv, ok := b.(JSONObject)
		if !ok || len(av) != len(bv) {
			return false
		}
		for _, p := range av {
			q, found := bv.Get(p.Key)
			if !found || !compareDeep(p.Value, q) {
				return false
			}
		}
		return true
	}
	return false
}

// jsTypeof returns what JavaScript's typeof says of v, with "null" for
// null as prosemirror-model's validate strings use it.
func jsTypeof(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	}
	return "object"
}

// jsString converts v as JavaScript's String(v) does.
func jsString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		return string(appendJSNumber(nil, x))
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			if e != nil {
				parts[i] = jsString(e)
			}
		}
		return strings.Join(parts, ",")
	}
	return "[object Object]"
}

// appendJSNumber appends f formatted as JavaScript's Number#toString
// (which JSON.stringify uses for finite numbers).
func appendJSNumber(buf []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(buf, "null"...) // JSON.stringify's answer; String() differs but cannot occur from JSON
	}
	if f == 0 {
		return append(buf, '0') // also -0
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		if math.Abs(f) < 1<<53 {
			return strconv.AppendInt(buf, int64(f), 10)
		}
		return strconv.AppendFloat(buf, f, 'f', -1, 64)
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(buf, f, 'f', -1, 64)
	}
	// Exponent form: shortest digits, "e+21" / "e-7" as JavaScript writes.
	start := len(buf)
	buf = strconv.AppendFloat(buf, f, 'e', -1, 64)
	// Go writes e+21, e-07: strip leading zeros of the exponent.
	e := bytes.LastIndexByte(buf[start:], 'e') + start
	exp := buf[e+2:]
	i := 0
	for i < len(exp)-1 && exp[i] == '0' {
		i++
	}
	if i > 0 {
		buf = append(buf[:e+2], exp[i:]...)
	}
	return buf
}

// appendJSONString appends s (WTF-8) as JSON.stringify writes a string:
// only '"', '\\' and control characters are escaped, lone surrogates are
// written as \udxxx.
func appendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	// Copy s, then look for the first byte that may need escaping, a word
	// at a time: usually there is none.
	at := len(buf)
	buf = append(slices.Grow(buf, len(s)+8), s...)
	// Scan into the spare capacity too, so that the last bytes go a word
	// at a time as well; what lies past the end does not count.
	i := min(jsonscan.SkipPlain(buf[:len(buf)+8], at)-at, len(s))
	if i == len(s) {
		return append(buf, '"')
	}
	buf = buf[:at+i]
	start := i
	for i < len(s) {
		c := s[i]
		if jsonPlainByte[c] {
			i++
			continue
		}
		if c < 0x80 {
			buf = append(buf, s[start:i]...)
			switch c {
			case '"':
				buf = append(buf, '\\', '"')
			case '\\':
				buf = append(buf, '\\', '\\')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		// c is 0xED: the first byte of a lone surrogate in WTF-8 (ED A0-BF
		// xx), or of an ordinary character (ED 80-9F xx).
		if i+2 < len(s) && s[i+1] >= 0xA0 && s[i+1] <= 0xBF {
			buf = append(buf, s[start:i]...)
			r := decodeSurrogate(s[i : i+3])
			buf = append(buf, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
			i += 3
			start = i
			continue
		}
		i++
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

const hexDigits = "0123456789abcdef"

// jsonPlainByte tells the bytes that appendJSONString copies as they are:
// all but '"', '\\', control characters and 0xED, which starts the WTF-8
// form of a lone surrogate (and never occurs inside another character).
var jsonPlainByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\' && c != 0xED
	}
	return t
}()

// appendJSONValue appends v encoded as JSON.stringify would.
func appendJSONValue(buf []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(buf, "null"...)
	case bool:
		if x {
			return append(buf, "true"...)
		}
		return append(buf, "false"...)
	case float64:
		return appendJSNumber(buf, x)
	case string:
		return appendJSONString(buf, x)
	case []any:
		buf = append(buf, '[')
		for i, e := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendJSONValue(buf, e)
		}
		return append(buf, ']')
	case JSONObject:
		buf = append(buf, '{')
		for i, p := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendJSONString(buf, p.Key)
			buf = append(buf, ':')
			buf = appendJSONValue(buf, p.Value)
		}
		return append(buf, '}')
	}
	return append(buf, "null"...)
}

// ParseJSONValue parses one JSON value into the representation used for
// attributes (nil, bool, float64, string, []any, JSONObject), with
// JavaScript's key order and last-duplicate-wins, as JSON.parse does. It is
// the general path, used for specs and tests.
func ParseJSONValue(data []byte) (any, error) {
	d := jsonscan.NewDecoder(data)
	v, err := ValueFromDecoder(d)
	if err != nil {
		return nil, err
	}
	if err := d.End(); err != nil {
		return nil, err
	}
	return v, nil
}

// AppendJSONString appends s as JSON.stringify writes a string (no HTML
// escaping; lone surrogates kept in WTF-8 text written as \udxxx).
func AppendJSONString(buf []byte, s string) []byte { return appendJSONString(buf, s) }

// AppendJSONValue appends an attribute value (see Attrs) encoded as
// JSON.stringify would.
func AppendJSONValue(buf []byte, v any) []byte { return appendJSONValue(buf, v) }

// JSString converts a JSON value as JavaScript's String(v) does (used where
// the JS libraries coerce a value to a property key).
func JSString(v any) string { return jsString(v) }

// JSTruthy reports whether a JSON value is truthy in JavaScript.
func JSTruthy(v any) bool { return jsTruthy(v) }
