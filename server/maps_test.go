package server

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/docid"
)

// The maps of the code that are written by hand (this package's doc,
// docs/api.md, the README's layout table) are held here to what they
// describe, so that a route, a file or a folder added or removed without
// them fails a test that says what to write.

// tableRoutes returns the route table of a server with every part on
// (Config.Collab and Config.Web), as "METHOD PATTERN" → action.
func tableRoutes(t *testing.T) map[string]Action {
	e := newCollab(t, Config{Web: teapot}, collab.Config{})
	out := map[string]Action{}
	for _, rt := range e.s.Routes() {
		out[rt.Method+" "+rt.Pattern] = rt.Action
	}
	return out
}

// compareRoutes reports the differences between the routes that the map
// named where lists and the route table, in both directions.
func compareRoutes(t *testing.T, where string, listed, table map[string]Action) {
	t.Helper()
	for _, k := range sortedKeys(table) {
		a, ok := listed[k]
		switch {
		case !ok:
			t.Errorf("%s does not list the route %s (action %s) of server/routes.go: add it", where, k, table[k])
		case a != table[k]:
			t.Errorf("%s gives %s the action %q, server/routes.go %q: correct it", where, k, a, table[k])
		}
	}
	for _, k := range sortedKeys(listed) {
		if _, ok := table[k]; !ok {
			t.Errorf("%s lists %s, which server/routes.go does not have: remove it (or add the route)", where, k)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// packageDoc returns this package's doc comment as text, split into its
// sections by heading ("" for the text before the first one).
func packageDoc(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("doc.go has no package doc")
	}
	sections := map[string]string{}
	heading := ""
	for line := range strings.Lines(f.Doc.Text()) {
		if h, ok := strings.CutPrefix(line, "# "); ok {
			heading = strings.TrimSpace(h)
			continue
		}
		sections[heading] += line
	}
	return sections
}

var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// docRoutes reads the route lists of the package doc's "Routes" section:
// code lines "METHOD… PATTERN ACTION description"; code lines that do
// not start with a method continue the line before.
func docRoutes(t *testing.T, section string) map[string]Action {
	t.Helper()
	out := map[string]Action{}
	for line := range strings.Lines(section) {
		if !strings.HasPrefix(line, "\t") {
			continue
		}
		fields := strings.Fields(line)
		n := 0
		for n < len(fields) && slices.Contains(httpMethods, fields[n]) {
			n++
		}
		if n == 0 {
			continue
		}
		if n+2 > len(fields) || !strings.HasPrefix(fields[n], "/") {
			t.Errorf("doc.go: route line %q is not METHOD… PATTERN ACTION description", strings.TrimSpace(line))
			continue
		}
		for _, m := range fields[:n] {
			out[m+" "+fields[n]] = Action(fields[n+1])
		}
	}
	return out
}

func TestPackageDocRoutes(t *testing.T) {
	doc := packageDoc(t)
	section, ok := doc["Routes"]
	if !ok {
		t.Fatal(`doc.go has no "# Routes" section`)
	}
	compareRoutes(t, "doc.go (# Routes)", docRoutes(t, section), tableRoutes(t))
}

// codeSpan is a Markdown code span.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// routeMention matches a code span that names a route: methods, then a
// path.
var routeMention = regexp.MustCompile(`^((?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)(?:, ?(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS))*) (/\S*)`)

// routePattern returns the route table's pattern for a path as the docs
// write it: without its query, and "/" for "/{$}".
func routePattern(path string) string {
	path, _, _ = strings.Cut(path, "?")
	if path == "/" {
		return "/{$}"
	}
	return path
}

// tableCells returns the cells of a Markdown table row, with "\|" kept
// as "|" inside them; ok is false for a line that is not a row.
func tableCells(line string) (cells []string, ok bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") {
		return nil, false
	}
	line = strings.ReplaceAll(line, `\|`, "\x00")
	for c := range strings.SplitSeq(strings.Trim(line, "|"), "|") {
		cells = append(cells, strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|")))
	}
	return cells, true
}

// markdownTable returns the rows of the first table after the heading
// (a whole line, such as "## Routes") in the Markdown file path, without
// its header and separator rows.
func markdownTable(t *testing.T, path, heading string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	seen, inTable := false, false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !seen {
			seen = line == heading
			continue
		}
		cells, ok := tableCells(line)
		if !ok {
			if inTable {
				break
			}
			if strings.HasPrefix(line, "#") {
				break // the next section, without a table
			}
			continue
		}
		if !inTable { // the header row, then the separator
			inTable = true
			sc.Scan()
			continue
		}
		rows = append(rows, cells)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no table after %q", path, heading)
	}
	return rows
}

// TestAPIRoutes holds docs/api.md's table of routes to the route table.
// Its first column names routes as code spans "METHOD[, METHOD] PATH"
// (a path alone takes the methods of the span before it), its second
// starts with the action.
func TestAPIRoutes(t *testing.T) {
	const path = "../docs/api.md"
	listed := map[string]Action{}
	for _, row := range markdownTable(t, path, "## Routes") {
		if len(row) < 2 {
			t.Errorf("%s: route row %q has no action", path, row)
			continue
		}
		action := Action(regexp.MustCompile(`^[a-z]*`).FindString(row[1]))
		var methods []string
		for _, m := range codeSpan.FindAllStringSubmatch(row[0], -1) {
			span := m[1]
			if sub := routeMention.FindStringSubmatch(span); sub != nil {
				methods = strings.Split(strings.ReplaceAll(sub[1], " ", ""), ",")
				span = sub[2]
			}
			if methods == nil || !strings.HasPrefix(span, "/") {
				t.Errorf("%s: %q in the routes table is not METHOD PATH", path, m[1])
				continue
			}
			for _, method := range methods {
				listed[method+" "+routePattern(strings.Fields(span)[0])] = action
			}
		}
	}
	compareRoutes(t, "docs/api.md (## Routes)", listed, tableRoutes(t))
}

// metricsPaths are the paths of serve --metrics-addr, a listener of its
// own that the docs name beside the routes.
var metricsPaths = []string{"/metrics", "/debug/pprof/"}

// TestRouteMentions checks that every route that the repository's
// Markdown files name in a code span ("GET /docs/{id}/steps?from=V") is
// a route of the table, with that method. bench/, a module of its own
// with servers of its own, is left out.
func TestRouteMentions(t *testing.T) {
	table := tableRoutes(t)
	var files []string
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || path == "../bench"):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".md"):
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mentions := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
				sub := routeMention.FindStringSubmatch(m[1])
				if sub == nil {
					continue
				}
				mentions++
				pattern := routePattern(sub[2])
				if slices.Contains(metricsPaths, pattern) {
					continue
				}
				for method := range strings.SplitSeq(strings.ReplaceAll(sub[1], " ", ""), ",") {
					if _, ok := table[method+" "+pattern]; !ok {
						t.Errorf("%s:%d: %q names %s %s, which server/routes.go does not have", strings.TrimPrefix(file, "../"), i+1, m[1], method, pattern)
					}
				}
			}
		}
	}
	if mentions < 20 {
		t.Errorf("found %d route mentions in %d files: routeMention no longer matches how the docs write routes", mentions, len(files))
	}
}

