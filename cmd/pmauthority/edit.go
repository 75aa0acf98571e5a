package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/edit"
	"github.com/pmauthority/pmauthority/export"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

func runEdit(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("edit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	schema := fs.String("schema", "basic", "schema: a built-in name (basic, suggest, text) or the path of a JSON spec file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: pmauthority edit [--schema NAME|FILE]

Reads {"doc": …, "edits": […]} on stdin, makes the edits of the edit API
(docs/edits.md; their targets found in doc) and writes {"doc": …,
"steps": […]}; on failure writes {"error": {"edit": i, "message": "…"}}
and exits 1 (edit -1: the request or its document is invalid).`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	reg := &apply.Schemas{Default: *schema, Files: true}
	sc, err := reg.Get("")
	if err != nil {
		fmt.Fprintln(stderr, "pmauthority edit:", err)
		return 2
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxLine+1))
	if err != nil {
		fmt.Fprintln(stderr, "pmauthority edit: reading stdin:", err)
		return 2
	}
	if len(data) > maxLine {
		fmt.Fprintf(stderr, "pmauthority edit: request larger than %d bytes\n", maxLine)
		return 2
	}
	out, err := editDoc(sc, data)
	if err != nil {
		stdout.Write(appendEditError(nil, err))
		fmt.Fprintln(stdout)
		return 1
	}
	stdout.Write(out)
	fmt.Fprintln(stdout)
	return 0
}

// editDoc makes the edits of the request data on its document, of schema
// sc, and returns {"doc", "steps"}.
func editDoc(sc *model.Schema, data []byte) ([]byte, error) {
	var req struct {
		Doc   json.RawMessage `json:"doc"`
		Edits json.RawMessage `json:"edits"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("%w: %v", edit.ErrInvalid, err)
	}
	if len(req.Doc) == 0 {
		return nil, fmt.Errorf("%w: doc is missing", edit.ErrInvalid)
	}
	doc, err := sc.NodeFromJSON(req.Doc)
	if err != nil {
		return nil, fmt.Errorf("%w: doc: %v", edit.ErrInvalid, err)
	}
	if len(req.Edits) == 0 {
		return nil, fmt.Errorf("%w: edits is missing or empty", edit.ErrInvalid)
	}
	body := append(append([]byte(`{"base":0,"edits":`), req.Edits...), '}')
	r, err := edit.Parse(body)
	if err != nil {
		return nil, err
	}
	plan, err := edit.Prepare(doc, r, markdownIn)
	if err != nil {
		return nil, err
	}
	tr := transform.New(doc)
	if err := plan.Make(tr); err != nil {
		return nil, err
	}
	buf := append([]byte(`{"doc":`), tr.Doc.AppendJSON(nil)...)
	buf = append(buf, `,"steps":[`...)
	for i, s := range tr.Steps {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = s.AppendJSON(buf)
	}
	return append(buf, "]}"...), nil
}

// appendEditError appends {"error": {"edit": i, "message"}} for err.
func appendEditError(buf []byte, err error) []byte {
	i := -1
	var te *edit.TargetError
	if errors.As(err, &te) {
		i = te.Edit
	}
	buf = append(buf, `{"error":{"edit":`...)
	buf = fmt.Appendf(buf, "%d", i)
	buf = append(buf, `,"message":`...)
	buf = model.AppendJSONString(buf, err.Error())
	return append(buf, "}}"...)
}

// markdownIn parses the Markdown of an insert, as pmauthority import
// does.
func markdownIn(s *model.Schema, src string) (*model.Node, error) {
	return export.ParseMarkdown(s, []byte(src))
}
