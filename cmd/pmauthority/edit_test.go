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

// TestDocExamples runs the command examples of docs/edits.md and
// docs/transform.md (an echo of the request piped into go run
// ./cmd/pmauthority COMMAND, the output on the next line) and compares
// their output.
func TestDocExamples(t *testing.T) {
	for file, command := range map[string]string{"edits.md": "edit", "transform.md": "transform"} {
		text, err := os.ReadFile("../../docs/" + file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(text), "\n")
		ran := 0
		for i, line := range lines {
			if !strings.HasPrefix(line, "    echo '") || i+2 >= len(lines) || strings.TrimSpace(lines[i+1]) != "| go run ./cmd/pmauthority "+command {
				continue
			}
			stdin := strings.TrimSuffix(strings.TrimPrefix(line, "    echo '"), "' \\")
			want := strings.TrimSpace(lines[i+2])
			var stdout, stderr bytes.Buffer
			code := run([]string{command}, strings.NewReader(stdin), &stdout, &stderr)
			if wantCode := map[bool]int{true: 1, false: 0}[strings.HasPrefix(want, `{"error"`)]; code != wantCode {
				t.Errorf("docs/%s line %d: exit %d, want %d: %s%s", file, i+1, code, wantCode, &stdout, &stderr)
			}
			if got := strings.TrimSpace(stdout.String()); got != want {
				t.Errorf("docs/%s line %d:\ngot  %s\nwant %s", file, i+1, got, want)
			}
			ran++
		}
		if ran == 0 {
			t.Errorf("docs/%s has no pmauthority %s example", file, command)
		}
	}
}
