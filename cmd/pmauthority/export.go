package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/export"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

const exportUsage = `usage: pmauthority export [--format text|markdown|html] [--schema NAME|FILE] FILE.json
       pmauthority export [--format text|markdown|html] [--schema NAME=FILE]… --data DIR --doc ID

Writes a document as plain text, Markdown or HTML on stdout (what
GET /docs/{id}/export answers). The document is either a JSON file (a
document, or an answer {"doc": …} of pmauthority apply), read with the
schema --schema (a built-in name or a spec file; default basic), or
document ID of the SQLite store in DIR (the --data of serve), at its
current version, with the schema it was created with: a built-in, or one
given as --schema NAME=FILE as to serve. The store is only read.
Exits 1 when the document cannot be exported, 2 for bad arguments.`

func runExport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "`format`: text, markdown or html")
	data := fs.String("data", "", "`directory` of a SQLite store (serve --data) to read document --doc from")
	docID := fs.String("doc", "", "`id` of the document to export from --data")
	var schemaArgs stringsFlag
	fs.Var(&schemaArgs, "schema", "the schema of FILE.json: a built-in `name` (basic, suggest, text) or a spec file (default basic); with --data, NAME=FILE for a document schema that is not built in (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, exportUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "pmauthority export:", err)
		return code
	}
	f, err := export.ParseFormat(*format)
	if err != nil {
		return fail(2, err)
	}
	var doc *model.Node
	switch {
	case *data != "" || *docID != "":
		if *data == "" || *docID == "" || fs.NArg() != 0 {
			return fail(2, errors.New("--data DIR and --doc ID go together, without a FILE.json"))
		}
		named := schemaFlags{}
		for _, s := range schemaArgs {
			if err := named.Set(s); err != nil {
				return fail(2, fmt.Errorf("--schema: %w", err))
			}
		}
		doc, err = storedDoc(*data, *docID, named.schemas)
		if err != nil {
			return fail(1, err)
		}
	case fs.NArg() == 1:
		if len(schemaArgs) > 1 {
			return fail(2, errors.New("--schema names one schema for FILE.json"))
		}
		name := "basic"
		if len(schemaArgs) == 1 {
			name = schemaArgs[0]
		}
		reg := &apply.Schemas{Default: name, Files: true}
		schema, err := reg.Get("")
		if err != nil {
			return fail(2, err)
		}
		if doc, err = fileDoc(fs.Arg(0), schema); err != nil {
			return fail(1, err)
		}
	default:
		fs.Usage()
		return 2
	}
	out, err := export.Export(doc, f)
	if err != nil {
		return fail(1, err)
	}
	if _, err := io.WriteString(stdout, out); err != nil {
		return fail(1, err)
	}
	return 0
}

// fileDoc reads a document from a JSON file: the document itself, or an
// object whose "doc" is the document.
func fileDoc(path string, schema *model.Schema) (*model.Node, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := model.ParseJSONValue(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if obj, ok := v.(model.JSONObject); ok {
		for _, p := range obj {
			if p.Key == "doc" {
				data = model.AppendJSONValue(nil, p.Value)
			}
		}
	}
	doc, err := schema.NodeFromJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// storedDoc returns document id of the SQLite store in dir at its current
// version, rebuilt by an Authority exactly as serve rebuilds it, over a
// store that refuses every write.
func storedDoc(dir, id string, named map[string]*model.Schema) (*model.Node, error) {
	path := filepath.Join(dir, "pmauthority.db")
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no store in %s: %w", dir, err)
	}
	st, err := sqlite.Open(path, sqlite.Options{Reserve: -1}) // it only reads
	if err != nil {
		return nil, err
	}
	defer st.Close()
	auth, err := collab.New(collab.Config{
		Store: readOnlyStore{st},
		Schemas: func(name string) (*model.Schema, bool) {
			if s := named[name]; s != nil {
				return s, true
			}
			s, err := schemas.Get(name)
			return s, err == nil
		},
		IdleUnload: -1,
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, err
	}
	defer auth.Close()
	ctx := context.Background()
	ok, err := auth.Exists(ctx, id)
	if err == nil && !ok {
		err = fmt.Errorf("document %q: %w", id, collab.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	state, err := auth.Get(ctx, id, "")
	if err != nil {
		return nil, err
	}
	return state.Doc, nil
}

// readOnlyStore is a store whose writes all fail (an export reads).
type readOnlyStore struct{ store.Store }

var errReadOnly = errors.New("the store is opened read-only")

func (readOnlyStore) Create(context.Context, string, string, []byte, []byte) error {
	return errReadOnly
}

func (readOnlyStore) Append(context.Context, string, int64, []store.Step, []byte) error {
	return errReadOnly
}

func (readOnlyStore) SaveSnapshot(context.Context, string, store.Snapshot, int64) error {
	return errReadOnly
}

func (readOnlyStore) Delete(context.Context, string) error { return errReadOnly }
