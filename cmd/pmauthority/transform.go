package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

func runTransform(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("transform", flag.ContinueOnError)
	fs.SetOutput(stderr)
	schema := fs.String("schema", "basic", "schema: a built-in name (basic, suggest, text) or the path of a JSON spec file")
	jsonl := fs.Bool("jsonl", false, "read one request per line and write one answer per line until EOF")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: pmauthority transform [--schema NAME|FILE] [--jsonl]

Reads {"doc": …, "ops": [{"op": NAME, "args": […]}, …]} on stdin, runs the
ops (prosemirror-transform's Transform methods) and writes {"doc": …,
"steps": […]}; on failure writes {"error": {"op": i, "message": "…"}} and
exits 1 (op -1: the request or its document is invalid). With --jsonl,
answers every line in order and exits 0; a line may name its own "schema".`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	reg := &apply.Schemas{Default: *schema, Files: true}
	if _, err := reg.Get(""); err != nil {
		fmt.Fprintln(stderr, "pmauthority transform:", err)
		return 2
	}
	return serveRequests("transform", *jsonl, stdin, stdout, stderr, func(buf, data []byte) ([]byte, bool) {
		out, err := transformRequest(reg, buf, data)
		var f *transformFailure
		if errors.As(err, &f) {
			return f.appendJSON(buf), true
		}
		return out, false
	})
}

// transformFailure is the answer to a request that failed: the index of
// the failing op (-1 for the request itself) and why.
type transformFailure struct {
	op  int
	err error
}

func (f *transformFailure) Error() string { return f.err.Error() }

func (f *transformFailure) appendJSON(buf []byte) []byte {
	buf = append(buf, `{"error":{"op":`...)
	buf = strconv.AppendInt(buf, int64(f.op), 10)
	buf = append(buf, `,"message":`...)
	buf = model.AppendJSONString(buf, f.err.Error())
	return append(buf, "}}"...)
}

// transformRequest runs one request and appends its answer to buf.
func transformRequest(reg *apply.Schemas, buf, data []byte) ([]byte, error) {
	var req struct {
		Doc    json.RawMessage `json:"doc"`
		Ops    []transform.Op  `json:"ops"`
		Schema string          `json:"schema"`
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&req); err != nil {
		return nil, &transformFailure{-1, fmt.Errorf("invalid request: %v", err)}
	}
	if req.Doc == nil {
		return nil, &transformFailure{-1, errors.New(`invalid request: no "doc"`)}
	}
	schema, err := reg.Get(req.Schema)
	if err != nil {
		return nil, &transformFailure{-1, fmt.Errorf("invalid request: %v", err)}
	}
	doc, err := schema.NodeFromJSON(req.Doc)
	if err != nil {
		return nil, &transformFailure{-1, fmt.Errorf("invalid doc: %v", err)}
	}
	if doc.Content.Size() > apply.DefaultMaxDocSize {
		return nil, &transformFailure{-1, fmt.Errorf("invalid doc: larger than %d positions", apply.DefaultMaxDocSize)}
	}
	// Ops run one at a time so that the document size limit stops ops
	// that duplicate content (a replace from after to) before a few of
	// them grow the document without bound.
	tr := transform.New(doc)
	for i, op := range req.Ops {
		if err := tr.Apply(op); err != nil {
			return nil, &transformFailure{i, err}
		}
		if tr.Doc.Content.Size() > apply.DefaultMaxDocSize {
			return nil, &transformFailure{i, fmt.Errorf("the document grew larger than %d positions", apply.DefaultMaxDocSize)}
		}
	}
	buf = append(buf, `{"doc":`...)
	buf = tr.Doc.AppendJSON(buf)
	buf = append(buf, `,"steps":[`...)
	for i, s := range tr.Steps {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = s.AppendJSON(buf)
	}
	return append(buf, "]}"...), nil
}
