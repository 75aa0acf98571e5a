package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

const exportDocJSON = `{"type":"doc","content":[{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"T"}]},{"type":"paragraph","content":[{"type":"text","text":"a "},{"type":"text","marks":[{"type":"strong"}],"text":"b*"}]}]}`

func TestExportFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "doc.json")
	os.WriteFile(file, []byte(exportDocJSON), 0o644)
	wrapped := filepath.Join(dir, "answer.json")
	os.WriteFile(wrapped, []byte(`{"doc":`+exportDocJSON+`}`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", file}, "T\n\na b*"},
		{[]string{"export", "--format", "markdown", file}, "# T\n\na **b\\***"},
		{[]string{"export", "--format", "html", "--schema", "basic", wrapped}, "<h1>T</h1><p>a <strong>b*</strong></p>"},
		{[]string{"export", "--format", "html", "--schema", "../../conformance/schemas/basic-dom.json", file}, "<h1>T</h1><p>a <strong>b*</strong></p>"},
	} {
		code, out, errs := runCmd(t, tc.args...)
		if code != 0 || out != tc.want {
			t.Errorf("%v: %d %q %s, want %q", tc.args, code, out, errs, tc.want)
		}
	}
}

func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "doc.json")
	os.WriteFile(file, []byte(exportDocJSON), 0o644)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"type":"doc","content":[{"type":"nope"}]}`), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"export", "--format", "pdf", file}, 2, `unknown export format "pdf"`},
		{[]string{"export"}, 2, "usage: pmauthority export"},
		{[]string{"export", "--data", dir}, 2, "--data DIR and --doc ID go together"},
		{[]string{"export", "--data", dir, "--doc", "d", file}, 2, "--data DIR and --doc ID go together"},
		{[]string{"export", "--schema", "nope", file}, 2, "nope"},
		{[]string{"export", bad}, 1, "nope"},
		{[]string{"export", filepath.Join(dir, "missing.json")}, 1, "no such file"},
		{[]string{"export", "--data", filepath.Join(dir, "empty"), "--doc", "d"}, 1, "no store in"},
	} {
		code, out, errs := runCmd(t, tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: %d %q %q, want %d and %q", tc.args, code, out, errs, tc.code, tc.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "empty")); !os.IsNotExist(err) {
		t.Errorf("export created the data directory: %v", err)
	}
}

// A document of a store, with a schema given as --schema NAME=FILE, at
// its current version; the store does not change.
func TestExportStored(t *testing.T) {
	dir := t.TempDir()
	specFile := "../../conformance/schemas/basic-dom.json"
	spec, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	custom, err := model.LoadSchema(spec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pmauthority.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := collab.New(collab.Config{Store: st, Schemas: func(name string) (*model.Schema, bool) {
		if name == "custom" {
			return custom, true
		}
		s, err := schemas.Get(name)
		return s, err == nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	initial, err := custom.NodeFromJSON([]byte(exportDocJSON))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Create(ctx, "d", "custom", initial); err != nil {
		t.Fatal(err)
	}
	step := `{"stepType":"replace","from":2,"to":2,"slice":{"content":[{"type":"text","text":"!"}]}}`
	if _, err := auth.Submit(ctx, "d", "", collab.Submission{Version: 0, Steps: [][]byte{[]byte(step)}, ClientID: collab.ClientID("1")}); err != nil {
		t.Fatal(err)
	}
	auth.Close()
	// A step after the latest snapshot, which a read-write Authority
	// would snapshot at its Close.
	more := `{"stepType":"replace","from":2,"to":2,"slice":{"content":[{"type":"text","text":"?"}]}}`
	if err := st.Append(ctx, "d", 1, []store.Step{{Version: 2, JSON: []byte(more), ClientID: []byte("1"), Time: time.Now()}}, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	before := storeHead(t, path)

	code, out, errs := runCmd(t, "export", "--format", "markdown", "--schema", "custom="+specFile, "--data", dir, "--doc", "d")
	if want := "# T?!\n\na **b\\***"; code != 0 || out != want {
		t.Errorf("export: %d %q %s, want %q", code, out, errs, want)
	}
	code, _, errs = runCmd(t, "export", "--data", dir, "--doc", "d")
	if code != 1 || !strings.Contains(errs, "custom") {
		t.Errorf("export without the schema: %d %s", code, errs)
	}
	code, _, errs = runCmd(t, "export", "--data", dir, "--doc", "other")
	if code != 1 || !strings.Contains(errs, `document "other": document not found`) {
		t.Errorf("export of a missing document: %d %s", code, errs)
	}
	if after := storeHead(t, path); after != before {
		t.Errorf("the store changed:\n%s\n%s", before, after)
	}
}

// storeHead describes document d of the store at path.
func storeHead(t *testing.T, path string) string {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := st.Load(context.Background(), "d")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%+v", h)
}
