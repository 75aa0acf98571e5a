package main

import (
	"bytes"
	"io"
	"net/http"
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

// TestEditRemote checks `pmauthority edit --url`: the request goes to the
// server's POST /docs/{id}/edits with the token of --token-file, and the
// answer comes back, exit 1 with the status when the server refuses it.
func TestEditRemote(t *testing.T) {
	dir := t.TempDir()
	secret := dir + "/jwt.key"
	if err := os.WriteFile(secret, []byte("the secret of TestEditRemote, 32 bytes or more\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, _, _ := startServe(t, "--data", dir, "--jwt-secret-file", secret)
	var tok bytes.Buffer
	if code := runToken([]string{"--secret-file", secret, "--sub", "bot", "--doc", "*=edit"}, &tok, io.Discard); code != 0 {
		t.Fatalf("pmauthority token: exit %d", code)
	}
	tokenFile := dir + "/token"
	if err := os.WriteFile(tokenFile, tok.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", "http://"+addr+"/docs", strings.NewReader(`{"id":"remote","doc":{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Ship it on Friday."}]}]}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(tok.String()))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /docs: %s", resp.Status)
	}
	doc := "http://" + addr + "/docs/remote"
	bold := `{"base":0,"name":"Bot","edits":[{"op":"addMark","target":{"text":{"find":"Friday"}},"mark":{"type":"strong"}}]}`
	for _, tc := range []struct {
		args        []string
		stdin       string
		code        int
		out, stderr string
	}{
		{[]string{"--url", doc, "--token-file", tokenFile}, bold, 0, `{"version":1,"steps":1}` + "\n", ""},
		{[]string{"--url", doc + "/", "--token-file", tokenFile}, `{"base":0,"edits":[{"op":"replaceText","target":{"text":{"find":"Monday"}},"text":"x"}]}`, 1,
			`{"error":{"message":"edit 0 (replaceText): text \"Monday\" not found"}}` + "\n", "422 Unprocessable Entity"},
		{[]string{"--url", doc}, bold, 1, "", "401 Unauthorized"},
		{[]string{"--url", "ftp://" + addr + "/docs/remote"}, bold, 2, "", "want http://HOST:PORT/docs/ID"},
		{[]string{"--url", doc + "?x=1"}, bold, 2, "", "no query"},
		{[]string{"--token-file", tokenFile}, bold, 2, "", "--token-file needs --url"},
		{[]string{"--url", doc, "extra"}, bold, 2, "", `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"edit"}, tc.args...), strings.NewReader(tc.stdin), &stdout, &stderr)
		out := stdout.String()
		if tc.code == 1 && tc.out == "" {
			out = "" // the server's 401 body is not this test's business
		}
		if code != tc.code || out != tc.out || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("edit %q:\nexit %d, want %d\nstdout %s\nwant   %s\nstderr %s (want %q)", tc.args, code, tc.code, &stdout, tc.out, &stderr, tc.stderr)
		}
	}
}
