// Package jsonscan is a fast pull decoder for JSON held in memory. It reads
// one token at a time from a []byte, without building a tree, so that
// callers (the document model, step decoding) can turn JSON straight into
// their own values.
//
// Strings are decoded as JavaScript's JSON.parse would see them, held in
// WTF-8: a \uXXXX escape of a lone UTF-16 surrogate becomes the three-byte
// encoding of that surrogate, an escaped surrogate pair becomes one
// character, and bytes of the input that are not valid UTF-8 become U+FFFD
// exactly as a UTF-8 TextDecoder replaces them (one U+FFFD per maximal
// ill-formed subsequence). Nesting deeper than a limit (DefaultMaxDepth
// unless set) is an error, so that hostile input cannot exhaust the stack
// of recursive callers.
package jsonscan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// DefaultMaxDepth is the nesting limit used when none is set: the number
// of arrays and objects that may be open at once.
const DefaultMaxDepth = 512

// ErrTooDeep is wrapped by the SyntaxError returned for input nested
// deeper than the decoder's limit.
var ErrTooDeep = errors.New("JSON nested too deeply")

// SyntaxError is malformed JSON or JSON over the nesting limit.
type SyntaxError struct {
	// Msg describes the problem.
	Msg string
	// Offset is the byte offset in the input at which it was found.
	Offset int

	err error // ErrTooDeep or nil
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("JSON syntax error at offset %d: %s", e.Offset, e.Msg)
}

// Unwrap returns ErrTooDeep for a nesting-limit error.
func (e *SyntaxError) Unwrap() error { return e.err }

// Kind is the kind of a JSON value, as told by its first byte.
type Kind uint8

// The kinds of JSON values.
const (
	Invalid Kind = iota
	Null
	False
	True
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"invalid", "null", "false", "true", "number", "string", "array", "object"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// kindOf maps a value's first byte to its kind.
var kindOf = [256]Kind{
	'n': Null, 'f': False, 't': True, '"': String, '[': Array, '{': Object,
	'-': Number, '0': Number, '1': Number, '2': Number, '3': Number, '4': Number,
	'5': Number, '6': Number, '7': Number, '8': Number, '9': Number,
}

// Decoder reads JSON values from a byte slice. The zero value reads an
// empty input; use NewDecoder or Reset. A Decoder is not safe for
// concurrent use.
//
// Containers are read with BeginObject/NextKey and BeginArray/NextElem;
// after a Begin call the next call must be NextKey (NextElem) of that
// container, and every value must be read or skipped before the next key
// or element is asked for.
type Decoder struct {
	data     []byte
	pos      int
	depth    int
	maxDepth int
	first    bool // just after '{' or '[': no ',' expected
	units    int  // UTF-16 length of the last string read, -1 if unknown
	scratch  []byte
}

// NewDecoder returns a decoder reading data, with DefaultMaxDepth.
func NewDecoder(data []byte) *Decoder {
	return &Decoder{data: data, maxDepth: DefaultMaxDepth}
}

// Reset makes d read data from the start, keeping its nesting limit and
// its scratch buffer.
func (d *Decoder) Reset(data []byte) {
	d.data, d.pos, d.depth, d.first = data, 0, 0, false
	if d.maxDepth <= 0 {
		d.maxDepth = DefaultMaxDepth
	}
}

// SetMaxDepth sets the nesting limit (n <= 0 means DefaultMaxDepth).
func (d *Decoder) SetMaxDepth(n int) {
	if n <= 0 {
		n = DefaultMaxDepth
	}
	d.maxDepth = n
}

// MaxDepth returns the nesting limit in effect.
func (d *Decoder) MaxDepth() int {
	if d.maxDepth <= 0 {
		return DefaultMaxDepth
	}
	return d.maxDepth
}

// Pos returns the byte offset of the next unread byte.
func (d *Decoder) Pos() int { return d.pos }

// Depth returns the number of containers currently open.
func (d *Decoder) Depth() int { return d.depth }

// Data returns the input.
func (d *Decoder) Data() []byte { return d.data }

// Advance moves n bytes on, past input the caller has checked itself in
// Data()[Pos():], for fast paths over common shapes: a key with its ':'
// (as NextKey reads it), a ',' before an element (as NextElem reads it),
// or a complete value. A value may hold containers (they are balanced);
// the caller then answers for the nesting limit.
func (d *Decoder) Advance(n int) {
	d.pos += n
	d.first = false
}

// TryBeginObject reads a '{' if it is the very next byte and the nesting
// limit allows, and reports whether it did: a cheap, inlinable
// BeginObject for fast paths (BeginObject reports the errors).
func (d *Decoder) TryBeginObject() bool {
	if d.pos < len(d.data) && d.data[d.pos] == '{' && d.depth < d.maxDepth {
		d.pos++
		d.depth++
		d.first = true
		return true
	}
	return false
}

// TryEndObject reads a '}' if it is the very next byte and reports
// whether it did: a cheap, inlinable NextKey for the end of an object.
func (d *Decoder) TryEndObject() bool {
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		d.depth--
		d.first = false
		return true
	}
	return false
}

