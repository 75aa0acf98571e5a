package model

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/internal/tracedoc"
)

var (
	oddOnce   sync.Once
	oddSchema *Schema
	oddErr    error
)

// testOddSchema returns testdata/json_odd_schema.json: node and mark types
// named "undefined", "null", "1,2", "0", attributes named "0" and "length".
func testOddSchema(t testing.TB) *Schema {
	t.Helper()
	oddOnce.Do(func() {
		data, err := os.ReadFile("testdata/json_odd_schema.json")
		if err != nil {
			oddErr = err
			return
		}
		oddSchema, oddErr = LoadSchema(data)
	})
	if oddErr != nil {
		t.Fatalf("loading odd schema: %v", oddErr)
	}
	return oddSchema
}

// jsonCase is one entry of testdata/json_cases.json.
type jsonCase struct {
	Schema, Kind, In, Out, Err string
}

// readJSONCases reads testdata/json_cases.json, keeping lone surrogates
// (in inputs and messages) as WTF-8, which encoding/json would not.
func readJSONCases(t testing.TB) []jsonCase {
	data, err := os.ReadFile("testdata/json_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := ValueFromDecoder(jsonscan.NewDecoder(data))
	if err != nil {
		t.Fatal(err)
	}
	var cases []jsonCase
	for _, c := range v.([]any) {
		obj := c.(JSONObject)
		get := func(key string) string {
			s, _ := obj.Get(key)
			str, _ := s.(string)
			return str
		}
		cases = append(cases, jsonCase{Schema: get("schema"), Kind: get("kind"), In: get("in"), Out: get("out"), Err: get("err")})
	}
	return cases
}

// decodeCase runs the Go decoder of kind on in and returns what the JS
// case records: the re-encoded JSON or the error.
func decodeCase(s *Schema, kind string, in []byte) (string, error) {
	switch kind {
	case "node":
		n, err := s.NodeFromJSON(in)
		if err != nil {
			return "", err
		}
		return string(n.AppendJSON(nil)), nil
	case "slice":
		sl, err := s.SliceFromJSON(in)
		if err != nil {
			return "", err
		}
		return string(sl.AppendJSON(nil)), nil
	default:
		m, err := s.MarkFromJSON(in)
		if err != nil {
			return "", err
		}
		return string(m.AppendJSON(nil)), nil
	}
}

// TestFromJSONCases checks the decoders against the answers of
// prosemirror-model recorded in testdata/json_cases.json.
func TestFromJSONCases(t *testing.T) {
	cases := readJSONCases(t)
	schemas := map[string]*Schema{"basic": testBasicSchema(t), "odd": testOddSchema(t)}
	for _, c := range cases {
		s := schemas[c.Schema]
		got, err := decodeCase(s, c.Kind, []byte(c.In))
		switch {
		case c.Err != "" && err == nil:
			t.Errorf("%s %s: got %s, want error %q", c.Kind, c.In, got, c.Err)
		case c.Err != "" && !strings.HasPrefix(err.Error(), c.Err):
			t.Errorf("%s %s: got error %q, want %q", c.Kind, c.In, err, c.Err)
		case c.Err == "" && err != nil:
			t.Errorf("%s %s: got error %q, want %s", c.Kind, c.In, err, c.Out)
		case c.Err == "" && got != c.Out:
			t.Errorf("%s %s:\n got %s\nwant %s", c.Kind, c.In, got, c.Out)
		}
		if c.Kind == "node" {
			checkAgreesWithValue(t, s, []byte(c.In))
		}
	}
}

// checkAgreesWithValue checks that NodeFromJSON and NodeFromValue (over the
// tree ValueFromDecoder builds, and over ParseJSONValue's when the input
// has no lone surrogates, which encoding/json replaces) give the same
// result.
func checkAgreesWithValue(t *testing.T, s *Schema, in []byte) {
	t.Helper()
	fast, ferr := s.NodeFromJSON(in)
	var se *jsonscan.SyntaxError
	if errors.As(ferr, &se) {
		return
	}
	trees := []any{}
	d := jsonscan.NewDecoder(in)
	if v, err := ValueFromDecoder(d); err == nil && d.End() == nil {
		trees = append(trees, v)
	} else {
		t.Fatalf("%s: ValueFromDecoder failed (%v) where NodeFromJSON did not find a syntax error (%v)", in, err, ferr)
	}
	// encoding/json replaces lone surrogates and every bad byte by U+FFFD,
	// where JavaScript keeps lone surrogates and a TextDecoder replaces
	// maximal ill-formed subsequences.
	if utf8.Valid(in) && !bytes.Contains(in, []byte(`\ud`)) && !bytes.Contains(in, []byte(`\uD`)) {
		if v, err := ParseJSONValue(in); err == nil {
			trees = append(trees, v)
		}
	}
	for _, v := range trees {
		slow, serr := s.NodeFromValue(v)
		if (ferr == nil) != (serr == nil) || ferr != nil && ferr.Error() != serr.Error() {
			t.Errorf("%s: NodeFromJSON error %v, NodeFromValue error %v", in, ferr, serr)
			continue
		}
		if ferr == nil {
			a, b := string(fast.AppendJSON(nil)), string(slow.AppendJSON(nil))
			if a != b {
				t.Errorf("%s: NodeFromJSON gives %s, NodeFromValue %s", in, a, b)
			}
			if !fast.Eq(slow) {
				t.Errorf("%s: results not Eq", in)
			}
		}
	}
}

func TestFromJSONErrorPaths(t *testing.T) {
	s := testBasicSchema(t)
	cases := []struct{ in, want string }{
		{`{"type":"doc","content":[{"type":"paragraph"},{"type":"paragraph","content":[{"type":"text","text":"x","marks":[{"type":"em"},{"type":"bogus"}]}]}]}`,
			"There is no mark type bogus in this schema (at content[1].content[0].marks[1].type)"},
		{`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":""}]}]}`,
			"Empty text nodes are not allowed (at content[0].content[0].text)"},
		{`{"type":"doc","content":[{"type":"image","attrs":{"src":1}}]}`,
			"Expected value of type string for attribute src on type image, got number (at content[0].attrs)"},
		{`{"type":"doc","content":[5]}`, "Unknown node type: undefined (at content[0])"},
		{`{"type":"doc","content":[null]}`, "Invalid input for Node.fromJSON (at content[0])"},
		{`{"type":"doc","content":{}}`, "Invalid input for Fragment.fromJSON (at content)"},
		{`{"type":"doc","marks":{}}`, "Invalid mark data for Node.fromJSON (at marks)"},
		{`{"type":"doc","marks":[0]}`, "Invalid input for Mark.fromJSON (at marks[0])"},
		{`{"type":"x"}`, "Unknown node type: x (at type)"},
		{`null`, "Invalid input for Node.fromJSON"},
	}
	for _, c := range cases {
		_, err := s.NodeFromJSON([]byte(c.in))
		var je *JSONError
		if !errors.As(err, &je) || err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.in, err, c.want)
		}
	}
	sliceCases := []struct{ in, want string }{
		{`{"content":[{"type":"paragraph"}],"openStart":1.5}`, "Invalid input for Slice.fromJSON: openStart must be a non-negative integer, not 1.5 (at openStart)"},
		{`{"content":[{"type":"paragraph"}],"openEnd":-1}`, "Invalid input for Slice.fromJSON: openEnd must be a non-negative integer, not -1 (at openEnd)"},
		{`{"content":[{"type":"paragraph"}],"openEnd":1e300}`, "Invalid input for Slice.fromJSON: openEnd must be a non-negative integer, not 1e+300 (at openEnd)"},
		{`{"content":[{"type":"bad"}],"openStart":1.5}`, "Invalid input for Slice.fromJSON: openStart must be a non-negative integer, not 1.5 (at openStart)"},
		{`{"content":[{"type":"paragraph"}],"openStart":1.5,"openEnd":"x"}`, "Invalid input for Slice.fromJSON (at openEnd)"},
		{`{"content":[{"type":"paragraph"},{"type":"bad"}]}`, "Unknown node type: bad (at content[1].type)"},
	}
	for _, c := range sliceCases {
		_, err := s.SliceFromJSON([]byte(c.in))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.in, err, c.want)
		}
	}
}

