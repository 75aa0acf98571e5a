package main

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/apply/reqtest"
)

// TestApplyCommand checks the behaviour DESIGN.md gives `pmauthority
// apply` (the details of requests are tested in package apply).
func TestApplyCommand(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		stdin      string
		code       int
		out, error string
	}{
		{[]string{"--schema", "text"}, reqtest.Seed, 0, reqtest.SeedAnswer + "\n", ""},
		{[]string{"--schema", "text"}, `{"doc":{"type":"doc"},"steps":[{"stepType":"replace","from":3,"to":3}]}`, 1,
			`{"error":{"step":0,"message":"Position 3 out of range"}}` + "\n", ""},
		{nil, `{"doc":{"type":"nope"}}`, 1, `{"error":{"step":-1,"message":"invalid doc: Unknown node type: nope (at type)"}}` + "\n", ""},
		{[]string{"--schema", "text", "--jsonl"}, reqtest.Seed + "\n\n" + `{"doc":5}` + "\n" + `{"schema":"basic","doc":{"type":"doc","content":[{"type":"paragraph"}]},"positions":[1]}` + "\n", 0,
			reqtest.SeedAnswer + "\n" +
				`{"error":{"step":-1,"message":"invalid request: \"doc\" must be an object, not a number"}}` + "\n" +
				`{"doc":{"type":"doc","content":[{"type":"paragraph"}]},"mapped":[[1,-1,1,false],[1,1,1,false]],"mappedFlags":[[false,false,false],[false,false,false]],"inverted":[]}` + "\n", ""},
		{[]string{"--schema", "nope"}, ``, 2, "", "neither a built-in"},
		// Node.fromJSON does not check content; --strict does.
		{nil, `{"doc":{"type":"doc","content":[{"type":"text","text":"x"}]}}`, 0,
			`{"doc":{"type":"doc","content":[{"type":"text","text":"x"}]}}` + "\n", ""},
		{[]string{"--strict"}, `{"doc":{"type":"doc","content":[{"type":"text","text":"x"}]}}`, 1,
			`{"error":{"step":-1,"message":"invalid doc: Invalid content for node doc: <\"x\">"}}` + "\n", ""},
	} {
		var stdout, stderr bytes.Buffer
		code := runApply(tc.args, strings.NewReader(tc.stdin), &stdout, &stderr)
		if code != tc.code || stdout.String() != tc.out || !strings.Contains(stderr.String(), tc.error) {
			t.Errorf("apply %q < %s:\nexit %d, want %d\nstdout %s\nwant   %s\nstderr %s", tc.args, tc.stdin, code, tc.code, &stdout, tc.out, &stderr)
		}
	}
}

// TestApplyJSONLAnswersEachLine checks that --jsonl answers a line before
// the next one is sent (a client waiting for each answer must not deadlock).
func TestApplyJSONLAnswersEachLine(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"apply", "--jsonl", "--schema", "text"}, inR, outW, io.Discard)
		outW.Close()
	}()
	answers := bufio.NewReader(outR)
	for i := 0; i < 3; i++ {
		if _, err := io.WriteString(inW, `{"doc":{"type":"doc"},"steps":[]}`+"\n"); err != nil {
			t.Fatal(err)
		}
		got, err := answers.ReadString('\n')
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		if want := `{"doc":{"type":"doc"}}` + "\n"; got != want {
			t.Fatalf("answer %d = %q, want %q", i, got, want)
		}
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d", code)
	}
}