// Checkpoint is a saved decoder position, to read a value again.
type Checkpoint struct {
	pos, depth int
	first      bool
}

// Checkpoint returns the current position.
func (d *Decoder) Checkpoint() Checkpoint { return Checkpoint{d.pos, d.depth, d.first} }

// Restore goes back (or forward) to a position saved by Checkpoint on the
// same input.
func (d *Decoder) Restore(c Checkpoint) { d.pos, d.depth, d.first = c.pos, c.depth, c.first }

func (d *Decoder) errorf(pos int, format string, args ...any) error {
	return &SyntaxError{Msg: fmt.Sprintf(format, args...), Offset: pos}
}

func (d *Decoder) unexpected(pos int, what string) error {
	if pos >= len(d.data) {
		return &SyntaxError{Msg: "unexpected end of JSON input", Offset: pos}
	}
	c := d.data[pos]
	if c >= 0x20 && c < 0x7f {
		return d.errorf(pos, "unexpected character %q, expected %s", rune(c), what)
	}
	return d.errorf(pos, "unexpected byte 0x%02x, expected %s", c, what)
}

func (d *Decoder) tooDeep() error {
	return &SyntaxError{Msg: fmt.Sprintf("nesting deeper than %d", d.MaxDepth()), Offset: d.pos, err: ErrTooDeep}
}

// skipSpace advances over JSON whitespace and returns the next byte, or 0
// at the end of the input.
func (d *Decoder) skipSpace() byte {
	if d.pos < len(d.data) && d.data[d.pos] > ' ' {
		return d.data[d.pos]
	}
	return d.skipSpaceSlow()
}

func (d *Decoder) skipSpaceSlow() byte {
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if c > ' ' {
			return c
		}
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return c
		}
		d.pos++
	}
	return 0
}

// Peek returns the kind of the next value without reading it.
func (d *Decoder) Peek() (Kind, error) {
	if p := uint(d.pos); p < uint(len(d.data)) {
		if k := kindOf[d.data[p]]; k != Invalid {
			return k, nil
		}
	}
	return d.peekSlow()
}

func (d *Decoder) peekSlow() (Kind, error) {
	k := kindOf[d.skipSpace()]
	if k == Invalid {
		return Invalid, d.unexpected(d.pos, "a JSON value")
	}
	return k, nil
}

// End checks that nothing but whitespace follows the value read.
func (d *Decoder) End() error {
	if d.skipSpace(); d.pos < len(d.data) {
		return d.errorf(d.pos, "unexpected data after the JSON value")
	}
	return nil
}

// BeginObject reads the '{' that opens an object.
func (d *Decoder) BeginObject() error {
	if p := uint(d.pos); p < uint(len(d.data)) && d.data[p] == '{' && d.depth < d.maxDepth {
		d.pos, d.depth, d.first = int(p)+1, d.depth+1, true
		return nil
	}
	return d.beginSlow('{')
}

// beginSlow reads the '{' or '[' given as open after whitespace, checking
// the nesting limit: the slow path of BeginObject and BeginArray.
func (d *Decoder) beginSlow(open byte) error {
	if d.skipSpace() != open {
		return d.unexpected(d.pos, "'"+string(open)+"'")
	}
	if d.depth >= d.MaxDepth() {
		return d.tooDeep()
	}
	d.pos++
	d.depth++
	d.first = true
	return nil
}

