// Package bench holds pmauthority's side-by-side benchmarks: Go
// benchmarks (replay_test.go, json_test.go, applysize_test.go,
// transform_test.go …) and their node counterparts in js/, which run the
// real prosemirror-model and prosemirror-transform on the same inputs.
// run.sh, export.sh and transform.sh run both and print the ratios;
// RESULTS.md has dated tables.
//
// The inputs are the editing traces in ../../shared/traces (or $PMA_TRACES),
// documents built from them by tracedoc.BuildDoc, and
// testdata/transform-ops.json, a session of Transform calls recorded by
// js/transform-record.mjs on the 50 KB document. bench is a Go module
// of its own, so that the product's go.mod and go test ./... carry only
// the product.
package bench

// DocSizes are the JSON benchmark documents, by name: the target size in
// bytes of their JSON text.
var DocSizes = []struct {
	Name  string
	Bytes int
}{
	{"50KB", 50_000},
	{"1MB", 1_000_000},
}
