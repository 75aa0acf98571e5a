package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestTransformCommand checks `pmauthority transform` (the ops themselves
// are tested in package transform and against the JS in conformance).
func TestTransformCommand(t *testing.T) {
	const doc = `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"hello"}]}]}`
	const split = `{"doc":{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"he"}]},{"type":"paragraph","content":[{"type":"text","text":"llo"}]}]},` +
		`"steps":[{"stepType":"replace","from":3,"to":3,"slice":{"content":[{"type":"paragraph"},{"type":"paragraph"}],"openStart":1,"openEnd":1},"structure":true}]}`
	for _, tc := range []struct {
		args       []string
		stdin      string
		code       int
		out, error string
	}{
		{nil, `{"doc":` + doc + `,"ops":[{"op":"split","args":[3]}]}`, 0, split + "\n", ""},
		{nil, `{"doc":` + doc + `,"ops":[]}`, 0, `{"doc":` + doc + `,"steps":[]}` + "\n", ""},
		{nil, `{"doc":` + doc + `,"ops":[{"op":"split","args":[3]},{"op":"delete","args":[1,99]}]}`, 1,
			`{"error":{"op":1,"message":"Position 99 out of range"}}` + "\n", ""},
		{nil, `{"doc":` + doc + `,"ops":[{"op":"split","args":["3"]}]}`, 1,
			`{"error":{"op":0,"message":"split argument 0: want an integer, got a string"}}` + "\n", ""},
		{nil, `{"doc":` + doc + `,"ops":[{"op":"setBlockType","args":[1,1,"blockquote"]}]}`, 1,
			`{"error":{"op":0,"message":"Type given to setBlockType should be a textblock"}}` + "\n", ""},
		{nil, `{"doc":{"type":"nope"},"ops":[]}`, 1, `{"error":{"op":-1,"message":"invalid doc: Unknown node type: nope (at type)"}}` + "\n", ""},
		{nil, `{"ops":[]}`, 1, `{"error":{"op":-1,"message":"invalid request: no \"doc\""}}` + "\n", ""},
		{nil, `{"doc":` + doc + `,"steps":[]}`, 1, `{"error":{"op":-1,"message":"invalid request: json: unknown field \"steps\""}}` + "\n", ""},
		{[]string{"--jsonl"}, `{"doc":` + doc + `,"ops":[{"op":"split","args":[3]}]}` + "\n\n" + `{"doc":5}` + "\n" +
			`{"schema":"text","doc":{"type":"doc","content":[{"type":"text","text":"ab"}]},"ops":[{"op":"insert","args":[1,{"type":"text","text":"x"}]}]}` + "\n", 0,
			split + "\n" +
				`{"error":{"op":-1,"message":"invalid doc: Unknown node type: undefined"}}` + "\n" +
				`{"doc":{"type":"doc","content":[{"type":"text","text":"axb"}]},"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"x"}]}}]}` + "\n", ""},
		{[]string{"--schema", "nope"}, ``, 2, "", "neither a built-in"},
	} {
		var stdout, stderr bytes.Buffer
		code := runTransform(tc.args, strings.NewReader(tc.stdin), &stdout, &stderr)
		if code != tc.code || stdout.String() != tc.out || !strings.Contains(stderr.String(), tc.error) {
			t.Errorf("transform %q < %s:\nexit %d, want %d\nstdout %s\nwant   %s\nstderr %s", tc.args, tc.stdin, code, tc.code, &stdout, tc.out, &stderr)
		}
	}
}

// TestTransformRegistered checks that the command is in the binary's
// command list and usage.
func TestTransformRegistered(t *testing.T) {
	var stdout bytes.Buffer
	if code := run([]string{"transform", "--jsonl"}, strings.NewReader(""), &stdout, io.Discard); code != 0 {
		t.Fatalf("run transform: exit %d", code)
	}
	if code := run([]string{"help"}, nil, &stdout, io.Discard); code != 0 || !strings.Contains(stdout.String(), "\n  transform ") {
		t.Fatalf("usage does not list transform:\n%s", &stdout)
	}
}