// NextKey reads the next key of the object being read and the ':' after
// it; ok is false (and the closing '}' read) when the object has no more
// keys. The key is valid until the next call on d.
func (d *Decoder) NextKey() (key []byte, ok bool, err error) {
	// Fast path for compact JSON and plain keys: ["," | first] '"' key '"' ':'.
	data, p := d.data, d.pos
	if p < len(data) && data[p] == '}' {
		d.pos++
		d.depth--
		d.first = false
		return nil, false, nil
	}
	if p < len(data) && (d.first || data[p] == ',') {
		if !d.first {
			p++
		}
		if p < len(data) && data[p] == '"' {
			q := SkipPlain(data, p+1)
			if q+1 < len(data) && data[q] == '"' && data[q+1] == ':' {
				d.pos = q + 2
				d.first = false
				return data[p+1 : q], true, nil
			}
		}
	}
	return d.nextKeySlow()
}

func (d *Decoder) nextKeySlow() (key []byte, ok bool, err error) {
	c := d.skipSpace()
	if c == '}' {
		d.pos++
		d.depth--
		d.first = false
		return nil, false, nil
	}
	if !d.first {
		if c != ',' {
			return nil, false, d.unexpected(d.pos, "',' or '}'")
		}
		d.pos++
		c = d.skipSpace()
	}
	d.first = false
	if c != '"' {
		return nil, false, d.unexpected(d.pos, "a string key")
	}
	key, err = d.readString()
	if err != nil {
		return nil, false, err
	}
	if d.skipSpace() != ':' {
		return nil, false, d.unexpected(d.pos, "':'")
	}
	d.pos++
	return key, true, nil
}

// Keys is a set of object keys that NextKeyIndex recognises without
// decoding them, for the keys a caller dispatches on.
type Keys struct {
	names []string
	pats  []string // name+`":`
	heads []uint64 // the first 8 bytes of pats, little-endian, masked
	masks []uint64 // 0 for names that need escaping (never matched fast)
}

// NewKeys returns the set of the given keys (at most 64; keys that would
// need escaping in JSON are matched through the slow path only).
func NewKeys(names ...string) *Keys {
	k := &Keys{names: names}
	for _, name := range names {
		pat := name + `":`
		var buf [8]byte
		n := copy(buf[:], pat)
		mask := uint64(1)<<(8*n) - 1
		if n == 8 {
			mask = ^uint64(0)
		}
		head := binary.LittleEndian.Uint64(buf[:]) & mask
		if !plainKey(name) {
			mask, head = 0, 1
		}
		k.pats = append(k.pats, pat)
		k.heads = append(k.heads, head)
		k.masks = append(k.masks, mask)
	}
	return k
}

// NextKeyIndex is NextKey returning the index of the key in keys, or -1
// (with the key) for another key.
func (d *Decoder) NextKeyIndex(keys *Keys) (index int, key []byte, ok bool, err error) {
	data, p := d.data, d.pos
	if p+10 <= len(data) && (d.first || data[p] == ',') {
		q := p
		if !d.first {
			q++
		}
		if data[q] == '"' {
			w := binary.LittleEndian.Uint64(data[q+1:])
			for i, head := range keys.heads {
				if w&keys.masks[i] != head {
					continue
				}
				pat := keys.pats[i]
				end := q + 1 + len(pat) // after `":`
				if len(pat) > 8 && (end > len(data) || string(data[q+9:end]) != pat[8:]) {
					continue
				}
				d.pos = end
				d.first = false
				return i, data[q+1 : end-2], true, nil
			}
		}
	}
	key, ok, err = d.NextKey()
	if !ok || err != nil {
		return -1, nil, ok, err
	}
	for i, name := range keys.names {
		if name == string(key) {
			return i, key, true, nil
		}
	}
	return -1, key, true, nil
}

