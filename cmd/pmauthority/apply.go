package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/pmauthority/pmauthority/apply"
)

// maxLine bounds one --jsonl request line (and a single request).
const maxLine = 64 << 20

func runApply(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	fs.SetOutput(stderr)
	schema := fs.String("schema", "basic", "schema: a built-in name (basic, suggest, text) or the path of a JSON spec file")
	jsonl := fs.Bool("jsonl", false, "read one request per line and write one answer per line until EOF")
	strict := fs.Bool("strict", false, "also check the document and the result against the schema as Node.check() does")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: pmauthority apply [--schema NAME|FILE] [--jsonl] [--strict]

Reads {"doc": …, "steps": […]} on stdin and writes {"doc": …}; on failure
writes {"error": {"step": i, "message": "…"}} and exits 1 (step -1: the
request or its document is invalid). With --jsonl, answers every line in
order and exits 0. A request may name its own "schema" and ask for
"positions" to be mapped (answer adds "mapped", "mappedFlags", "inverted").`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	reg := &apply.Schemas{Default: *schema, Files: true}
	if _, err := reg.Get(""); err != nil {
		fmt.Fprintln(stderr, "pmauthority apply:", err)
		return 2
	}
	// No step limit here; the document size limit keeps a few steps that
	// duplicate content (from > to) from growing a document without bound.
	app := &apply.Applier{
		Schemas:   reg,
		Limits:    apply.Limits{MaxDocSize: apply.DefaultMaxDocSize},
		Positions: true,
		Strict:    *strict,
	}
	return serveRequests("apply", *jsonl, stdin, stdout, stderr, func(buf, data []byte) ([]byte, bool) {
		return answer(app, buf, data)
	})
}

// serveRequests reads one request from stdin, or with jsonl one per line
// until EOF, and writes the answers answer appends to its buffer, one per
// line. It returns the exit code: 1 when the single request failed, 0
// once every line is answered, 2 for unreadable input (cmd names the
// command in messages).
func serveRequests(cmd string, jsonl bool, stdin io.Reader, stdout, stderr io.Writer,
	answer func(buf, data []byte) ([]byte, bool)) int {
	out := bufio.NewWriterSize(stdout, 256<<10)
	defer out.Flush()
	if !jsonl {
		data, err := io.ReadAll(io.LimitReader(stdin, maxLine+1))
		if err != nil {
			fmt.Fprintf(stderr, "pmauthority %s: reading stdin: %v\n", cmd, err)
			return 2
		}
		if len(data) > maxLine {
			fmt.Fprintf(stderr, "pmauthority %s: request larger than %d bytes\n", cmd, maxLine)
			return 2
		}
		buf, failed := answer(nil, data)
		out.Write(buf)
		out.WriteByte('\n')
		if failed {
			return 1
		}
		return 0
	}
	// Answers are buffered while more input is already waiting and flushed
	// as soon as it is not, so that a client sending one line at a time and
	// waiting for each answer never deadlocks.
	in := bufio.NewReaderSize(stdin, 1<<20)
	var buf, long []byte
	for {
		line, err := in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				if len(long) > maxLine {
					fmt.Fprintf(stderr, "pmauthority %s: request line longer than %d bytes\n", cmd, maxLine)
					return 2
				}
				line, err = in.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && err != io.EOF {
			fmt.Fprintf(stderr, "pmauthority %s: reading stdin: %v\n", cmd, err)
			return 2
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			buf, _ = answer(buf[:0], line)
			buf = append(buf, '\n')
			if _, werr := out.Write(buf); werr != nil {
				return 2
			}
		}
		if err == io.EOF {
			return 0
		}
		if in.Buffered() == 0 {
			if ferr := out.Flush(); ferr != nil {
				return 2
			}
		}
	}
}

// answer appends the answer to one request to buf: {"doc": …} or the
// error, and reports whether it is an error.
func answer(app *apply.Applier, buf, data []byte) ([]byte, bool) {
	out, _, err := app.Apply(context.Background(), buf, data)
	var f *apply.Failure
	if errors.As(err, &f) {
		return f.AppendJSON(buf), true
	}
	return out, false
}