// TestSyntaxErrorsFirst checks that malformed JSON is reported as such
// even where a semantic error comes before the syntax error, as JSON.parse
// runs before fromJSON.
func TestSyntaxErrorsFirst(t *testing.T) {
	s := testBasicSchema(t)
	for _, in := range []string{
		`{"type":"bogus"} x`,
		`{"type":"bogus",}`,
		`{"type":"doc","content":[{"type":"bogus"},{"type":"paragraph",]}`,
		`{"type":"doc","content":[null, {"a":[1,]}]}`,
		`{"type":"doc","marks":[0,{"type":}]}`,
		`{"type":"doc","marks":"x","content":[{"type":"paragraph"}}`,
		`{"type":"text","text":"","x":tru}`,
		`{"type":"doc","content":[` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `]}`,
		``, `   `, `{`, `{"type":"doc"`, `[1,2`,
		"{\"type\":\"text\",\"text\":\"a\x01b\"}",
	} {
		_, err := s.NodeFromJSON([]byte(in))
		var se *jsonscan.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%s: got %v, want a syntax error", in, err)
		}
	}
	_, err := s.SliceFromJSON([]byte(`{"content":[{"type":"bad"}]}]`))
	var se *jsonscan.SyntaxError
	if !errors.As(err, &se) {
		t.Errorf("slice: got %v, want a syntax error", err)
	}
}

