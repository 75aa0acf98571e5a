package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

// opsFile is the recorded editing session of the Transform API benchmark,
// made by js/transform-record.mjs from the 50 KB benchmark document.
const opsFile = "testdata/transform-ops.json"

// recordedOps is opsFile: the start document, the ops and the sha256 of
// the document they make, as prosemirror-transform made it.
type recordedOps struct {
	Format string          `json:"format"`
	Count  int             `json:"count"`
	Sha256 string          `json:"sha256"`
	Doc    json.RawMessage `json:"doc"`
	Ops    []transform.Op  `json:"ops"`
	// After is the sha256 of the document after each op.
	After []string `json:"after"`
}

// loadOps reads opsFile and decodes its start document.
func loadOps(tb testing.TB) (*recordedOps, *model.Node) {
	data, err := os.ReadFile(opsFile)
	if err != nil {
		tb.Fatal(err)
	}
	var rec recordedOps
	if err := json.Unmarshal(data, &rec); err != nil {
		tb.Fatalf("%s: %v", opsFile, err)
	}
	if rec.Format != "pmauthority-transform-ops" || len(rec.Ops) != rec.Count || len(rec.After) != rec.Count {
		tb.Fatalf("%s: format %q, count %d, %d ops, %d sums", opsFile, rec.Format, rec.Count, len(rec.Ops), len(rec.After))
	}
	schema, err := schemas.Get("basic")
	if err != nil {
		tb.Fatal(err)
	}
	doc, err := schema.NodeFromJSON(rec.Doc)
	if err != nil {
		tb.Fatalf("%s: start document: %v", opsFile, err)
	}
	return &rec, doc
}

// TestTransformReplay checks that Transform.Apply makes of every
// recorded op the document prosemirror-transform made, byte for byte,
// and that ApplyOps makes the final one. On a mismatch it names the first
// op whose document differs from node's.
func TestTransformReplay(t *testing.T) {
	rec, doc := loadOps(t)
	tr := transform.New(doc)
	for i, op := range rec.Ops {
		before := tr.Doc
		if err := tr.Apply(op); err != nil {
			t.Fatalf("op %d %s: %v (node ran it)", i, opJSON(op), err)
		}
		if sum := docSha256(tr.Doc); sum != rec.After[i] {
			file := writeMismatch(t, i, before, tr.Doc)
			t.Fatalf("op %d %s: document sha256 %s, node's %s (Go's documents before and after it: %s)",
				i, opJSON(op), sum, rec.After[i], file)
		}
	}
	all, err := transform.ApplyOps(doc, rec.Ops)
	if err != nil {
		t.Fatal(err)
	}
	if sum := docSha256(all.Doc); sum != rec.Sha256 {
		t.Fatalf("final document sha256 %s, node's %s", sum, rec.Sha256)
	}
}

// writeMismatch writes before and after, the documents around op i, to
// out/transform-op-I.json, and returns the file's name.
func writeMismatch(t *testing.T, i int, before, after *model.Node) string {
	file := fmt.Sprintf("out/transform-op-%d.json", i)
	data := fmt.Appendf(nil, "{\"before\":%s,\n\"after\":%s}\n", before.AppendJSON(nil), after.AppendJSON(nil))
	if err := os.MkdirAll("out", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// opJSON returns op as JSON, for messages.
func opJSON(op transform.Op) string {
	data, _ := json.Marshal(op)
	return string(data)
}

// BenchmarkTransformReplay replays the recorded ops on the start
// document: one operation is the whole session, every op's arguments
// decoded from their JSON by Transform.Apply (node: js/transform.mjs,
// which decodes them from JSON.parse'd objects each run). It also
// reports cpu-ns/op.
func BenchmarkTransformReplay(b *testing.B) {
	rec, doc := loadOps(b)
	cpu := cpuTime(b)
	for b.Loop() {
		if _, err := transform.ApplyOps(doc, rec.Ops); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpuTime(b)-cpu, 1)
	b.ReportMetric(float64(len(rec.Ops)), "ops")
}
