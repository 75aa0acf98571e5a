// Package tracedoc reads the editing traces that pmauthority's tests and
// benchmarks replay ($PMA_TRACES, else the small set committed in
// testdata/traces) and builds the JSON benchmark documents from them, for
// the benchmarks of the bench module and of the model package alike.
package tracedoc

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// DocSource is the trace end document the JSON benchmark documents are
// built from: the rich one, with headings, lists, blockquotes and marks.
const DocSource = "seph-blog1-rich.end.json.gz"

// Dir returns the folder of the editing traces: $PMA_TRACES, or the
// small set of the repository, testdata/traces relative to root (the
// repository's folder).
func Dir(root string) string {
	if d := os.Getenv("PMA_TRACES"); d != "" {
		return d
	}
	return filepath.Join(root, "testdata", "traces")
}

// ReadGz returns the gunzipped contents of file.
func ReadGz(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return data, nil
}

// BuildDoc returns the JSON text of a document of about size bytes: the
// top-level blocks of the trace end document [DocSource] in tracesDir,
// repeated from the start as often as needed, up to the first block that
// reaches size. Blocks are copied byte for byte, so the text is what
// JSON.stringify(doc.toJSON()) gives for the document, in Go and in JS.
func BuildDoc(tracesDir string, size int) ([]byte, error) {
	src := filepath.Join(tracesDir, DocSource)
	data, err := ReadGz(src)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Type    string            `json:"type"`
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	if doc.Type != "doc" || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: not a doc with content", src)
	}
	const head, tail = `{"type":"doc","content":[`, `]}`
	var buf bytes.Buffer
	buf.WriteString(head)
	for i := 0; buf.Len()+len(tail) < size; i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(doc.Content[i%len(doc.Content)])
	}
	buf.WriteString(tail)
	return buf.Bytes(), nil
}
