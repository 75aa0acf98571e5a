package model

import (
	"bytes"
	"encoding/json"
	"os"
	"sync"
	"testing"
)

// The benchmark documents are the top-level blocks of the rich editing
// trace's end document (headings, lists, blockquotes, marks, links),
// repeated up to the size wanted, as bench.BuildDoc builds them for the
// side-by-side comparison with node (bench/js/json.mjs): the text is what
// JSON.stringify(doc.toJSON()) gives for the document.

var benchDocs sync.Map // size -> []byte

func benchDoc(b *testing.B, size int) []byte {
	if d, ok := benchDocs.Load(size); ok {
		return d.([]byte)
	}
	const src = "/work/shared/traces/seph-blog1-rich.end.json.gz"
	if _, err := os.Stat(src); err != nil {
		b.Skip("no trace document")
	}
	var doc struct {
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(readGzip(b, src), &doc); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	buf.WriteString(`{"type":"doc","content":[`)
	for i := 0; buf.Len()+2 < size; i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(doc.Content[i%len(doc.Content)])
	}
	buf.WriteString(`]}`)
	data := buf.Bytes()
	benchDocs.Store(size, data)
	return data
}

func benchmarkDecode(b *testing.B, size int) {
	s := testBasicSchema(b)
	data := benchDoc(b, size)
	n, err := s.NodeFromJSON(data)
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.Equal(n.AppendJSON(nil), data) {
		b.Fatal("the document does not round-trip")
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.NodeFromJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkEncode(b *testing.B, size int) {
	s := testBasicSchema(b)
	data := benchDoc(b, size)
	n, err := s.NodeFromJSON(data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n.AppendJSON(nil)
	}
}

func BenchmarkDecode50K(b *testing.B) { benchmarkDecode(b, 50_000) }
func BenchmarkDecode1M(b *testing.B)  { benchmarkDecode(b, 1_000_000) }
func BenchmarkEncode50K(b *testing.B) { benchmarkEncode(b, 50_000) }
func BenchmarkEncode1M(b *testing.B)  { benchmarkEncode(b, 1_000_000) }

// BenchmarkDecodeValue is the slow path, for comparison.
func BenchmarkDecodeValue50K(b *testing.B) {
	s := testBasicSchema(b)
	data := benchDoc(b, 50_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		v, err := ParseJSONValue(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.NodeFromValue(v); err != nil {
			b.Fatal(err)
		}
	}
}
