package apply

import (
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
)

func TestLimitsWithDefaults(t *testing.T) {
	d := DefaultLimits()
	want := Limits{MaxBodyBytes: 8 << 20, MaxSteps: 1000, MaxDocSize: 10_000_000, MaxDepth: 512, MaxHeaderBytes: 64 << 10,
		MaxConns: 10_000, MaxClientConns: 256, MaxWSMessages: 200, MaxPresence: 20, MaxSubmissions: 500}
	if d != want {
		t.Errorf("DefaultLimits() = %+v, want %+v", d, want)
	}
	if got := (Limits{}).WithDefaults(); got != d {
		t.Errorf("zero Limits with defaults = %+v", got)
	}
	set := Limits{MaxBodyBytes: 1, MaxSteps: 2, MaxDocSize: 3, MaxDepth: 4, MaxHeaderBytes: 5, MaxConns: 6, MaxClientConns: 7, MaxWSMessages: 8,
		MaxPresence: 9, MaxSubmissions: 10}
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
	if f == nil || f.Err != ErrUnknownSchema || f.Message != `unknown schema "nope" (have basic, lines, text)` {
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
