package conformance

// Helpers shared by the corpus replays (model_test.go, steps_test.go):
// loading the conformance schemas, reading corpus files, rendering Go
// answers the way the JS generators record them, and collecting and
// reporting mismatches.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
)

// schemaFiles maps the schema names used by the corpora to their JSON
// spec files (relative to this package), the same files the JS side loads.
var schemaFiles = map[string]string{
	"text":    "../schemas/text.json",
	"basic":   "../schemas/basic.json",
	"suggest": "../schemas/suggest.json",
	"tables":  "schemas/tables.json",
	"stress":  "schemas/stress.json",
	// prosemirror-markdown's schema, toDOM as templates (export_test.go).
	"markdown": "schemas/markdown.json",
}

var (
	schemasOnce sync.Once
	schemasErr  error
	loaded      map[string]*model.Schema
)

// loadSchemas returns the conformance schemas by name, built once
// from their spec files with model.LoadSchema.
func loadSchemas(t testing.TB) map[string]*model.Schema {
	t.Helper()
	schemasOnce.Do(func() {
		loaded = map[string]*model.Schema{}
		for name, file := range schemaFiles {
			data, err := os.ReadFile(file)
			if err != nil {
				schemasErr = err
				return
			}
			s, err := model.LoadSchema(data)
			if err != nil {
				schemasErr = fmt.Errorf("schema %s (%s): %w", name, file, err)
				return
			}
			loaded[name] = s
		}
	})
	if schemasErr != nil {
		t.Fatal(schemasErr)
	}
	return loaded
}

// corpusFiles returns the committed corpus and, when the environment
// variable env names a file, that one too (CI's fresh corpus).
func corpusFiles(committed, env string) []string {
	files := []string{committed}
	if f := os.Getenv(env); f != "" {
		files = append(files, f)
	}
	return files
}

// corpusHeader is line 1 of a corpus file.
type corpusHeader struct {
	Format   string            `json:"format"`
	Version  int               `json:"version"`
	Seed     uint64            `json:"seed"`
	Count    int               `json:"count"`
	Schemas  []string          `json:"schemas"`
	Versions map[string]string `json:"versions"`
}

// readCorpus reads a JSONL corpus file, checks its header (format name,
// version, case count, schema names) and returns the header and the case
// lines.
func readCorpus(t testing.TB, path, format string, version int) (corpusHeader, [][]byte) {
	t.Helper()
	lines := readLines(t, path)
	var h corpusHeader
	if err := strictUnmarshal(lines[0], &h); err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	if h.Format != format || h.Version != version {
		t.Fatalf("%s: format %q version %d, want %q version %d", path, h.Format, h.Version, format, version)
	}
	if h.Count != len(lines)-1 {
		t.Fatalf("%s: header says %d cases, file has %d", path, h.Count, len(lines)-1)
	}
	for _, name := range h.Schemas {
		if _, ok := schemaFiles[name]; !ok {
			t.Fatalf("%s: unknown schema %q in header", path, name)
		}
	}
	return h, lines[1:]
}

// checkVersions fails t when the corpus header's package versions are
// not those in want, the versions that what (the Go port) follows.
func checkVersions(t testing.TB, file string, h corpusHeader, want map[string]string, what string) {
	t.Helper()
	for pkg, v := range want {
		if got := h.Versions[pkg]; got != v {
			t.Errorf("%s: recorded with %s %q, %s ports %s", file, pkg, got, what, v)
		}
	}
}

