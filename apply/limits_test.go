package apply

import (
	"errors"

	"github.com/pmauthority/pmauthority/apply/reqtest"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
)

func TestLimitsWithDefaults(t *testing.T) {
	d := DefaultLimits()
	if want := (Limits{MaxSteps: 1000, MaxDocSize: 10_000_000, MaxDocBytes: 4 << 20}); d != want {
		t.Errorf("DefaultLimits() = %+v, want %+v", d, want)
	}
	if got := (Limits{}).WithDefaults(); got != d {
		t.Errorf("zero Limits with defaults = %+v", got)
	}
	set := Limits{MaxSteps: 2, MaxDocSize: 3, MaxDocBytes: 11}
	if got := set.WithDefaults(); got != set {
		t.Errorf("WithDefaults changed set limits: %+v", got)
	}
	if got := (Limits{MaxSteps: -1, MaxDocSize: 7}).WithDefaults(); got.MaxSteps != DefaultMaxSteps || got.MaxDocSize != 7 {
		t.Errorf("WithDefaults of a negative MaxSteps = %+v", got)
	}
}

// TestApplierRegistry: requests name the schemas of a Registry; an
// unknown name fails with the registry's names.
func TestApplierRegistry(t *testing.T) {
	lines, err := model.LoadSchema([]byte(`{"nodes":{"doc":{"content":"line*"},"line":{"content":"text*"},"text":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := schemas.NewRegistry(map[string]*model.Schema{"lines": lines}, "lines")
	if err != nil {
		t.Fatal(err)
	}
	a := &Applier{Schemas: &Schemas{Registry: reg}}
	const doc = `{"type":"doc","content":[{"type":"line","content":[{"type":"text","text":"a"}]}]}`
	for _, req := range []string{`{"doc":` + doc + `}`, `{"schema":"lines","doc":` + doc + `}`, `{"doc":` + doc + `,"schema":null}`} {
		if out, f := answer(t, a, req); f != nil || out != `{"doc":`+doc+`}` {
			t.Errorf("%s: %s %v", req, out, f)
		}
	}
	_, f := answer(t, a, `{"schema":"nope","doc":`+doc+`}`)
	if f == nil || f.Err != ErrUnknownSchema || f.Message != `unknown schema "nope" (have basic, lines, suggest, text)` {
		t.Errorf("unknown schema: %+v", f)
	}
	_, f = answer(t, a, `{"schema":"text","doc":`+doc+`}`)
	if f == nil || f.Err != ErrInvalidDoc || !strings.Contains(f.Message, "line") {
		t.Errorf("a doc of lines with the text schema: %+v", f)
	}
	// A name given in the request is looked up without allocating.
	withName, without := []byte(`{"schema":"lines","doc":`+doc+`}`), []byte(`{"doc":`+doc+`}`)
	var buf []byte
	named := testing.AllocsPerRun(100, func() { buf, _, _ = a.Apply(t.Context(), buf[:0], withName) })
	unnamed := testing.AllocsPerRun(100, func() { buf, _, _ = a.Apply(t.Context(), buf[:0], without) })
	if named > unnamed {
		t.Errorf("a request naming its schema allocates %v times, one without %v", named, unnamed)
	}
}

// TestMaxDocBytes: replace steps with from > to, each doubling the
// document, are refused at the first step whose result's JSON is over
// MaxDocBytes, though their content size is within MaxDocSize; a given
// document over it is refused too.
func TestMaxDocBytes(t *testing.T) {
	a := &Applier{Schemas: &Schemas{Default: "basic"}, Limits: DefaultLimits()}
	// 23 steps make 8,388,608 characters: within MaxDocSize; the 22nd
	// makes 4,194,304.
	_, _, err := a.Apply(t.Context(), nil, reqtest.DoublingRequest(23))
	var f *Failure
	if !errors.As(err, &f) || f.Err != ErrDocTooLarge || f.Step != 21 ||
		!strings.Contains(f.Message, "its JSON 4194389 bytes, over the limit of 4194304 bytes") {
		t.Fatalf("the doubling steps: %v", err)
	}
	// One step fewer fits.
	out, _, err := a.Apply(t.Context(), nil, reqtest.DoublingRequest(21))
	if err != nil || len(out) != len(`{"doc":}`)+2097152+len(reqtest.DoublingDoc)-1 {
		t.Fatalf("21 doubling steps: %d bytes, %v", len(out), err)
	}
	small := &Applier{Schemas: &Schemas{Default: "basic"}, Limits: Limits{MaxDocBytes: int64(len(reqtest.DoublingDoc)) - 1}}
	_, f = answer(t, small, `{"doc":`+reqtest.DoublingDoc+`}`)
	if f == nil || f.Err != ErrDocTooLarge || f.Step != -1 ||
		f.Message != "document too large: its JSON is 86 bytes, over the limit of 85 bytes" {
		t.Fatalf("a given document over the limit: %+v", f)
	}
}
