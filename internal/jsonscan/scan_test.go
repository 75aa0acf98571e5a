package jsonscan

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// readValue reads any value into Go values (nil, bool, float64, string,
// []any, map[string]any), for comparison with encoding/json.
func readValue(d *Decoder) (any, error) {
	k, err := d.Peek()
	if err != nil {
		return nil, err
	}
	switch k {
	case Null:
		return nil, d.ReadNull()
	case True, False:
		return d.ReadBool()
	case Number:
		f, _, err := d.ReadNumber()
		return f, err
	case String:
		s, err := d.ReadString()
		if err == nil {
			if n := d.UTF16Len(); n != -1 && n != utf16Len(s) {
				return nil, fmt.Errorf("UTF16Len %d for %q, want %d", n, s, utf16Len(s))
			}
		}
		return s, err
	case Array:
		if err := d.BeginArray(); err != nil {
			return nil, err
		}
		arr := []any{}
		for {
			ok, err := d.NextElem()
			if err != nil {
				return nil, err
			}
			if !ok {
				return arr, nil
			}
			v, err := readValue(d)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
	default:
		if err := d.BeginObject(); err != nil {
			return nil, err
		}
		obj := map[string]any{}
		for {
			key, ok, err := d.NextKey()
			if err != nil {
				return nil, err
			}
			if !ok {
				return obj, nil
			}
			k := string(key)
			v, err := readValue(d)
			if err != nil {
				return nil, err
			}
			obj[k] = v
		}
	}
}

// utf16Len counts the UTF-16 units of a WTF-8 string.
func utf16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 && len(s) >= i+3 && s[i] == 0xED {
			size = 3 // a lone surrogate
		}
		n++
		if r > 0xFFFF {
			n++
		}
		i += size
	}
	return n
}

func decodeAll(data []byte, maxDepth int) (any, error) {
	d := NewDecoder(data)
	d.SetMaxDepth(maxDepth)
	v, err := readValue(d)
	if err == nil {
		err = d.End()
	}
	return v, err
}

func TestStrings(t *testing.T) {
	cases := []struct {
		in   string // JSON text
		want string // decoded bytes
	}{
		{`"plain"`, "plain"},
		{`""`, ""},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t"},
		{`"\u0041\u00e9\u65E5"`, "Aé日"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\ud83d"`, "\xed\xa0\xbd"},
		{`"\ude00"`, "\xed\xb8\x80"},
		{`"\ude00\ud83d"`, "\xed\xb8\x80\xed\xa0\xbd"},
		{`"\ud83d\ud83d\ude00"`, "\xed\xa0\xbd😀"},
		{`"\ud83dx"`, "\xed\xa0\xbdx"},
		{`"\ud83d\n"`, "\xed\xa0\xbd\n"},
		{`"raw 😀 é <>&` + "\u2028" + `"`, "raw 😀 é <>&\u2028"},
		{`"a long string without any escapes at all, longer than a word"`, "a long string without any escapes at all, longer than a word"},
		{`"with an escape after many bytes of text: \" done"`, `with an escape after many bytes of text: " done`},
	}
	for _, c := range cases {
		d := NewDecoder([]byte(c.in))
		got, err := d.ReadStringBytes()
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("%s: got %q, want %q", c.in, got, c.want)
		}
		if err := d.End(); err != nil {
			t.Errorf("%s: End: %v", c.in, err)
		}
	}
}

// The expected outputs were produced by new TextDecoder().decode() in node.
func TestIllFormedUTF8(t *testing.T) {
	cases := [][2]string{
		{"e28241", "efbfbd41"},
		{"eda080", "efbfbdefbfbdefbfbd"},
		{"eda0bd", "efbfbdefbfbdefbfbd"},
		{"f09f98", "efbfbd"},
		{"f09f9880", "f09f9880"},
		{"c0af", "efbfbdefbfbd"},
		{"e080af", "efbfbdefbfbdefbfbd"},
		{"f4908080", "efbfbdefbfbdefbfbdefbfbd"},
		{"ff", "efbfbd"},
		{"80", "efbfbd"},
		{"c2", "efbfbd"},
		{"e2", "efbfbd"},
		{"f0", "efbfbd"},
		{"e282", "efbfbd"},
		{"c3a9", "c3a9"},
		{"f8888080", "efbfbdefbfbdefbfbdefbfbd"},
		{"edbfbf", "efbfbdefbfbdefbfbd"},
		{"efbfbd", "efbfbd"},
		{"f09f41", "efbfbd41"},
		{"e09f80", "efbfbdefbfbdefbfbd"},
		{"f08f8080", "efbfbdefbfbdefbfbdefbfbd"},
		{"c2c3a9", "efbfbdc3a9"},
	}
	for _, c := range cases {
		in, _ := hex.DecodeString(c[0])
		want, _ := hex.DecodeString(c[1])
		for _, wrap := range [][2]string{{"", ""}, {"abc", "def"}, {"0123456789", `\n`}} {
			data := []byte(`"` + wrap[0] + string(in) + wrap[1] + `"`)
			wantS := wrap[0] + string(want) + strings.ReplaceAll(wrap[1], `\n`, "\n")
			d := NewDecoder(data)
			got, err := d.ReadString()
			if err != nil {
				t.Errorf("%s: %v", c[0], err)
				continue
			}
			if got != wantS {
				t.Errorf("%q: got %x, want %x", data, got, wantS)
			}
		}
	}
}