func TestDepthLimit(t *testing.T) {
	s := testBasicSchema(t)
	nest := func(n int) []byte {
		return []byte(`{"type":"doc","content":[` + strings.Repeat(`{"type":"blockquote","content":[`, n) +
			`{"type":"paragraph"}` + strings.Repeat(`]}`, n) + `]}`)
	}
	if _, err := s.NodeFromJSON(nest(250)); err != nil {
		t.Errorf("250 levels: %v", err)
	}
	_, err := s.NodeFromJSON(nest(300))
	if !errors.Is(err, jsonscan.ErrTooDeep) {
		t.Errorf("300 levels: got %v", err)
	}
	d := jsonscan.NewDecoder(nest(300))
	d.SetMaxDepth(1000)
	n, err := s.NodeFromDecoder(d)
	if err != nil || d.End() != nil {
		t.Fatalf("300 levels with a limit of 1000: %v", err)
	}
	if got := string(n.AppendJSON(nil)); got != string(nest(300)) {
		t.Errorf("300 levels do not round-trip")
	}
}

// TestDecoderContinues checks that after a semantic error the decoder is
// past the value, so that callers reading a larger object can go on.
func TestDecoderContinues(t *testing.T) {
	s := testBasicSchema(t)
	in := []byte(`[{"type":"doc","content":[{"type":"bogus","content":[1,2,{"x":[]}]},{"type":"paragraph"}]}, {"type":"em"}, 7]`)
	d := jsonscan.NewDecoder(in)
	if err := d.BeginArray(); err != nil {
		t.Fatal(err)
	}
	d.NextElem()
	_, err := s.NodeFromDecoder(d)
	var je *JSONError
	if !errors.As(err, &je) || je.Path != "content[0].content[0]" {
		t.Fatalf("got %v", err)
	}
	d.NextElem()
	m, err := s.MarkFromDecoder(d)
	if err != nil || m.Type.Name != "em" {
		t.Fatalf("mark: %v %v", m, err)
	}
	d.NextElem()
	if f, _, err := d.ReadNumber(); err != nil || f != 7 {
		t.Fatalf("number: %v %v", f, err)
	}
	if ok, err := d.NextElem(); ok || err != nil || d.End() != nil {
		t.Fatalf("end: %v %v", ok, err)
	}
}

