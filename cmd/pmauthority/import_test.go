package main

import (
	"bytes"
	"strings"
	"testing"
)

// runCmdInput is runCmd with stdin.
func runCmdInput(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestImport(t *testing.T) {
	for _, tc := range []struct {
		args []string
		in   string
		want string
	}{
		{[]string{"import"}, "# T\n\na **b**\n",
			`{"doc":{"type":"doc","content":[{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"T"}]},{"type":"paragraph","content":[{"type":"text","text":"a "},{"type":"text","marks":[{"type":"strong"}],"text":"b"}]}]}}` + "\n"},
		{[]string{"import", "--schema", "../../conformance/schemas/markdown.json"}, "- [x](javascript:y) <b>\n",
			`{"doc":{"type":"doc","content":[{"type":"bullet_list","attrs":{"tight":true},"content":[{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","text":"[x](javascript:y) <b>"}]}]}]}]}}` + "\n"},
		{[]string{"import"}, "", `{"doc":{"type":"doc","content":[{"type":"paragraph"}]}}` + "\n"},
	} {
		code, out, errs := runCmdInput(t, tc.in, tc.args...)
		if code != 0 || out != tc.want {
			t.Errorf("%v %q: %d %s %s, want %s", tc.args, tc.in, code, out, errs, tc.want)
		}
	}
}

func TestImportErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		in   string
		code int
		msg  string
	}{
		{[]string{"import", "--schema", "text"}, "a", 1, "Unknown node type: blockquote"},
		{[]string{"import", "--schema", "nope"}, "a", 2, "nope"},
		{[]string{"import", "--max-bytes", "3"}, "abcd", 1, "more than 3"},
		{[]string{"import", "--max-depth", "5"}, strings.Repeat(">", 6) + " a", 1, "nested more than 5 deep"},
		{[]string{"import", "--max-depth", "0"}, "a", 2, "must be positive"},
		{[]string{"import", "x.md"}, "", 2, "usage: pmauthority import"},
	} {
		code, out, errs := runCmdInput(t, tc.in, tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: %d %q %q, want %d and %q", tc.args, code, out, errs, tc.code, tc.msg)
		}
	}
}