func TestNumbers(t *testing.T) {
	cases := []struct {
		in   string
		want float64
	}{
		{"0", 0}, {"-0", math.Copysign(0, -1)}, {"7", 7}, {"-12", -12}, {"123456789012345", 123456789012345},
		{"1234567890123456789", 1234567890123456789}, {"1.5", 1.5}, {"-2.25e3", -2250}, {"1E2", 100},
		{"1e400", math.Inf(1)}, {"-1e400", math.Inf(-1)}, {"1e-400", 0}, {"2.0", 2}, {"0.1", 0.1},
	}
	for _, c := range cases {
		d := NewDecoder([]byte(c.in))
		f, raw, err := d.ReadNumber()
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if f != c.want || math.Signbit(f) != math.Signbit(c.want) || string(raw) != c.in {
			t.Errorf("%s: got %v %q", c.in, f, raw)
		}
	}
	for _, bad := range []string{"-", "01", "1.", ".5", "+1", "1e", "1e+", "--1", "0x10", "1.e3", "NaN", "Infinity"} {
		if err := Valid([]byte(bad), 0); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestValid(t *testing.T) {
	good := []string{
		`null`, ` true `, "\t\r\nfalse\n", `[]`, `{}`, `[1,"a",{"b":[null]}]`, `{"a":1,"a":2}`, `"\u0000"`,
		`{"":{"":[[],{}]}}`, `[ 1 , 2 ]`, `{ "a" : 1 , "b" : [ ] }`, "\"\x7f\"",
	}
	bad := []string{
		``, ` `, `nul`, `nulll`, `tru`, `[`, `]`, `{`, `[1,]`, `[,1]`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`,
		`{a:1}`, `{"a":1 "b":2}`, `[1 2]`, `"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\nb\"", "\"\x01\"",
		`[}`, `{]`, `1 2`, `{} x`, `'a'`, "\ufeff{}", `[1,{"a":[}]`, `"\`, `{"a":1]`, `[1}`,
	}
	for _, s := range good {
		if err := Valid([]byte(s), 0); err != nil {
			t.Errorf("%q: %v", s, err)
		}
		if _, err := decodeAll([]byte(s), 0); err != nil {
			t.Errorf("%q: decode: %v", s, err)
		}
	}
	for _, s := range bad {
		err := Valid([]byte(s), 0)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: Valid gave %v", s, err)
		}
		if _, err := decodeAll([]byte(s), 0); err == nil {
			t.Errorf("%q: decode accepted", s)
		}
	}
}

func TestDepth(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(strings.Repeat(`[{"a":`, n) + "1" + strings.Repeat("}]", n))
	}
	if err := Valid(nest(256), 0); err != nil {
		t.Errorf("depth 512: %v", err)
	}
	for _, data := range [][]byte{nest(257), []byte(strings.Repeat("[", 513) + strings.Repeat("]", 513))} {
		if err := Valid(data, 0); !errors.Is(err, ErrTooDeep) {
			t.Errorf("Valid over the limit: %v", err)
		}
		if _, err := decodeAll(data, 0); !errors.Is(err, ErrTooDeep) {
			t.Errorf("decode over the limit: %v", err)
		}
	}
	if err := Valid(nest(10), 20); err != nil {
		t.Errorf("limit 20: %v", err)
	}
	if err := Valid(nest(11), 20); !errors.Is(err, ErrTooDeep) {
		t.Errorf("limit 20 exceeded: %v", err)
	}
	deep := nest(5000)
	if err := Valid(deep, 20000); err != nil {
		t.Errorf("limit 20000: %v", err)
	}
}

func TestObjectIteration(t *testing.T) {
	d := NewDecoder([]byte(` { "type" : "p" , "k\u0065y":[1, 2 ,3], "skip": {"x":[{}, "y\"", -1.5e3, true, null]}, "z": false } `))
	if err := d.BeginObject(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		key, ok, err := d.NextKey()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		switch string(key) {
		case "type":
			s, err := d.ReadString()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, "type="+s)
		case "key":
			if err := d.BeginArray(); err != nil {
				t.Fatal(err)
			}
			sum := 0.0
			for {
				ok, err := d.NextElem()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				f, _, err := d.ReadNumber()
				if err != nil {
					t.Fatal(err)
				}
				sum += f
			}
			got = append(got, fmt.Sprint("sum=", sum))
		case "z":
			b, err := d.ReadBool()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprint("z=", b))
		default:
			cp := d.Checkpoint()
			if err := d.Skip(); err != nil {
				t.Fatal(err)
			}
			end := d.Pos()
			d.Restore(cp)
			if err := d.Skip(); err != nil || d.Pos() != end {
				t.Fatalf("skip again: %v %d %d", err, d.Pos(), end)
			}
			got = append(got, "skipped "+string(key))
		}
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	if d.Depth() != 0 {
		t.Errorf("depth %d", d.Depth())
	}
	want := "type=p,sum=6,skipped skip,z=false"
	if s := strings.Join(got, ","); s != want {
		t.Errorf("got %s, want %s", s, want)
	}
}

// TestAgainstEncodingJSON compares values and validity with encoding/json
// on valid UTF-8 input without lone surrogate escapes.
func TestAgainstEncodingJSON(t *testing.T) {
	inputs := []string{
		`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Hello \"world\" \u00e9\ud83d\ude00"}]}]}`,
		`[1, -0.5, 1e10, 12345678901234567890, true, false, null, "", {}, [], {"a":{"b":{"c":[1,[2,[3]]]}}}]`,
		`{"a":1,"a":2}`,
	}
	for _, in := range inputs {
		compareWithEncodingJSON(t, []byte(in))
	}
}

func compareWithEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	got, err := decodeAll(data, 100000)
	var want any
	werr := json.Unmarshal(data, &want)
	var te *json.UnmarshalTypeError
	if errors.As(werr, &te) && strings.HasPrefix(te.Value, "number") {
		// A number out of float64's range, which JSON.parse reads as
		// ±Infinity (see TestNumbers); encoding/json refuses it.
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		return
	}
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: jsonscan error %v, encoding/json error %v", data, err, werr)
	}
	if err != nil {
		return
	}
	if !equalValues(got, want) {
		t.Fatalf("%q: got %#v, want %#v", data, got, want)
	}
}

func equalValues(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !equalValues(v, y[k]) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.IsNaN(x) && math.IsNaN(y))
	}
	return a == b
}

func hasLoneSurrogateEscape(data []byte) bool {
	// Conservative: any \u escape of a surrogate.
	for i := 0; i+5 < len(data); i++ {
		if data[i] == '\\' && (data[i+1] == 'u') && (data[i+2] == 'd' || data[i+2] == 'D') {
			return true
		}
	}
	return false
}

func FuzzScan(f *testing.F) {
	seeds := []string{
		`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"hi","marks":[{"type":"em"}]}]}]}`,
		`[1,-0.5e-3,"\ud83d\ude00\ud83d",true,false,null,{"":{}}]`, "\"\xed\xa0\x80\xff\"", `{"a":[}`, `"\u00zz"`,
		strings.Repeat("[", 600) + strings.Repeat("]", 600), `  {"k" : "v" }  `,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		verr := Valid(data, 0)
		v, err := decodeAll(data, 0)
		if (verr == nil) != (err == nil) {
			t.Fatalf("Valid: %v, decode: %v", verr, err)
		}
		var se *SyntaxError
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("error of type %T: %v", err, err)
		}
		if err != nil && errors.Is(err, ErrTooDeep) != errors.Is(verr, ErrTooDeep) {
			t.Fatalf("depth errors differ: %v / %v", verr, err)
		}
		if err == nil {
			// Every decoded string is WTF-8: valid UTF-8 once lone surrogates are allowed.
			checkWTF8(t, v)
		}
		if errors.Is(err, ErrTooDeep) {
			return
		}
		if utf8.Valid(data) && !hasLoneSurrogateEscape(data) {
			compareWithEncodingJSON(t, data)
		} else if verr == nil {
			// encoding/json agrees on validity regardless of the bytes in strings.
			if !json.Valid(data) {
				t.Fatalf("jsonscan accepts what encoding/json rejects")
			}
		} else if json.Valid(data) && !errors.Is(verr, ErrTooDeep) {
			t.Fatalf("jsonscan rejects what encoding/json accepts: %v", verr)
		}
	})
}

func checkWTF8(t *testing.T, v any) {
	switch x := v.(type) {
	case string:
		s := x
		for len(s) > 0 {
			r, n := utf8.DecodeRuneInString(s)
			if r == utf8.RuneError && n == 1 {
				if len(s) >= 3 && s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xBF && s[2] >= 0x80 && s[2] <= 0xBF {
					n = 3
				} else {
					t.Fatalf("string %q is not WTF-8", x)
				}
			}
			s = s[n:]
		}
	case []any:
		for _, e := range x {
			checkWTF8(t, e)
		}
	case map[string]any:
		for k, e := range x {
			checkWTF8(t, k)
			checkWTF8(t, e)
		}
	}
}

func TestErrorsHaveOffsets(t *testing.T) {
	err := Valid([]byte(`{"a":[1,2,}`), 0)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Offset != 10 {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(err.Error(), "offset 10") {
		t.Errorf("message %q", err)
	}
}

func BenchmarkSkip(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`{"type":"doc","content":[`)
	for i := 0; i < 2000; i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(`{"type":"paragraph","content":[{"type":"text","text":"Some text in paragraph ` + strconv.Itoa(i) + ` with a few words"},{"type":"text","marks":[{"type":"em"}],"text":"emphasis"}]}`)
	}
	buf.WriteString(`]}`)
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Valid(data, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func TestNextKeyIndex(t *testing.T) {
	keys := NewKeys("type", "content", "a\"b", "abcdefghij", "")
	in := `{"type":1,"content":2,"a\"b":3,"abcdefghij":4,"":5,"typ":6,"contents":7, "type" :8,"abcdefghiX":9,"t\u0079pe":10}`
	want := []int{0, 1, 2, 3, 4, -1, -1, 0, -1, 0}
	d := NewDecoder([]byte(in))
	if err := d.BeginObject(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		idx, key, ok, err := d.NextKeyIndex(keys)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if i != len(want) {
				t.Fatalf("%d keys, want %d", i, len(want))
			}
			break
		}
		if idx != want[i] {
			t.Errorf("key %d (%q): index %d, want %d", i, key, idx, want[i])
		}
		if idx >= 0 && string(key) != keys.names[idx] {
			t.Errorf("key %d: got %q", i, key)
		}
		f, _, err := d.ReadNumber()
		if err != nil || int(f) != i+1 {
			t.Fatalf("value %d: %v %v", i, f, err)
		}
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
}

func TestSkipPlain(t *testing.T) {
	// Every position of every special byte, in plain text of every length.
	for n := 0; n < 40; n++ {
		for at := 0; at <= n; at++ {
			for _, c := range []byte{'"', '\\', 0, 0x1f, 0x80, 0xff, 0xc3} {
				b := []byte(strings.Repeat("a", n))
				want := n
				if at < n {
					b[at] = c
					want = at
				}
				// Bytes after a special one do not matter.
				if at+1 < n {
					b[at+1] = 0x01
				}
				if got := SkipPlain(b, 0); got != want {
					t.Fatalf("SkipPlain(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
	for c := 0; c < 256; c++ {
		b := []byte("abcdefghijklmnopqrstuvwxyz")
		b[13] = byte(c)
		want := len(b)
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			want = 13
		}
		if got := SkipPlain(b, 0); got != want {
			t.Fatalf("byte %#x: %d, want %d", c, got, want)
		}
	}
}

func TestUTF16Len(t *testing.T) {
	for _, s := range []string{"", "abc", "é", "日本語", "😀", "a😀b日é ", "\\n", "x\\ud83dy", "\xff", "é\xe2\x82", "long ascii then 😀 and more text é"} {
		d := NewDecoder([]byte(`"` + s + `"`))
		b, err := d.ReadStringBytes()
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, r := range string(b) {
			want++
			if r > 0xFFFF {
				want++
			}
		}
		if got := d.UTF16Len(); got != want && got != -1 {
			t.Errorf("%q: UTF16Len %d, want %d", s, got, want)
		}
		if got := d.UTF16Len(); got == -1 && !strings.Contains(s, `\`) && strings.IndexByte(s, 0xff) < 0 && strings.IndexByte(s, 0xe2) < 0 {
			t.Errorf("%q: UTF16Len unknown", s)
		}
	}
}
