package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/export"
)

const importUsage = `usage: pmauthority import [--schema NAME|FILE] [--max-bytes N] [--max-depth N] < FILE.md

Reads CommonMark on stdin and writes {"doc": …}: the document that
prosemirror-markdown's MarkdownParser (markdown-it's commonmark preset,
html off, defaultMarkdownParser's tokens) makes of it with the schema
--schema (a built-in name or a spec file; default basic). Exits 1 when
the Markdown cannot be imported (over a limit, or a schema without the
node types it needs), 2 for bad arguments.`

func runImport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	schema := fs.String("schema", "basic", "schema: a built-in `name` (basic, suggest, text) or the path of a JSON spec file")
	maxBytes := fs.Int("max-bytes", export.DefaultMaxMarkdownBytes, "the largest Markdown accepted, in `bytes`")
	maxDepth := fs.Int("max-depth", export.DefaultMaxMarkdownDepth, "the deepest nesting of blockquotes and lists accepted")
	fs.Usage = func() {
		fmt.Fprintln(stderr, importUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "pmauthority import:", err)
		return code
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return 2
	}
	if *maxBytes <= 0 || *maxDepth <= 0 {
		return fail(2, errors.New("--max-bytes and --max-depth must be positive"))
	}
	reg := &apply.Schemas{Default: *schema, Files: true}
	s, err := reg.Get("")
	if err != nil {
		return fail(2, err)
	}
	src, err := io.ReadAll(io.LimitReader(stdin, int64(*maxBytes)+1))
	if err != nil {
		return fail(1, fmt.Errorf("reading stdin: %w", err))
	}
	p := &export.MarkdownParser{Schema: s, MaxBytes: *maxBytes, MaxDepth: *maxDepth}
	doc, err := p.Parse(src)
	if err != nil {
		return fail(1, err)
	}
	out := append([]byte(`{"doc":`), doc.AppendJSON(nil)...)
	out = append(out, "}\n"...)
	if _, err := stdout.Write(out); err != nil {
		return fail(1, err)
	}
	return 0
}