func TestValueFromDecoder(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"b":1,"2":2,"a":[true,null,"x"],"1":{"z":1,"y":2},"b":3}`, `{"1":{"z":1,"y":2},"2":2,"b":3,"a":[true,null,"x"]}`},
		{`{"10":1,"9":2,"x":3,"4294967295":4,"4294967294":5,"01":6}`, `{"9":2,"10":1,"4294967294":5,"x":3,"4294967295":4,"01":6}`},
		{`[1e400,-1e400,1.5e-7,-0,"\ud83d"]`, `[null,null,1.5e-7,0,"\ud83d"]`},
		{`{}`, `{}`}, {`[]`, `[]`},
	}
	for _, c := range cases {
		d := jsonscan.NewDecoder([]byte(c.in))
		v, err := ValueFromDecoder(d)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got := string(appendJSONValue(nil, v)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
	// Many keys, with duplicates: linear, last value wins, first place kept.
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 20000; i++ {
		b.WriteString(`"k` + string(rune('a'+i%26)) + strings.Repeat("x", i%50) + `":` + "1,")
	}
	b.WriteString(`"ka":2}`)
	v, err := ValueFromDecoder(jsonscan.NewDecoder([]byte(b.String())))
	if err != nil {
		t.Fatal(err)
	}
	obj := v.(JSONObject)
	if obj[0].Key != "ka" || obj[0].Value != 2.0 || len(obj) != 26*50/gcd(26, 50) {
		t.Errorf("got first %v, %d keys", obj[0], len(obj))
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// traceDocs returns the end documents of the shared editing traces.
func traceDocs(t testing.TB) map[string][]byte {
	t.Helper()
	dir := tracedoc.Dir("..")
	files, _ := filepath.Glob(filepath.Join(dir, "*.end.json.gz"))
	if len(files) == 0 {
		t.Fatalf("no trace documents (*.end.json.gz) in %s", dir)
	}
	docs := map[string][]byte{}
	for _, f := range files {
		data, err := tracedoc.ReadGz(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(f)] = data
	}
	return docs
}

// TestTraceRoundTrip decodes documents that prosemirror wrote and checks
// that encoding gives back the same bytes.
func TestTraceRoundTrip(t *testing.T) {
	s := testBasicSchema(t)
	for name, data := range traceDocs(t) {
		n, err := s.NodeFromJSON(data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := n.Check(); err != nil {
			t.Errorf("%s: Check: %v", name, err)
		}
		out := n.AppendJSON(nil)
		if !bytes.Equal(out, bytes.TrimSpace(data)) {
			t.Errorf("%s: round trip differs", name)
		}
		m, _ := n.MarshalJSON()
		if !bytes.Equal(m, out) {
			t.Errorf("%s: MarshalJSON differs from AppendJSON", name)
		}
		v, err := ParseJSONValue(data)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := s.NodeFromValue(v)
		if err != nil || !slow.Eq(n) {
			t.Errorf("%s: NodeFromValue: %v", name, err)
		}
	}
}

func TestEncode(t *testing.T) {
	s := testBasicSchema(t)
	n, err := s.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[` +
		`{"type":"text","text":"a<b>&\u2028\u0001\"\\\ud83d"},{"type":"image","attrs":{"src":"s","title":"\u00e9"}},` +
		`{"type":"text","marks":[{"type":"link","attrs":{"href":"h"}},{"type":"em"}],"text":"x"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"doc","content":[{"type":"paragraph","content":[` +
		`{"type":"text","text":"a<b>&` + "\u2028" + `\u0001\"\\\ud83d"},{"type":"image","attrs":{"src":"s","alt":null,"title":"é"}},` +
		`{"type":"text","marks":[{"type":"link","attrs":{"href":"h","title":null}},{"type":"em"}],"text":"x"}]}]}`
	if got := string(n.AppendJSON(nil)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := string(n.Content.AppendJSON(nil)); got != want[len(`{"type":"doc","content":`):len(want)-1] {
		t.Errorf("fragment: %s", got)
	}
	if got := string(Fragment{}.AppendJSON(nil)); got != "null" {
		t.Errorf("empty fragment: %s", got)
	}
	if got := string(EmptySlice.AppendJSON(nil)); got != "null" {
		t.Errorf("empty slice: %s", got)
	}
	sl := NewSlice(n.Content, 2, 0)
	if got := string(sl.AppendJSON(nil)); !strings.HasPrefix(got, `{"content":[{"type":"paragraph"`) || !strings.HasSuffix(got, `"text":"x"}]}],"openStart":2}`) {
		t.Errorf("slice: %s", got)
	}
	// A plain node of the text type (JS node.copy() of a text node, which
	// replace can make) has no text key.
	em, _ := s.MarkFromJSON([]byte(`{"type":"em"}`))
	plain := newNode(s.textNodeType(), nil, Fragment{}, []*Mark{em})
	if got := string(plain.AppendJSON(nil)); got != `{"type":"text","marks":[{"type":"em"}]}` {
		t.Errorf("plain text-typed node: %s", got)
	}
	// An empty paragraph has content.size 0: no content key.
	p, _ := s.NodeFromJSON([]byte(`{"type":"paragraph","content":[]}`))
	if got := string(p.AppendJSON(nil)); got != `{"type":"paragraph"}` {
		t.Errorf("empty paragraph: %s", got)
	}
}