// plainKey reports whether name is written in JSON as it is.
func plainKey(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// BeginArray reads the '[' that opens an array.
func (d *Decoder) BeginArray() error {
	if p := uint(d.pos); p < uint(len(d.data)) && d.data[p] == '[' && d.depth < d.maxDepth {
		d.pos, d.depth, d.first = int(p)+1, d.depth+1, true
		return nil
	}
	return d.beginSlow('[')
}

// NextElem reports whether the array being read has another element
// (reading the ',' before it), or reads the closing ']'.
func (d *Decoder) NextElem() (bool, error) {
	if p := uint(d.pos); p < uint(len(d.data)) {
		if c := d.data[p]; c == ',' && !d.first {
			d.pos++
			return true, nil
		} else if c > ' ' && c != ']' && d.first {
			d.first = false
			return true, nil
		}
	}
	return d.nextElemSlow()
}

func (d *Decoder) nextElemSlow() (bool, error) {
	c := d.skipSpace()
	if c == ']' {
		d.pos++
		d.depth--
		d.first = false
		return false, nil
	}
	if !d.first {
		if c != ',' {
			return false, d.unexpected(d.pos, "',' or ']'")
		}
		d.pos++
	}
	d.first = false
	return true, nil
}

// ReadNull reads null.
func (d *Decoder) ReadNull() error {
	d.skipSpace()
	return d.literal("null")
}

// ReadBool reads true or false.
func (d *Decoder) ReadBool() (bool, error) {
	switch d.skipSpace() {
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	}
	return false, d.unexpected(d.pos, "true or false")
}

func (d *Decoder) literal(lit string) error {
	end := d.pos + len(lit)
	if end <= len(d.data) && string(d.data[d.pos:end]) == lit {
		d.pos = end
		return nil
	}
	// Point at the first byte that differs.
	p := d.pos
	for i := 0; p < len(d.data) && i < len(lit) && d.data[p] == lit[i]; i++ {
		p++
	}
	return d.unexpected(p, "'"+lit+"'")
}

// ReadNumber reads a number, returning its value (±Inf when out of
// range, as JSON.parse gives Infinity) and its text as it appears in the
// input.
func (d *Decoder) ReadNumber() (float64, []byte, error) {
	d.skipSpace()
	start := d.pos
	end, simple, err := d.scanNumber(start)
	if err != nil {
		return 0, nil, err
	}
	d.pos = end
	raw := d.data[start:end]
	if simple {
		// At most 15 digits, no fraction or exponent: exact as an integer.
		neg := raw[0] == '-'
		digits := raw
		if neg {
			digits = raw[1:]
		}
		var n int64
		for _, c := range digits {
			n = n*10 + int64(c-'0')
		}
		f := float64(n)
		if neg {
			f = -f
		}
		return f, raw, nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, nil, d.errorf(start, "invalid number %q", raw)
	}
	return f, raw, nil
}

// scanNumber checks the JSON number grammar from p and returns where the
// number ends and whether it is a short integer.
func (d *Decoder) scanNumber(p int) (end int, simple bool, err error) {
	data := d.data
	if p < len(data) && data[p] == '-' {
		p++
	}
	digitsStart := p
	switch {
	case p < len(data) && data[p] == '0':
		p++
	case p < len(data) && data[p] >= '1' && data[p] <= '9':
		for p < len(data) && data[p] >= '0' && data[p] <= '9' {
			p++
		}
	default:
		return 0, false, d.unexpected(p, "a digit")
	}
	simple = p-digitsStart <= 15
	if p < len(data) && data[p] == '.' {
		simple = false
		p++
		if p >= len(data) || data[p] < '0' || data[p] > '9' {
			return 0, false, d.unexpected(p, "a digit after '.'")
		}
		for p < len(data) && data[p] >= '0' && data[p] <= '9' {
			p++
		}
	}
	if p < len(data) && (data[p] == 'e' || data[p] == 'E') {
		simple = false
		p++
		if p < len(data) && (data[p] == '+' || data[p] == '-') {
			p++
		}
		if p >= len(data) || data[p] < '0' || data[p] > '9' {
			return 0, false, d.unexpected(p, "a digit in the exponent")
		}
		for p < len(data) && data[p] >= '0' && data[p] <= '9' {
			p++
		}
	}
	return p, simple, nil
}

// ReadStringBytes reads a string and returns its decoded WTF-8 bytes,
// valid until the next call on d (they may point into the input or into a
// scratch buffer).
func (d *Decoder) ReadStringBytes() ([]byte, error) {
	if d.skipSpace() != '"' {
		return nil, d.unexpected(d.pos, "a string")
	}
	return d.readString()
}

// UTF16Len returns the length in UTF-16 code units (JavaScript's
// string length) of the last string read, a key or a value, or -1 when the
// decoder does not know it (strings with escapes or ill-formed UTF-8).
func (d *Decoder) UTF16Len() int { return d.units }

// ReadString reads a string and returns it as a new Go string (WTF-8).
func (d *Decoder) ReadString() (string, error) {
	b, err := d.ReadStringBytes()
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Word-at-a-time test for bytes that end the fast path of a string: '"',
// '\\', control characters and non-ASCII bytes.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

func specialBytes(x uint64) uint64 {
	// As below; the high bits of x itself flag non-ASCII bytes, which
	// makes the masks that keep those out of the other tests unneeded.
	return ((x ^ (lsb * '"') - lsb) | (x ^ (lsb * '\\') - lsb) | (x - lsb*0x20) | x) & msb
}

// SkipPlain returns the offset of the first byte from p on that is a
// '"', a '\\', a control character or not ASCII (len(data) if none): the
// end of plain ASCII string content, for callers' fast paths.
// The lowest flagged byte of a word is always a true match, as borrows
// only propagate upwards from one.
func SkipPlain(data []byte, p int) int {
	for ; p+16 <= len(data); p += 16 {
		m := specialBytes(binary.LittleEndian.Uint64(data[p:]))
		m2 := specialBytes(binary.LittleEndian.Uint64(data[p+8:]))
		if m|m2 != 0 {
			if m != 0 {
				return p + bits.TrailingZeros64(m)>>3
			}
			return p + 8 + bits.TrailingZeros64(m2)>>3
		}
	}
	for ; p+8 <= len(data); p += 8 {
		if m := specialBytes(binary.LittleEndian.Uint64(data[p:])); m != 0 {
			return p + bits.TrailingZeros64(m)>>3
		}
	}
	for ; p < len(data); p++ {
		if c := data[p]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return p
		}
	}
	return p
}

// skipNoQuote is SkipPlain letting non-ASCII bytes through.
func skipNoQuote(data []byte, p int) int {
	for ; p+8 <= len(data); p += 8 {
		if m := quoteOrControl(binary.LittleEndian.Uint64(data[p:])); m != 0 {
			return p + bits.TrailingZeros64(m)>>3
		}
	}
	for ; p < len(data); p++ {
		if c := data[p]; c < 0x20 || c == '"' || c == '\\' {
			return p
		}
	}
	return p
}

// quoteOrControl has the high bit set in some byte if x holds a '"', a
// '\\' or a control character (exact as to whether there is one).
func quoteOrControl(x uint64) uint64 {
	q := x ^ (lsb * '"')
	b := x ^ (lsb * '\\')
	return ((q-lsb)&^q | (b-lsb)&^b | (x-lsb*0x20)&^x) & msb
}

// readString reads the string whose opening quote is at d.pos.
func (d *Decoder) readString() ([]byte, error) {
	data := d.data
	start := d.pos + 1
	p := SkipPlain(data, start)
	if p < len(data) && data[p] == '"' {
		d.units = p - start
		d.pos = p + 1
		return data[start:p], nil
	}
	// Non-ASCII text without escapes is next most common.
	if q, units := scanUTF8(data, p); q < len(data) && data[q] == '"' {
		d.units = p - start + units
		d.pos = q + 1
		return data[start:q], nil
	}
	d.units = -1
	return d.readStringSlow(start, p)
}

// plainASCII tells the ASCII bytes that need no escape in a string.
var plainASCII = func() (t [128]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

// utf8Lead describes the first byte of a UTF-8 sequence: its length (0
// for bytes that cannot start one) and the range of the second byte.
type utf8Lead struct{ size, lo, hi uint8 }

var utf8Leads = func() (t [256]utf8Lead) {
	for c := 0xC2; c <= 0xF4; c++ {
		switch {
		case c <= 0xDF:
			t[c] = utf8Lead{2, 0x80, 0xBF}
		case c == 0xE0:
			t[c] = utf8Lead{3, 0xA0, 0xBF}
		case c == 0xED:
			t[c] = utf8Lead{3, 0x80, 0x9F}
		case c <= 0xEF:
			t[c] = utf8Lead{3, 0x80, 0xBF}
		case c == 0xF0:
			t[c] = utf8Lead{4, 0x90, 0xBF}
		case c == 0xF4:
			t[c] = utf8Lead{4, 0x80, 0x8F}
		default:
			t[c] = utf8Lead{4, 0x80, 0xBF}
		}
	}
	return t
}()

// scanUTF8 reads well-formed UTF-8 string content from p on and returns
// where it stops (at a '"', '\\', control character or ill-formed byte)
// and its length in UTF-16 units.
func scanUTF8(data []byte, p int) (end, units int) {
	start, extra := p, 0 // extra: bytes beyond the UTF-16 units they make
	for p < len(data) {
		c := data[p]
		if c < 0x80 {
			if !plainASCII[c] {
				break
			}
			p++
			if p < len(data) && data[p] < 0x80 { // more than a space between words
				p = SkipPlain(data, p)
			}
			continue
		}
		l := utf8Leads[c]
		n := int(l.size)
		if n == 0 || p+n > len(data) || data[p+1]-l.lo > l.hi-l.lo {
			break
		}
		if n > 2 && (data[p+2]-0x80 > 0x3F || n > 3 && data[p+3]-0x80 > 0x3F) {
			break
		}
		extra += n - 1
		if n == 4 { // a surrogate pair in UTF-16
			extra--
		}
		p += n
	}
	return p, p - start - extra
}

// validUTF8Seq returns the length of the well-formed UTF-8 sequence at
// the start of b, or 0 if it is ill-formed or truncated.
func validUTF8Seq(b []byte) int {
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError && n == 1 {
		return 0
	}
	return n
}

// readStringSlow decodes a string that has escapes or ill-formed UTF-8,
// from p on (start..p is plain text), into the scratch buffer.
func (d *Decoder) readStringSlow(start, p int) ([]byte, error) {
	data := d.data
	buf := append(d.scratch[:0], data[start:p]...)
	for {
		if p >= len(data) {
			d.scratch = buf
			return nil, d.errorf(d.pos, "unterminated string")
		}
		c := data[p]
		switch {
		case c == '"':
			d.pos = p + 1
			d.scratch = buf
			return buf, nil
		case c == '\\':
			var err error
			buf, p, err = d.escape(buf, p)
			if err != nil {
				d.scratch = buf
				return nil, err
			}
		case c < 0x20:
			d.scratch = buf
			return nil, d.errorf(p, "control character 0x%02x in string", c)
		case c < 0x80:
			q := SkipPlain(data, p+1)
			buf = append(buf, data[p:q]...)
			p = q
		default:
			if n := validUTF8Seq(data[p:]); n > 0 {
				buf = append(buf, data[p:p+n]...)
				p += n
			} else {
				buf = append(buf, "\uFFFD"...)
				p += illFormedLen(data[p:])
			}
		}
	}
}

// illFormedLen returns the length of the maximal subpart of an ill-formed
// UTF-8 sequence at the start of b (at least 1), which the WHATWG UTF-8
// decoder replaces with a single U+FFFD.
func illFormedLen(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c >= 0xE0 && c <= 0xEF:
		need = 2
		if c == 0xE0 {
			lo = 0xA0
		} else if c == 0xED {
			hi = 0x9F
		}
	case c >= 0xF0 && c <= 0xF4:
		need = 3
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			return n
		}
		lo, hi = 0x80, 0xBF
	}
	return n // truncated (a complete sequence would have been valid)
}

