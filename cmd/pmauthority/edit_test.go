package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestEditCommand checks `pmauthority edit` (the edits themselves are
// tested in package edit).
func TestEditCommand(t *testing.T) {
	doc := `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Ship it on Friday."}]}]}`
	for _, tc := range []struct {
		args       []string
		stdin      string
		code       int
		out, error string
	}{
		{nil, `{"doc":` + doc + `,"edits":[{"op":"replaceText","target":{"text":{"find":"Friday"}},"text":"Monday"}]}`, 0,
			`{"doc":{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Ship it on Monday."}]}]},"steps":[{"stepType":"replace","from":12,"to":18,"slice":{"content":[{"type":"text","text":"Monday"}]}}]}` + "\n", ""},
		{nil, `{"doc":` + doc + `,"edits":[{"op":"deleteBlock","target":{"block":{"path":[3]}}}]}`, 1,
			`{"error":{"edit":0,"message":"edit 0 (deleteBlock): path [3]: no child 3 at depth 1 (it has 1)"}}` + "\n", ""},
		{nil, `{"doc":` + doc + `}`, 1, `{"error":{"edit":-1,"message":"invalid edit request: edits is missing or empty"}}` + "\n", ""},
		{nil, `{"edits":[]}`, 1, `{"error":{"edit":-1,"message":"invalid edit request: doc is missing"}}` + "\n", ""},
		{nil, `{"doc":{"type":"nope"},"edits":[]}`, 1, `{"error":{"edit":-1,"message":"invalid edit request: doc: Unknown node type: nope (at type)"}}` + "\n", ""},
		{[]string{"--schema", "nope"}, ``, 2, "", "neither a built-in"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"edit"}, tc.args...), strings.NewReader(tc.stdin), &stdout, &stderr)
		if code != tc.code || stdout.String() != tc.out || !strings.Contains(stderr.String(), tc.error) {
			t.Errorf("edit %q < %s:\nexit %d, want %d\nstdout %s\nwant   %s\nstderr %s", tc.args, tc.stdin, code, tc.code, &stdout, tc.out, &stderr)
		}
	}
}

// TestEditDocExample runs the example of docs/edits.md ("From the
// command line") and compares its output.
func TestEditDocExample(t *testing.T) {
	text, err := os.ReadFile("../../docs/edits.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(text), "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, "    echo '") || i+2 >= len(lines) || strings.TrimSpace(lines[i+1]) != "| go run ./cmd/pmauthority edit" {
			continue
		}
		stdin := strings.TrimSuffix(strings.TrimPrefix(line, "    echo '"), "' \\")
		var stdout, stderr bytes.Buffer
		if code := run([]string{"edit"}, strings.NewReader(stdin), &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s%s", code, &stdout, &stderr)
		}
		if got, want := strings.TrimSpace(stdout.String()), strings.TrimSpace(lines[i+2]); got != want {
			t.Errorf("docs/edits.md line %d:\ngot  %s\nwant %s", i+1, got, want)
		}
		return
	}
	t.Fatal("docs/edits.md has no pmauthority edit example")
}
