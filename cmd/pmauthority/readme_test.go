package main

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

// curlExample is `curl -s -H 'Content-Type: application/json' -d 'BODY'
// http://127.0.0.1:8080PATH`, the form of the README's curl examples once
// their continuation lines are joined.
var curlExample = regexp.MustCompile(`^curl -s -H 'Content-Type: application/json' +-d '([^']*)' +http://127\.0\.0\.1:8080(/\S*)$`)

// TestREADMECurl runs the README's curl examples, in order, as pasted
// against `serve` on its embedded default (here on a free port and a
// temporary --data), and compares each answer with the line after the
// command. A curl line of another form fails the test, so that no example
// goes unchecked.
func TestREADMECurl(t *testing.T) {
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	addr, _, _ := startServe(t, "--data", t.TempDir())
	lines := strings.Split(string(text), "\n")
	ran := 0
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "    curl ") {
			continue
		}
		start := i
		cmd := strings.TrimSpace(lines[i])
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, `\`) + " " + strings.TrimSpace(lines[i])
		}
		m := curlExample.FindStringSubmatch(cmd)
		if m == nil || i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "    {") {
			t.Fatalf("README.md line %d: not a curl example of the form this test runs, followed by its answer: %s", start+1, cmd)
		}
		resp, err := http.Post("http://"+addr+m[2], "application/json", strings.NewReader(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got, want := strings.TrimSpace(string(body)), strings.TrimSpace(lines[i+1]); got != want {
			t.Errorf("README.md line %d: POST %s answers %d\n%s\nwant\n%s", start+1, m[2], resp.StatusCode, got, want)
		}
		ran++
	}
	if ran < 4 {
		t.Fatalf("ran %d curl examples of README.md, want 4 or more", ran)
	}
}
