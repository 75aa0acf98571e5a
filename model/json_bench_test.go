package model_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/pmauthority/pmauthority/internal/tracedoc"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
)

// The benchmark documents are those of the side-by-side comparison with
// node (tracedoc.BuildDoc, bench/js/json.mjs): blocks of the rich editing
// trace's end document, repeated up to the size wanted.

var benchDocs sync.Map // size -> []byte

func benchSetup(b *testing.B, size int) (*model.Schema, []byte, *model.Node) {
	s, err := schemas.Get("basic")
	if err != nil {
		b.Fatal(err)
	}
	data, ok := benchDocs.Load(size)
	if !ok {
		doc, err := tracedoc.BuildDoc(tracedoc.Dir(".."), size)
		if err != nil {
			b.Skip(err)
		}
		data, _ = benchDocs.LoadOrStore(size, doc)
	}
	n, err := s.NodeFromJSON(data.([]byte))
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.Equal(n.AppendJSON(nil), data.([]byte)) {
		b.Fatal("the document does not round-trip")
	}
	b.SetBytes(int64(len(data.([]byte))))
	b.ReportAllocs()
	return s, data.([]byte), n
}

func benchmarkDecode(b *testing.B, size int) {
	s, data, _ := benchSetup(b, size)
	for b.Loop() {
		if _, err := s.NodeFromJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkEncode(b *testing.B, size int) {
	_, _, n := benchSetup(b, size)
	for b.Loop() {
		n.AppendJSON(nil)
	}
}

func BenchmarkDecode50K(b *testing.B) { benchmarkDecode(b, 50_000) }
func BenchmarkDecode1M(b *testing.B)  { benchmarkDecode(b, 1_000_000) }
func BenchmarkEncode50K(b *testing.B) { benchmarkEncode(b, 50_000) }
func BenchmarkEncode1M(b *testing.B)  { benchmarkEncode(b, 1_000_000) }

// BenchmarkDecodeValue50K is the slow path (ParseJSONValue +
// NodeFromValue), for comparison.
func BenchmarkDecodeValue50K(b *testing.B) {
	s, data, _ := benchSetup(b, 50_000)
	for b.Loop() {
		v, err := model.ParseJSONValue(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.NodeFromValue(v); err != nil {
			b.Fatal(err)
		}
	}
}