// escape decodes the escape sequence at data[p] == '\\'.
func (d *Decoder) escape(buf []byte, p int) ([]byte, int, error) {
	data := d.data
	if p+1 >= len(data) {
		return buf, p, d.errorf(d.pos, "unterminated string")
	}
	switch data[p+1] {
	case '"', '\\', '/':
		return append(buf, data[p+1]), p + 2, nil
	case 'b':
		return append(buf, '\b'), p + 2, nil
	case 'f':
		return append(buf, '\f'), p + 2, nil
	case 'n':
		return append(buf, '\n'), p + 2, nil
	case 'r':
		return append(buf, '\r'), p + 2, nil
	case 't':
		return append(buf, '\t'), p + 2, nil
	case 'u':
		r, ok := hex4(data, p+2)
		if !ok {
			return buf, p, d.errorf(p, "invalid \\u escape")
		}
		p += 6
		if r >= 0xD800 && r < 0xDC00 && p+6 <= len(data) && data[p] == '\\' && data[p+1] == 'u' {
			if lo, ok := hex4(data, p+2); ok && lo >= 0xDC00 && lo < 0xE000 {
				return utf8.AppendRune(buf, 0x10000+(r-0xD800)<<10+(lo-0xDC00)), p + 6, nil
			}
		}
		if r >= 0xD800 && r < 0xE000 {
			// A lone surrogate, kept as WTF-8.
			return append(buf, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F), p, nil
		}
		return utf8.AppendRune(buf, r), p, nil
	}
	return buf, p, d.errorf(p, "invalid escape '\\%c'", rune(data[p+1]))
}