// TestPackageDocFiles holds the package doc's "Files" section to the
// package's source files, in both directions.
func TestPackageDocFiles(t *testing.T) {
	section, ok := packageDoc(t)["Files"]
	if !ok {
		t.Fatal(`doc.go has no "# Files" section`)
	}
	named := map[string]bool{}
	for _, f := range regexp.MustCompile(`\b[a-z0-9_]+\.go\b`).FindAllString(section, -1) {
		named[f] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "doc.go" {
			continue
		}
		if !named[f] {
			t.Errorf("doc.go (# Files) does not name %s: add it, with what it holds", f)
		}
		delete(named, f)
	}
	for _, f := range sortedKeys(named) {
		t.Errorf("doc.go (# Files) names %s, which is not a file of the package: remove it", f)
	}
}

// TestDocIDRule checks that the package doc and docs/api.md state the
// length that internal/docid allows.
func TestDocIDRule(t *testing.T) {
	want := fmt.Sprintf("1 to %d bytes", docid.MaxBytes)
	doc := strings.Join(strings.Fields(packageDoc(t)["Routes"]), " ")
	if !strings.Contains(doc, "A document id is what internal/docid accepts: "+want) {
		t.Errorf("doc.go (# Routes) does not say that a document id is what internal/docid accepts: %s …", want)
	}
	b, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "A document id is any name of "+want) {
		t.Errorf("docs/api.md does not say that a document id is any name of %s …", want)
	}
}

