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
// goes unchecked. docs/edits.md's curl examples, and its `pmauthority
// edit --url` one after them, run the same way on a server of their own.
func TestREADMECurl(t *testing.T) {
	for file, least := range map[string]int{"../../README.md": 4, "../../docs/edits.md": 8} {
		addr, _, _ := startServe(t, "--data", t.TempDir())
		if ran := runExamples(t, file, addr); ran < least {
			t.Errorf("ran %d examples of %s, want %d or more", ran, file, least)
		}
	}
}

// runExamples runs the curl and `pmauthority edit --url` examples of the
// Markdown file in order against the server at addr, in place of
// 127.0.0.1:8080, compares each answer with the line after the command,
// and returns how many ran.
func runExamples(t *testing.T, file, addr string) int {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(text), "\n")
	ran := 0
	for i := 0; i < len(lines); i++ {
		curl := strings.HasPrefix(lines[i], "    curl ")
		echo := strings.HasPrefix(lines[i], "    echo '") && i+1 < len(lines) && strings.Contains(lines[i+1], "| pmauthority edit --url ")
		if !curl && !echo {
			continue
		}
		start := i
		cmd := strings.TrimSpace(lines[i])
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, `\`) + " " + strings.TrimSpace(lines[i])
		}
		if i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "    {") {
			t.Fatalf("%s line %d: no answer on the line after the example: %s", file, start+1, cmd)
		}
		want := strings.TrimSpace(lines[i+1])
		var got string
		if curl {
			m := curlExample.FindStringSubmatch(cmd)
			if m == nil {
				t.Fatalf("%s line %d: not a curl example of the form this test runs: %s", file, start+1, cmd)
			}
			resp, err := http.Post("http://"+addr+m[2], "application/json", strings.NewReader(m[1]))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got = strings.TrimSpace(string(body))
		} else {
			m := editExample.FindStringSubmatch(cmd)
			if m == nil {
				t.Fatalf("%s line %d: not a pmauthority edit --url example of the form this test runs: %s", file, start+1, cmd)
			}
			var stdout, stderr strings.Builder
			run([]string{"edit", "--url", "http://" + addr + m[2]}, strings.NewReader(m[1]), &stdout, &stderr)
			got = strings.TrimSpace(stdout.String())
		}
		if got != want {
			t.Errorf("%s line %d: answers\n%s\nwant\n%s", file, start+1, got, want)
		}
		ran++
	}
	return ran
}

// editExample is `echo 'BODY' | pmauthority edit --url
// http://127.0.0.1:8080PATH` once the continuation line is joined.
var editExample = regexp.MustCompile(`^echo '([^']*)' +\| pmauthority edit --url http://127\.0\.0\.1:8080(/\S*)$`)

// TestREADMEProduction starts serve with the README's production example
// (its continuation line joined), the test's own paths and free ports in
// place of /var/lib/pmauthority, /etc/pmauthority/jwt.key, 8080 and 9090
// and no drain delay, nothing else changed: the server starts; by the
// allowed host a request without a token is 401 and one with a token of
// `pmauthority token` (signed with that secret) reads the document; by IP
// a document is 421 and the probe 200; the metrics answer on their
// address.
func TestREADMEProduction(t *testing.T) {
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(text), "\n")
	var line string
	for i, l := range lines {
		if strings.HasPrefix(l, "    pmauthority serve --addr") {
			line = strings.TrimSpace(l)
			for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
				i++
				line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
			}
			break
		}
	}
	if line == "" {
		t.Fatal("README.md: no production example (a line starting with \"    pmauthority serve --addr\")")
	}
	dir := t.TempDir()
	secret := dir + "/jwt.key"
	if err := os.WriteFile(secret, []byte("a secret of the README's production example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	metrics := "127.0.0.1:" + freePort(t)
	for old, repl := range map[string]string{
		"--addr 127.0.0.1:8080":                      "--addr 127.0.0.1:0",
		"--data /var/lib/pmauthority":                "--data " + dir,
		"--jwt-secret-file /etc/pmauthority/jwt.key": "--jwt-secret-file " + secret,
		"--metrics-addr 127.0.0.1:9090":              "--metrics-addr " + metrics,
		"--drain-delay 10s":                          "--drain-delay 0",
	} {
		if !strings.Contains(line, old) {
			t.Fatalf("README.md's production example has no %q (the test puts its own value there): %s", old, line)
		}
		line = strings.Replace(line, old, repl, 1)
	}
	addr, _, _ := startServe(t, strings.Fields(strings.TrimPrefix(line, "pmauthority serve "))...)

	var tok strings.Builder
	if code := runToken([]string{"--secret-file", secret, "--sub", "ops", "--doc", "*=edit"}, &tok, io.Discard); code != 0 {
		t.Fatalf("pmauthority token: exit %d", code)
	}
	get := func(url, host, token string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		req.Host = host
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		url, host, token string
		want             int
	}{
		{"http://" + addr + "/docs/prod", "docs.example.com", "", http.StatusUnauthorized},
		{"http://" + addr + "/docs/prod", "docs.example.com", strings.TrimSpace(tok.String()), http.StatusOK},
		{"http://" + addr + "/docs/prod", addr, strings.TrimSpace(tok.String()), http.StatusMisdirectedRequest},
		{"http://" + addr + "/readyz", addr, "", http.StatusOK},
		{"http://" + metrics + "/metrics", metrics, "", http.StatusOK},
	} {
		if got := get(c.url, c.host, c.token); got != c.want {
			t.Errorf("GET %s (Host %s, token %v): %d, want %d", c.url, c.host, c.token != "", got, c.want)
		}
	}
}
