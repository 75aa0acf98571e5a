package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/pmauthority/pmauthority/internal/tracedoc"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

// traceHeader is the first line of a NAME.steps.jsonl.gz trace.
type traceHeader struct {
	Trace        string          `json:"trace"`
	Schema       string          `json:"schema"`
	StartDoc     json.RawMessage `json:"startDoc"`
	Steps        int             `json:"steps"`
	EndDocSha256 string          `json:"endDocSha256"`
}

// trace is a loaded trace: its header and the step JSON lines.
type trace struct {
	header traceHeader
	steps  [][]byte
}

var traceCache sync.Map // file -> *trace

// traceFiles returns the trace files in the traces folder, sorted.
func traceFiles(b *testing.B) []string {
	files, err := filepath.Glob(filepath.Join(tracesDir(b), "*.steps.jsonl.gz"))
	if err != nil {
		b.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// loadTrace reads and splits a trace file, once per process.
func loadTrace(b *testing.B, file string) *trace {
	if t, ok := traceCache.Load(file); ok {
		return t.(*trace)
	}
	data, err := tracedoc.ReadGz(file)
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	t := &trace{steps: lines[1:]}
	if err := json.Unmarshal(lines[0], &t.header); err != nil {
		b.Fatalf("%s: header: %v", file, err)
	}
	if len(t.steps) != t.header.Steps {
		b.Fatalf("%s: header says %d steps, file has %d", file, t.header.Steps, len(t.steps))
	}
	traceCache.Store(file, t)
	return t
}

// replay decodes and applies every step of t to start, in order.
func replay(schema *model.Schema, start *model.Node, steps [][]byte) (*model.Node, error) {
	doc := start
	for i, line := range steps {
		step, err := transform.StepFromJSON(schema, line)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i, err)
		}
		if doc, err = step.Apply(doc); err != nil {
			return nil, fmt.Errorf("step %d: %w", i, err)
		}
	}
	return doc, nil
}

// docSha256 returns the hex sha256 of doc's JSON, the traces' endDocSha256.
func docSha256(doc *model.Node) string {
	sum := sha256.Sum256(doc.AppendJSON(nil))
	return hex.EncodeToString(sum[:])
}

// BenchmarkReplay replays each editing trace: one operation is the whole
// trace, every step decoded with transform.StepFromJSON and applied, from
// the header's start document. The node counterpart is js/replay.mjs
// (which decodes from JSON.parse'd objects; here decoding starts from the
// bytes). The final document is checked against the header's sha256 once,
// before timing. Besides the wall-clock steps/s and ns/step it reports
// cpu-ns/step, the process's CPU time (all threads, GC included) per step.
func BenchmarkReplay(b *testing.B) {
	for _, file := range traceFiles(b) {
		name := strings.TrimSuffix(filepath.Base(file), ".steps.jsonl.gz")
		b.Run(name, func(b *testing.B) {
			t := loadTrace(b, file)
			schema, err := schemas.Get(t.header.Schema)
			if err != nil {
				b.Fatal(err)
			}
			start, err := schema.NodeFromJSON(t.header.StartDoc)
			if err != nil {
				b.Fatalf("startDoc: %v", err)
			}
			doc, err := replay(schema, start, t.steps)
			if err != nil {
				b.Fatal(err)
			}
			if sum := docSha256(doc); sum != t.header.EndDocSha256 {
				b.Fatalf("final doc sha256 %s, header says %s", sum, t.header.EndDocSha256)
			}

			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu := cpuTime(b)
			for b.Loop() {
				if _, err := replay(schema, start, t.steps); err != nil {
					b.Fatal(err)
				}
			}
			cpu = cpuTime(b) - cpu
			runtime.ReadMemStats(&after)
			steps := float64(b.N) * float64(len(t.steps))
			b.ReportMetric(steps/b.Elapsed().Seconds(), "steps/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/steps, "ns/step")
			reportCPU(b, cpu, len(t.steps))
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/steps, "B/step")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/steps, "allocs/step")
		})
	}
}
