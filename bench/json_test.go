package bench

import (
	"bytes"
	"runtime"
	"sync"
	"testing"

	"github.com/pmauthority/pmauthority/internal/tracedoc"
	"github.com/pmauthority/pmauthority/model"
)

var docCache sync.Map // size -> []byte

// benchDoc returns the JSON benchmark document of size bytes, built once.
func benchDoc(b *testing.B, size int) []byte {
	if d, ok := docCache.Load(size); ok {
		return d.([]byte)
	}
	data, err := tracedoc.BuildDoc(tracesDir(b), size)
	if err != nil {
		b.Fatal(err)
	}
	docCache.Store(size, data)
	return data
}

// decodeChecked decodes data and checks that encoding gives data back.
func decodeChecked(b *testing.B, schema *model.Schema, data []byte) *model.Node {
	doc, err := schema.NodeFromJSON(data)
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.Equal(doc.AppendJSON(nil), data) {
		b.Fatal("AppendJSON of the decoded document differs from its JSON")
	}
	return doc
}

// copiesFor is how many documents the memory measurement keeps alive:
// about 20 MB of JSON, at least 10 (js/json.mjs uses the same formula).
func copiesFor(size int) int {
	return max(10, (20_000_000+size/2)/size)
}

// heapPerDoc returns the growth of the live heap per document when k
// documents decoded from data are kept alive.
func heapPerDoc(b *testing.B, schema *model.Schema, data []byte, k int) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := make([]*model.Node, k)
	for i := range kept {
		doc, err := schema.NodeFromJSON(data)
		if err != nil {
			b.Fatal(err)
		}
		kept[i] = doc
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(k)
}

// BenchmarkDecode decodes the benchmark documents with
// Schema.NodeFromJSON (node: JSON.parse + Node.fromJSON in js/json.mjs).
// It also reports heapB/doc, the live heap a loaded document takes
// (node: heapUsed growth per kept document), and cpu-ns/op.
func BenchmarkDecode(b *testing.B) {
	for _, d := range DocSizes {
		b.Run(d.Name, func(b *testing.B) {
			schema := basicSchema(b)
			data := benchDoc(b, d.Bytes)
			decodeChecked(b, schema, data)
			perDoc := heapPerDoc(b, schema, data, copiesFor(len(data)))
			b.SetBytes(int64(len(data)))
			cpu := cpuTime(b)
			for b.Loop() {
				if _, err := schema.NodeFromJSON(data); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpuTime(b)-cpu, 1)
			b.ReportMetric(perDoc, "heapB/doc")
		})
	}
}

// BenchmarkEncode encodes the benchmark documents with Node.AppendJSON
// into a new buffer each time (node: JSON.stringify(doc.toJSON())). It
// also reports cpu-ns/op.
func BenchmarkEncode(b *testing.B) {
	for _, d := range DocSizes {
		b.Run(d.Name, func(b *testing.B) {
			data := benchDoc(b, d.Bytes)
			doc := decodeChecked(b, basicSchema(b), data)
			b.SetBytes(int64(len(data)))
			cpu := cpuTime(b)
			for b.Loop() {
				doc.AppendJSON(nil)
			}
			reportCPU(b, cpuTime(b)-cpu, 1)
		})
	}
}