// readLines reads a JSONL file (at least one line) and returns its lines.
func readLines(t testing.TB, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(data, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	if len(lines) == 0 {
		t.Fatalf("%s: empty corpus", path)
	}
	return lines
}

// strictUnmarshal decodes data into v, refusing keys v does not know: a
// field the generator records but the replay ignores would go unchecked.
func strictUnmarshal(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// The Go answers are rendered as the JS generators write them
// (JSON.stringify), and compared byte for byte with the recorded JSON.

// jsonString renders s as JSON.stringify does (lone surrogates as \udxxx).
func jsonString(s string) []byte { return model.AppendJSONString(nil, s) }

// jsonInt renders an integer.
func jsonInt(n int) []byte { return fmt.Appendf(nil, "%d", n) }

// jsonBool renders a boolean.
func jsonBool(b bool) []byte { return fmt.Appendf(nil, "%t", b) }

// jsonNull is JSON null.
var jsonNull = []byte("null")

// jsonValue renders a JSON value made of nil, bool, int, string and []any
// of those (model.AppendJSONValue, with ints as JS numbers).
func jsonValue(v any) []byte { return model.AppendJSONValue(nil, jsNumbers(v)) }

func jsNumbers(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case []any:
		for i, e := range x {
			x[i] = jsNumbers(e)
		}
	}
	return v
}

// digestOver is the length (UTF-8 bytes) above which the generators record
// a JSON text as its SHA-256 digest (FORMAT-model.md, "Digest rule").
const digestOver = 200

// digestString renders a JSON text under the digest rule, as the recorded
// string field holds it: the text itself up to digestOver bytes, else
// "sha256:" and its hex digest. A nil text (JS null) is JSON null.
func digestString(text []byte) []byte {
	if text == nil {
		return jsonNull
	}
	if len(text) <= digestOver {
		return jsonString(string(text))
	}
	sum := sha256.Sum256(text)
	return jsonString("sha256:" + hex.EncodeToString(sum[:]))
}

// nodeText returns the JSON text of n (Node.toJSON), nil for no node.
func nodeText(n *model.Node) []byte {
	if n == nil {
		return nil
	}
	return n.AppendJSON(nil)
}

// errorMessage is the part of a Go error that must equal the JS message.
// Errors are compared by message: the Go message must be the JS message
// exactly, except that a *model.JSONError may add its location, so
// `Msg (at content[2].attrs)` matches the JS `Msg`.
func errorMessage(err error) string {
	var je *model.JSONError
	if errors.As(err, &je) && err.Error() == je.Error() {
		return je.Msg
	}
	return err.Error()
}

// errorType names the JS class of the error that a Go error stands for:
// ReplaceError for *model.ReplaceError, SyntaxError for malformed JSON
// (JSON.parse), TypeError for the V8 messages the model reproduces where
// the JS dereferences undefined or null, and RangeError (what
// prosemirror-model throws everywhere else) for the rest.
func errorType(err error) string {
	var re *model.ReplaceError
	var se *jsonscan.SyntaxError
	switch {
	case errors.As(err, &re):
		return "ReplaceError"
	case errors.As(err, &se):
		return "SyntaxError"
	case strings.HasPrefix(err.Error(), "Cannot read properties of "):
		return "TypeError"
	}
	return "RangeError"
}

// caseCheck collects the comparisons of one corpus case.
type caseCheck struct {
	id     int
	schema string
	kind   string
	fields int
	diffs  []fieldDiff
	known  bool // differs only in a documented way (import corpus)
}

// fieldDiff is one recorded field that Go answered differently.
type fieldDiff struct {
	field  string // the field's name, for counting ("positions.nodeAfter")
	where  string // which element, for the report ("pos 17")
	want   string // the recorded value
	got    string // Go's value, rendered the same way
	detail string // optional: more about Go's value (a digested text, an error)
}

// eq compares a recorded field (raw JSON as in the file; nil when absent)
// with Go's rendering of it (nil when Go says the field is absent).
func (c *caseCheck) eq(field, where string, want json.RawMessage, got []byte) bool {
	c.fields++
	if bytes.Equal(want, got) && (want == nil) == (got == nil) {
		return true
	}
	c.diffs = append(c.diffs, fieldDiff{field: field, where: where, want: shown(want), got: shown(got)})
	return false
}

// eqDigest is eq for a field under the digest rule; text is Go's JSON
// text (nil for null), shown in full when it does not match.
func (c *caseCheck) eqDigest(field, where string, want json.RawMessage, text []byte) {
	if !c.eq(field, where, want, digestString(text)) && text != nil && len(text) > digestOver {
		c.diffs[len(c.diffs)-1].detail = "Go's text: " + string(text)
	}
}

// fail records a mismatch that is not a plain field comparison.
func (c *caseCheck) fail(field, where, want, got string) {
	c.fields++
	c.diffs = append(c.diffs, fieldDiff{field: field, where: where, want: want, got: got})
}

func shown(v []byte) string {
	if v == nil {
		return "(absent)"
	}
	return string(v)
}

// corpusReport sums up the checks of a corpus file.
type corpusReport struct {
	cases, fields, failed int
	byField               map[string]int
	first                 []string
}

// maxDetailed is how many mismatches a report shows in full
// (go test ./conformance -args -mismatches=N).
var maxDetailed = flag.Int("mismatches", 20, "how many corpus mismatches to show in full")

// checkCases runs check on every case line, spread over the CPUs, and
// returns the report, in case order.
func checkCases(lines [][]byte, check func(line []byte) *caseCheck) *corpusReport {
	results := make([]*caseCheck, len(lines))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(lines); i += workers {
				results[i] = check(lines[i])
			}
		})
	}
	wg.Wait()
	return newCorpusReport(results)
}

// newCorpusReport sums up the checks of a corpus's cases, in order.
func newCorpusReport(checks []*caseCheck) *corpusReport {
	r := &corpusReport{byField: map[string]int{}}
	for _, c := range checks {
		r.cases++
		r.fields += c.fields
		for _, d := range c.diffs {
			r.failed++
			r.byField[d.field]++
			if len(r.first) < *maxDetailed {
				s := fmt.Sprintf("case %d (%s, %s): %s", c.id, c.schema, c.kind, d.field)
				if d.where != "" {
					s += " [" + d.where + "]"
				}
				s += fmt.Sprintf(":\n\twant %s\n\tgot  %s", clip(d.want), clip(d.got))
				if d.detail != "" {
					s += "\n\t" + clip(d.detail)
				}
				r.first = append(r.first, s)
			}
		}
	}
	return r
}

func clip(s string) string {
	const max = 600
	if len(s) > max {
		return s[:max] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

// report fails t with the first mismatches and a count per field, and logs
// a summary line.
func (r *corpusReport) report(t testing.TB, file string) {
	t.Helper()
	if r.failed > 0 {
		fields := make([]string, 0, len(r.byField))
		for f := range r.byField {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		var b strings.Builder
		for _, f := range fields {
			fmt.Fprintf(&b, "\n\t%6d  %s", r.byField[f], f)
		}
		t.Errorf("%s: %d mismatches (first %d below); per field:%s\n%s",
			filepath.Base(file), r.failed, len(r.first), b.String(), strings.Join(r.first, "\n"))
	}
	t.Logf("%s: %d cases checked, %d fields compared, %d mismatches", file, r.cases, r.fields, r.failed)
}
