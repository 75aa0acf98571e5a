package apply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pmauthority/pmauthority/apply/reqtest"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
)

const (
	seed       = reqtest.Seed
	seedAnswer = reqtest.SeedAnswer
)

const basicDoc = `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"foobar"}]}]}`

// answer runs one request and returns the answer as the command line
// writes it.
func answer(t testing.TB, a *Applier, req string) (string, *Failure) {
	t.Helper()
	out, _, err := a.Apply(context.Background(), []byte("prefix:"), []byte(req))
	if !bytes.HasPrefix(out, []byte("prefix:")) {
		t.Fatalf("Apply did not append to buf: %q", out)
	}
	out = out[len("prefix:"):]
	if err == nil {
		return string(out), nil
	}
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("Apply returned %T %v, not a *Failure", err, err)
	}
	if len(out) != 0 {
		t.Fatalf("failed Apply appended %q", out)
	}
	return string(f.AppendJSON(nil)), f
}

func TestApply(t *testing.T) {
	dir := t.TempDir()
	specFile := filepath.Join(dir, "lines.json")
	if err := os.WriteFile(specFile, []byte(`{"nodes":{"doc":{"content":"line*"},"line":{"content":"text*"},"text":{}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	textDefault := &Applier{
		Schemas:  &Schemas{Default: "text"},
		Limits:   Limits{MaxSteps: 3, MaxDocSize: 20},
		MaxDepth: 16,
	}
	cli := &Applier{Schemas: &Schemas{Default: "basic", Files: true}, Positions: true}
	tests := []struct {
		name string
		a    *Applier
		req  string
		want string // the whole answer, or for failures a part of the message
		kind error  // nil: success
		step int
	}{
		{"seed", textDefault, seed, seedAnswer, nil, 0},
		{"seed, spaced", textDefault, " \n{ \"doc\" : {\"type\":\"doc\"} , \"steps\" : [ ] } \n", `{"doc":{"type":"doc"}}`, nil, 0},
		{"no steps", textDefault, `{"doc":{"type":"doc"}}`, `{"doc":{"type":"doc"}}`, nil, 0},
		{"null steps", textDefault, `{"doc":{"type":"doc"},"steps":null}`, `{"doc":{"type":"doc"}}`, nil, 0},
		{"unknown keys ignored", textDefault, `{"x":[{}],"doc":{"type":"doc"},"steps":[],"positions":"no"}`, `{"doc":{"type":"doc"}}`, nil, 0},
		{"schema before doc", textDefault, `{"schema":"basic","doc":` + basicDoc + `,"steps":[]}`, `{"doc":` + basicDoc + `}`, nil, 0},
		{"schema after doc", textDefault, `{"doc":` + basicDoc + `,"steps":[],"schema":"basic"}`, `{"doc":` + basicDoc + `}`, nil, 0},
		{"schema after doc, doc invalid there", textDefault, `{"doc":{"type":"paragraph"},"schema":"text"}`, "invalid doc: Unknown node type: paragraph", ErrInvalidDoc, -1},
		{"null schema", textDefault, `{"schema":null,"doc":{"type":"doc"}}`, `{"doc":{"type":"doc"}}`, nil, 0},
		{"duplicate keys: last wins", textDefault, `{"doc":5,"doc":{"type":"doc"},"schema":"nope","schema":"text","steps":{},"steps":[]}`, `{"doc":{"type":"doc"}}`, nil, 0},

		{"empty", textDefault, ``, "empty request", ErrMalformed, -1},
		{"blank", textDefault, "  \n", "unexpected end of JSON input", ErrMalformed, -1},
		{"truncated", textDefault, `{"doc":{"type":"doc"}`, "JSON syntax error", ErrMalformed, -1},
		{"trailing data", textDefault, `{"doc":{"type":"doc"}} x`, "unexpected data after", ErrMalformed, -1},
		{"syntax error after an invalid doc", textDefault, `{"doc":{"type":"nope"},"steps":[}`, "JSON syntax error", ErrMalformed, -1},
		{"syntax error in a step", textDefault, `{"doc":{"type":"doc"},"steps":[{"stepType":"replace",}]}`, "JSON syntax error", ErrMalformed, -1},
		{"too deep", textDefault, `{"doc":{"type":"doc"},"steps":[` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `]}`, "over the limit of 16 levels", ErrTooDeep, -1},
		{"too deep in doc", textDefault, `{"doc":{"type":"doc","content":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}}`, "over the limit of 16 levels", ErrTooDeep, -1},
		{"not an object", textDefault, `[1,2]`, "the request must be a JSON object, not an array", ErrInvalidRequest, -1},
		{"a string", textDefault, `"doc"`, "not a string", ErrInvalidRequest, -1},
		{"missing doc", textDefault, `{"steps":[]}`, `missing "doc"`, ErrInvalidRequest, -1},
		{"doc not an object", textDefault, `{"doc":"{}"}`, `"doc" must be an object, not a string`, ErrInvalidRequest, -1},
		{"null doc", textDefault, `{"doc":null}`, `"doc" must be an object, not null`, ErrInvalidRequest, -1},
		{"steps not an array", textDefault, `{"doc":{"type":"doc"},"steps":{}}`, `"steps" must be an array, not an object`, ErrInvalidRequest, -1},
		{"schema not a string", textDefault, `{"doc":{"type":"doc"},"schema":1}`, `"schema" must be a string, not a number`, ErrInvalidRequest, -1},
		{"unknown schema", textDefault, `{"doc":{"type":"doc"},"schema":"nope"}`, `unknown schema "nope" (have basic, suggest, text)`, ErrUnknownSchema, -1},
		{"no schema files from requests", textDefault, `{"doc":{"type":"doc"},"schema":` + jsonString(specFile) + `}`, `unknown schema`, ErrUnknownSchema, -1},
		{"schema file on the command line", cli, `{"doc":{"type":"doc","content":[{"type":"line"}]},"schema":` + jsonString(specFile) + `}`, `{"doc":{"type":"doc","content":[{"type":"line"}]}}`, nil, 0},
		{"invalid doc", textDefault, `{"doc":{"type":"doc","content":[{"type":"text","text":""}]}}`, "invalid doc: Empty text nodes are not allowed", ErrInvalidDoc, -1},
		{"unknown node type", textDefault, `{"doc":{"type":"nope"}}`, "invalid doc: Unknown node type: nope", ErrInvalidDoc, -1},

		{"too many steps", textDefault, `{"doc":{"type":"doc"},"steps":[{},{},{},{}]}`, "the request has 4, over the limit of 3 steps per request", ErrTooManySteps, -1},
		{"as many steps as allowed", textDefault, `{"doc":{"type":"doc"},"steps":[` + strings.Repeat(`{"stepType":"replace","from":0,"to":0},`, 2) + `{"stepType":"replace","from":0,"to":0}]}`, `{"doc":{"type":"doc"}}`, nil, 0},
		{"doc too large", textDefault, `{"doc":{"type":"doc","content":[{"type":"text","text":"123456789012345678901"}]}}`, "its content size is 21, over the limit of 20 positions", ErrDocTooLarge, -1},
		{"doc just small enough", textDefault, `{"doc":{"type":"doc","content":[{"type":"text","text":"12345678901234567890"}]}}`, `{"doc":{"type":"doc","content":[{"type":"text","text":"12345678901234567890"}]}}`, nil, 0},
		{"a step grows the doc too large", textDefault, `{"doc":{"type":"doc","content":[{"type":"text","text":"Hello"}]},"steps":[` +
			`{"stepType":"replace","from":5,"to":0},{"stepType":"replace","from":10,"to":0},{"stepType":"replace","from":20,"to":0}]}`,
			"the step makes its content size 40, over the limit of 20 positions", ErrDocTooLarge, 2},

		{"step fails to apply", textDefault, `{"doc":{"type":"doc"},"steps":[{"stepType":"replace","from":0,"to":0},{"stepType":"replace","from":3,"to":3}]}`, `{"error":{"step":1,"message":"Position 3 out of range"}}`, ErrStepFailed, 1},
		{"step fails to decode", textDefault, `{"doc":{"type":"doc"},"steps":[{"stepType":"replace","from":"0","to":0}]}`, "Invalid input for ReplaceStep.fromJSON", ErrStepFailed, 0},
		{"step not an object", textDefault, `{"doc":{"type":"doc"},"steps":[5]}`, "Invalid input for Step.fromJSON", ErrStepFailed, 0},
		{"unknown step type", textDefault, `{"doc":{"type":"doc"},"steps":[{"stepType":"nope"}]}`, "No step type nope defined", ErrStepFailed, 0},
		// JavaScript decodes and applies step by step: step 0 fails first.
		{"apply failure before a decode failure", textDefault, `{"doc":{"type":"doc"},"steps":[{"stepType":"replace","from":9,"to":9},{"stepType":"nope"}]}`, "Position 9 out of range", ErrStepFailed, 0},

		{"positions", cli, `{"doc":` + basicDoc + `,"steps":[{"stepType":"replace","from":2,"to":4}],"positions":[0,3,5]}`,
			`{"doc":{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"fbar"}]}]},` +
				`"mapped":[[0,-1,0,false],[0,1,0,false],[3,-1,2,true],[3,1,2,true],[5,-1,3,false],[5,1,3,false]],` +
				`"mappedFlags":[[false,false,false],[false,false,false],[true,true,true],[true,true,true],[false,false,false],[false,false,false]],` +
				`"inverted":[{"stepType":"replace","from":2,"to":2,"slice":{"content":[{"type":"text","text":"oo"}]}}]}`, nil, 0},
		{"empty positions", cli, `{"doc":` + basicDoc + `,"positions":[]}`, `{"doc":` + basicDoc + `,"mapped":[],"mappedFlags":[],"inverted":[]}`, nil, 0},
		{"null positions", cli, `{"doc":` + basicDoc + `,"positions":null}`, `{"doc":` + basicDoc + `}`, nil, 0},
		{"positions not an array", cli, `{"doc":` + basicDoc + `,"positions":3}`, `"positions" must be an array of numbers, not a number`, ErrInvalidRequest, -1},
		{"position not a number", cli, `{"doc":` + basicDoc + `,"positions":[1,"2"]}`, `"positions[1]" must be a number, not a string`, ErrInvalidRequest, -1},
		{"fractional position", cli, `{"doc":` + basicDoc + `,"positions":[1.5]}`, `positions[0]: 1.5 is not a non-negative integer`, ErrInvalidRequest, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, f := answer(t, tc.a, tc.req)
			if tc.kind == nil {
				if f != nil || got != tc.want {
					t.Fatalf("got %s\nwant %s", got, tc.want)
				}
				return
			}
			if f == nil {
				t.Fatalf("got %s, want a failure %v", got, tc.kind)
			}
			if !errors.Is(f, tc.kind) || f.Step != tc.step || !strings.Contains(got, tc.want) && !strings.Contains(f.Message, tc.want) {
				t.Fatalf("got %s (%v, step %d)\nwant %v at step %d, containing %s", got, f.Err, f.Step, tc.kind, tc.step, tc.want)
			}
		})
	}
}

func jsonString(s string) string { return string(model.AppendJSONString(nil, s)) }

func TestApplyCanceled(t *testing.T) {
	a := &Applier{Schemas: &Schemas{Default: "text"}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, n, err := a.Apply(ctx, nil, []byte(seed))
	var f *Failure
	if !errors.As(err, &f) || !errors.Is(err, ErrCanceled) || f.Step != 0 || n != 1 {
		t.Fatalf("got %v (n = %d), want ErrCanceled at step 0", err, n)
	}
}

func TestApplyStepCount(t *testing.T) {
	a := &Applier{Schemas: &Schemas{Default: "text"}, Limits: Limits{MaxSteps: 2}}
	for _, tc := range []struct {
		req string
		n   int
	}{
		{seed, 1},
		{`{"doc":{"type":"doc"}}`, 0},
		{`{"doc":{"type":"doc"},"steps":[1,2,3,4,5]}`, 5}, // counted past the limit
	} {
		if _, n, _ := a.Apply(context.Background(), nil, []byte(tc.req)); n != tc.n {
			t.Errorf("%s: n = %d, want %d", tc.req, n, tc.n)
		}
	}
}

// TestApplyConcurrent runs requests from many goroutines on one Applier
// (go test -race).
func TestApplyConcurrent(t *testing.T) {
	a := &Applier{Schemas: &Schemas{Default: "text"}, Positions: true}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				req, want := seed, seedAnswer
				if (g+i)%3 == 0 {
					req, want = `{"schema":"basic","doc":`+basicDoc+`,"steps":[{"stepType":"replace","from":2,"to":4}]}`,
						`{"doc":{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"fbar"}]}]}}`
				}
				if got, _ := answer(t, a, req); got != want {
					t.Errorf("got %s, want %s", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestApplyMatchesLegacy compares Apply with the first implementation on
// random requests whose steps all decode (where the two agree by design),
// with and without positions.
func TestApplyMatchesLegacy(t *testing.T) {
	reg := &Schemas{Default: "basic"}
	a := &Applier{Schemas: reg, Positions: true}
	r := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	var ok, failed int
	for i := range n {
		req := randomRequest(r)
		want, wantF := legacyDo(req, reg)
		got, gotF := answer(t, a, string(req))
		switch {
		case wantF == nil && gotF == nil:
			ok++
			if got != string(want) {
				t.Fatalf("request %d: %s\ngot  %s\nwant %s", i, req, got, want)
			}
		case wantF != nil && gotF != nil:
			failed++
			if wantF.Step != gotF.Step || wantF.Message != gotF.Message {
				t.Fatalf("request %d: %s\ngot  %v\nwant %v", i, req, gotF, wantF)
			}
		default:
			t.Fatalf("request %d: %s\ngot  %s\nwant %s %v", i, req, got, want, wantF)
		}
	}
	if ok < n/10 || failed < n/10 {
		t.Fatalf("%d succeeded and %d failed: the generator needs tuning", ok, failed)
	}
}

// randomRequest returns a request on a basic document with well-formed
// steps, of which some fit the document and some do not.
func randomRequest(r *rand.Rand) []byte {
	schema, _ := schemas.Get("basic")
	var b bytes.Buffer
	b.WriteString(`{"doc":{"type":"doc","content":[`)
	size := 0
	for i := range 1 + r.IntN(4) {
		if i > 0 {
			b.WriteByte(',')
		}
		text := strings.Repeat("ab", 1+r.IntN(5))
		switch r.IntN(3) {
		case 0:
			fmt.Fprintf(&b, `{"type":"heading","attrs":{"level":%d},"content":[{"type":"text","text":%q}]}`, 1+r.IntN(3), text)
		case 1:
			fmt.Fprintf(&b, `{"type":"paragraph","content":[{"type":"text","marks":[{"type":"em"}],"text":%q}]}`, text)
		default:
			fmt.Fprintf(&b, `{"type":"paragraph","content":[{"type":"text","text":%q}]}`, text)
		}
		size += len(text) + 2
	}
	b.WriteString(`]},"steps":[`)
	pos := func() int { return r.IntN(size + 3) }
	for i := range r.IntN(6) {
		if i > 0 {
			b.WriteByte(',')
		}
		from := pos()
		to := min(from+r.IntN(4), size+2)
		switch r.IntN(7) {
		case 0:
			fmt.Fprintf(&b, `{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"text","text":"xy"}]}}`, from, from)
			size += 2
		case 1:
			fmt.Fprintf(&b, `{"stepType":"replace","from":%d,"to":%d}`, from, to)
		case 2:
			fmt.Fprintf(&b, `{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"paragraph"},{"type":"paragraph"}],"openStart":1,"openEnd":1}}`, from, from)
			size += 2
		case 3:
			fmt.Fprintf(&b, `{"stepType":"addMark","mark":{"type":"strong"},"from":%d,"to":%d}`, from, to)
		case 4:
			fmt.Fprintf(&b, `{"stepType":"removeMark","mark":{"type":"em"},"from":%d,"to":%d}`, from, to)
		case 5:
			fmt.Fprintf(&b, `{"stepType":"attr","pos":%d,"attr":"level","value":%d}`, from, 1+r.IntN(6))
		default:
			fmt.Fprintf(&b, `{"stepType":"replaceAround","from":%d,"to":%d,"gapFrom":%d,"gapTo":%d,"insert":1,"slice":{"content":[{"type":"blockquote"}],"openStart":0,"openEnd":0},"structure":true}`,
				from, to, from, to)
			size += 2
		}
	}
	b.WriteString(`]`)
	if r.IntN(2) == 0 {
		b.WriteString(`,"positions":[`)
		for i := range 1 + r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%d", r.IntN(size+1))
		}
		b.WriteString(`]`)
	}
	b.WriteString(`}`)
	if _, err := schema.NodeFromJSON(b.Bytes()[len(`{"doc":`):bytes.Index(b.Bytes(), []byte(`,"steps"`))]); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func BenchmarkApply(b *testing.B) {
	a := &Applier{Schemas: &Schemas{Default: "text"}, Limits: Limits{MaxSteps: DefaultMaxSteps, MaxDocSize: DefaultMaxDocSize}}
	for _, bc := range []struct {
		name string
		data []byte
	}{
		{"seed", []byte(seed)},
		{"50KB+20steps", reqtest.Large(50_000, 20)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.data)))
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				var err error
				if buf, _, err = a.Apply(context.Background(), buf[:0], bc.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