func FuzzNodeFromJSON(f *testing.F) {
	for _, c := range readJSONCases(f) {
		f.Add([]byte(c.In))
	}
	f.Add([]byte(`{"type":"doc","content":[{"type":"bullet_list","content":[{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"link","attrs":{"href":"x","title":null}},{"type":"strong"}],"text":"a"},{"type":"hard_break"}]}]}]},{"type":"heading","attrs":{"level":3}}]}`))
	f.Add([]byte(`{"type":"img","attrs":{"src":"x","0":[1],"length":2}}`))
	f.Add([]byte(`{"type":"opt","attrs":"\ud83d\ude00"}`))
	basic, odd := testBasicSchema(f), testOddSchema(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		checkFuzzInput(t, basic, in)
		checkFuzzInput(t, odd, in)
	})
}

// checkFuzzInput checks NodeFromJSON on in: no panic, errors of the right
// kind, output that reads back the same, agreement with NodeFromValue.
func checkFuzzInput(t *testing.T, s *Schema, in []byte) {
	n, err := s.NodeFromJSON(in)
	var je *JSONError
	var se *jsonscan.SyntaxError
	switch {
	case err == nil:
		// Reading the output again may fail, as in JS (a number out of
		// range is written as null), but must not change it.
		out := n.AppendJSON(nil)
		if got := n.JSONSize(); got != len(out) {
			t.Fatalf("JSONSize of %s = %d, want %d", out, got, len(out))
		}
		if n2, err := s.NodeFromJSON(out); err == nil && !bytes.Equal(n2.AppendJSON(nil), out) {
			t.Fatalf("round trip of %s changes it", out)
		}
	case errors.As(err, &je):
		// JSON.parse would have accepted the input.
		if verr := jsonscan.Valid(in, 0); verr != nil {
			t.Fatalf("semantic error %v for malformed input (%v)", err, verr)
		}
	case errors.As(err, &se):
		if jsonscan.Valid(in, 0) == nil {
			t.Fatalf("syntax error %v for valid input", err)
		}
	default:
		t.Fatalf("error of type %T: %v", err, err)
	}
	checkAgreesWithValue(t, s, in)
}

// reshape rewrites a JSON value tree as text in another form that
// JSON.parse reads the same: whitespace, reversed key order, escaped
// keys and strings. The decoder's fast paths only take the canonical
// form, so this exercises the general paths against them.
func reshape(buf *bytes.Buffer, v any, mode int) {
	switch x := v.(type) {
	case []any:
		buf.WriteString("[ ")
		for i, e := range x {
			if i > 0 {
				buf.WriteString(" ,\n")
			}
			reshape(buf, e, mode)
		}
		buf.WriteString(" ]")
	case JSONObject:
		buf.WriteString("{\t")
		for i := range x {
			p := x[i]
			if mode&1 != 0 {
				p = x[len(x)-1-i]
			}
			if i > 0 {
				buf.WriteString(" , ")
			}
			reshapeString(buf, p.Key, mode)
			buf.WriteString(" : ")
			reshape(buf, p.Value, mode)
		}
		buf.WriteString("\r}")
	case string:
		reshapeString(buf, x, mode)
	default:
		buf.Write(appendJSONValue(nil, v))
	}
}

func reshapeString(buf *bytes.Buffer, s string, mode int) {
	if mode&2 == 0 {
		buf.Write(appendJSONString(nil, s))
		return
	}
	buf.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x80:
			buf.WriteString(`\u00`)
			buf.WriteByte(hexDigits[c>>4])
			buf.WriteByte(hexDigits[c&15])
		case c == 0xED && i+2 < len(s) && s[i+1] >= 0xA0: // a lone surrogate
			buf.Write(appendJSONString(nil, s[i:i+3])[1:7])
			i += 2
		default:
			buf.WriteByte(c)
		}
	}
	buf.WriteByte('"')
}