func hex4(data []byte, p int) (rune, bool) {
	if p+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[p : p+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skipString checks the string at d.pos (its opening quote) and moves
// past it, without decoding.
func (d *Decoder) skipString() error {
	data := d.data
	p := d.pos + 1
	for {
		p = skipNoQuote(data, p)
		if p >= len(data) {
			return d.errorf(d.pos, "unterminated string")
		}
		c := data[p]
		switch {
		case c == '"':
			d.pos = p + 1
			return nil
		case c == '\\':
			if p+1 >= len(data) {
				return d.errorf(d.pos, "unterminated string")
			}
			switch data[p+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p += 2
			case 'u':
				if _, ok := hex4(data, p+2); !ok {
					return d.errorf(p, "invalid \\u escape")
				}
				p += 6
			default:
				return d.errorf(p, "invalid escape '\\%c'", rune(data[p+1]))
			}
		case c < 0x20:
			return d.errorf(p, "control character 0x%02x in string", c)
		default:
			p++ // any other byte, ill-formed UTF-8 included, is string content
		}
	}
}

// Skip reads and discards the next value, checking its syntax and the
// nesting limit.
func (d *Decoder) Skip() error {
	var objBits [8]uint64 // bit i: container i (opened by this call) is an object
	bits := objBits[:]
	depth := 0
outer:
	for {
		c := d.skipSpace()
		switch kindOf[c] {
		case Object, Array:
			if d.depth+depth >= d.MaxDepth() {
				return d.tooDeep()
			}
			d.pos++
			if depth/64 >= len(bits) {
				bits = append(bits, 0)
			}
			isObj := c == '{'
			if isObj {
				bits[depth/64] |= 1 << (depth % 64)
			} else {
				bits[depth/64] &^= 1 << (depth % 64)
			}
			depth++
			closing := byte(']')
			if isObj {
				closing = '}'
			}
			if d.skipSpace() != closing {
				if isObj {
					if err := d.skipKey(); err != nil {
						return err
					}
				}
				continue outer
			}
			d.pos++
			depth--
		case String:
			if err := d.skipString(); err != nil {
				return err
			}
		case Number:
			end, _, err := d.scanNumber(d.pos)
			if err != nil {
				return err
			}
			d.pos = end
		case Null:
			if err := d.literal("null"); err != nil {
				return err
			}
		case True:
			if err := d.literal("true"); err != nil {
				return err
			}
		case False:
			if err := d.literal("false"); err != nil {
				return err
			}
		default:
			return d.unexpected(d.pos, "a JSON value")
		}
		// A value is complete: close containers or go on to the next member.
		for depth > 0 {
			i := depth - 1
			isObj := bits[i/64]>>(i%64)&1 == 1
			c := d.skipSpace()
			switch {
			case c == ',':
				d.pos++
				if isObj {
					if err := d.skipKey(); err != nil {
						return err
					}
				}
				continue outer
			case isObj && c == '}', !isObj && c == ']':
				d.pos++
				depth--
			case isObj:
				return d.unexpected(d.pos, "',' or '}'")
			default:
				return d.unexpected(d.pos, "',' or ']'")
			}
		}
		return nil
	}
}

func (d *Decoder) skipKey() error {
	if d.skipSpace() != '"' {
		return d.unexpected(d.pos, "a string key")
	}
	if err := d.skipString(); err != nil {
		return err
	}
	if d.skipSpace() != ':' {
		return d.unexpected(d.pos, "':'")
	}
	d.pos++
	return nil
}

// Valid checks that data is one JSON value (with surrounding whitespace)
// nested no deeper than maxDepth (<= 0: DefaultMaxDepth). It returns nil
// or the first *SyntaxError, as JSON.parse would find it.
func Valid(data []byte, maxDepth int) error {
	d := Decoder{data: data}
	d.SetMaxDepth(maxDepth)
	if err := d.Skip(); err != nil {
		return err
	}
	return d.End()
}
