package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"time"

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
	url := fs.String("url", "", "send the edits to the document at `URL` (http://HOST:PORT/docs/ID) instead")
	tokenFile := fs.String("token-file", "", "with --url: send the bearer token in `FILE` (else $PMA_TOKEN, if set)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: pmauthority edit [--schema NAME|FILE]
       pmauthority edit --url http://HOST:PORT/docs/ID [--token-file FILE]

Reads {"doc": …, "edits": […]} on stdin, makes the edits of the edit API
(docs/edits.md; their targets found in doc) and writes {"doc": …,
"steps": […]}; on failure writes {"error": {"edit": i, "message": "…"}}
and exits 1 (edit -1: the request or its document is invalid).

With --url, reads {"base": V, "edits": […], "name"?} on stdin, sends it
to the server's POST /docs/ID/edits and writes its answer ({"version",
"steps"}, or the server's error); exits 1 when the server refuses it
(the status is on stderr).`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "pmauthority edit: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *url != "" {
		return editRemote(*url, *tokenFile, stdin, stdout, stderr)
	}
	if *tokenFile != "" {
		fmt.Fprintln(stderr, "pmauthority edit: --token-file needs --url")
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

// editRemote sends the edit request on stdin to the document at url (its
// POST …/edits) and writes the answer.
func editRemote(url, tokenFile string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "pmauthority edit: "+format+"\n", args...)
		return 2
	}
	u, err := neturl.Parse(url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.HasPrefix(u.Path, "/") {
		return fail("--url %q: want http://HOST:PORT/docs/ID", url)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fail("--url %q: want no query or fragment", url)
	}
	token := os.Getenv("PMA_TOKEN")
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return fail("--token-file: %v", err)
		}
		token = strings.TrimSpace(string(b))
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxLine+1))
	if err != nil {
		return fail("reading stdin: %v", err)
	}
	if len(data) > maxLine {
		return fail("request larger than %d bytes", maxLine)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimSuffix(u.String(), "/")+"/edits", bytes.NewReader(data))
	if err != nil {
		return fail("%v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fail("%v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxLine+1))
	if err != nil {
		return fail("reading the answer: %v", err)
	}
	stdout.Write(bytes.TrimRight(body, "\n"))
	fmt.Fprintln(stdout)
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "pmauthority edit: %s answered %s\n", req.URL, resp.Status)
		return 1
	}
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