// TestFastPathsAgree decodes documents in their canonical form and in
// reshaped forms, and checks that all give the same node.
func TestFastPathsAgree(t *testing.T) {
	s := testBasicSchema(t)
	docs := [][]byte{}
	for _, data := range traceDocs(t) {
		docs = append(docs, data[:min(len(data), 200000)])
	}
	docs = append(docs, []byte(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"link","attrs":{"href":"a","title":null}},{"type":"em"}],"text":"x"},{"type":"text","marks":[{"type":"em"}],"text":"y\u00e9\"z"},{"type":"image","attrs":{"src":"s","alt":"a","title":null}},{"type":"text","marks":[{"type":"em"}],"text":"\ud83d"},{"type":"text","marks":[{"type":"em"}],"text":"\ude00"}]},{"type":"heading","attrs":{"level":2}}]}`))
	for _, data := range docs {
		want, err := s.NodeFromJSON(data)
		if err != nil {
			// A trace document cut short: compare errors only.
			continue
		}
		wantJSON := string(want.AppendJSON(nil))
		v, err := ValueFromDecoder(jsonscan.NewDecoder(data))
		if err != nil {
			t.Fatal(err)
		}
		for mode := 0; mode < 4; mode++ {
			var buf bytes.Buffer
			reshape(&buf, v, mode)
			got, err := s.NodeFromJSON(buf.Bytes())
			if err != nil {
				t.Errorf("mode %d: %v", mode, err)
				continue
			}
			if g := string(got.AppendJSON(nil)); g != wantJSON {
				i := 0
				for i < len(g) && i < len(wantJSON) && g[i] == wantJSON[i] {
					i++
				}
				t.Errorf("mode %d: decoding differs at %d: %q vs %q", mode, i, g[max(0, i-40):min(len(g), i+40)], wantJSON[max(0, i-40):min(len(wantJSON), i+40)])
			}
		}
	}
}

// TestMarkSetCacheDepth checks that a mark array read once is not reused
// deeper than the nesting limit allows.
func TestMarkSetCacheDepth(t *testing.T) {
	s := testBasicSchema(t)
	text := `{"type":"text","marks":[{"type":"em"},{"type":"strong"}],"text":"x"}`
	// doc > blockquote > paragraph > text: the marks array's objects sit at
	// depth 9 (doc{ content[ bq{ content[ p{ content[ text{ marks[ mark{).
	shallow := `{"type":"paragraph","content":[` + text + `]}`
	deep := `{"type":"blockquote","content":[{"type":"paragraph","content":[` + text + `]}]}`
	data := []byte(`{"type":"doc","content":[` + shallow + `,` + deep + `]}`)
	d := jsonscan.NewDecoder(data)
	d.SetMaxDepth(8)
	if _, err := s.NodeFromDecoder(d); !errors.Is(err, jsonscan.ErrTooDeep) {
		t.Errorf("limit 8: got %v", err)
	}
	d = jsonscan.NewDecoder(data)
	d.SetMaxDepth(9)
	if _, err := s.NodeFromDecoder(d); err != nil {
		t.Errorf("limit 9: got %v", err)
	}
	d = jsonscan.NewDecoder([]byte(`{"type":"doc","content":[` + shallow + `]}`))
	d.SetMaxDepth(7)
	if _, err := s.NodeFromDecoder(d); err != nil {
		t.Errorf("shallow, limit 7: got %v", err)
	}
}

func TestJSONErrorUnder(t *testing.T) {
	e := &JSONError{Msg: "m", Path: "content[0].type"}
	if got := e.Under("slice").Error(); got != "m (at slice.content[0].type)" {
		t.Errorf("got %s", got)
	}
	if got := (&JSONError{Msg: "m", Path: "[3]"}).Under("steps").Error(); got != "m (at steps[3])" {
		t.Errorf("got %s", got)
	}
	if got := (&JSONError{Msg: "m"}).Under("slice").Error(); got != "m (at slice)" {
		t.Errorf("got %s", got)
	}
	if e.Path != "content[0].type" {
		t.Errorf("Under modified its receiver")
	}
}

func TestAppendJSONStringCases(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `""`},
		{"plain text longer than sixteen bytes", `"plain text longer than sixteen bytes"`},
		{"é日本語😀 and more non-ASCII text, with a \" quote", `"é日本語😀 and more non-ASCII text, with a \" quote"`},
		{"\xed\x9f\xbf", "\"\xed\x9f\xbf\""},             // U+D7FF, an ordinary character starting with ED
		{"a\xed\xa0\xbd", `"a\ud83d"`},                   // lone high surrogate
		{"\xed\xb8\x80b\xed\xa0\xbd", `"\ude00b\ud83d"`}, // lone low, then high
		{"x\x00\x1f\x7f\\\n", `"x\u0000\u001f` + "\x7f" + `\\\n"`},
		{"\xff\xfe", "\"\xff\xfe\""}, // bytes that are not UTF-8 are copied
	}
	for _, c := range cases {
		for _, prefix := range []string{"", "0123456789abcdef"} {
			got := string(appendJSONString([]byte(prefix), c.in))
			if got != prefix+c.want {
				t.Errorf("appendJSONString(%q) = %q, want %q", c.in, got, c.want)
			}
		}
	}
}