// TestREADMELayout holds the README's layout table to the repository's
// folders: each top-level folder has a row, each row's folder exists,
// each file a row names (`hooks.go`, `docs/export.md`) exists in its
// folder or the repository, and the rows of internal/ and docs/ name
// each of their packages and documents.
func TestREADMELayout(t *testing.T) {
	const root = ".."
	rows := markdownTable(t, root+"/README.md", "## Layout")
	listed := map[string]bool{} // top-level folders
	for _, row := range rows {
		spans := codeSpan.FindAllStringSubmatch(row[0], -1)
		if len(spans) != 1 || !strings.HasSuffix(spans[0][1], "/") {
			t.Errorf("README.md layout row %q: its path is not one `folder/`", row[0])
			continue
		}
		dir := spans[0][1]
		if fi, err := os.Stat(filepath.Join(root, dir)); err != nil || !fi.IsDir() {
			t.Errorf("README.md layout lists %s, which is not a folder of the repository: remove its row", dir)
		}
		listed[strings.SplitN(dir, "/", 2)[0]] = true
		what := strings.Join(row[1:], " ")
		for _, m := range codeSpan.FindAllStringSubmatch(what, -1) {
			name := m[1]
			if !regexp.MustCompile(`^[\w./-]+\.(go|md|mjs|json)$`).MatchString(name) || strings.Contains(name, "*") {
				continue
			}
			if !exists(filepath.Join(root, dir, name)) && !exists(filepath.Join(root, name)) {
				t.Errorf("README.md layout row %s names %s, which is in neither %s nor the repository's root: correct it", dir, name, dir)
			}
		}
		var all []string
		switch dir {
		case "internal/":
			all = subfolders(t, filepath.Join(root, dir))
		case "docs/":
			all, _ = filepath.Glob(filepath.Join(root, dir, "*.md"))
		}
		for _, name := range all {
			name = filepath.Base(name)
			if !strings.Contains(what, "`"+name+"`") {
				t.Errorf("README.md layout row %s does not name %s: add it", dir, name)
			}
		}
	}
	ignored := gitignoredFolders(t, root)
	for _, dir := range subfolders(t, root) {
		if strings.HasPrefix(dir, ".") || ignored[dir] {
			continue
		}
		if !listed[dir] {
			t.Errorf("README.md layout has no row for the folder %s/: add one saying what it holds", dir)
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// subfolders returns the names of the folders in dir.
func subfolders(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// gitignoredFolders returns the top-level names that root's .gitignore
// leaves out ("/dist/", "node_modules"): what serve or a build writes in
// a checkout, which the layout does not describe.
func gitignoredFolders(t *testing.T, root string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	b, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		if os.IsNotExist(err) {
			return out
		}
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		name := strings.Trim(strings.TrimSpace(line), "/")
		if name != "" && !strings.ContainsAny(name, "/*!#") {
			out[name] = true
		}
	}
	return out
}
