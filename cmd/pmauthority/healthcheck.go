package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const healthcheckUsage = `usage: pmauthority healthcheck [--url URL] [--timeout D]

GETs URL, a running server's /healthz, and exits 0 when it answers 200,
1 otherwise (no answer, another status), with the reason on stderr: the
HEALTHCHECK of the container image (Dockerfile), whose empty base has no
curl. Proxy environment variables are ignored.

flags:
`

// runHealthcheck runs `pmauthority healthcheck`.
func runHealthcheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var target string
	var timeout time.Duration
	fs.StringVar(&target, "url", "http://127.0.0.1:8080/healthz", "the `URL` to GET (http or https)")
	fs.DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	fs.Usage = func() {
		fmt.Fprint(stderr, healthcheckUsage)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "pmauthority healthcheck: --url %q: want an http:// or https:// URL such as http://127.0.0.1:8080/healthz\n", target)
		return 2
	}
	if timeout <= 0 {
		fmt.Fprintln(stderr, "pmauthority healthcheck: --timeout must be positive")
		return 2
	}
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Get(target)
	if err != nil {
		fmt.Fprintln(stderr, "pmauthority healthcheck:", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "pmauthority healthcheck: %s answered %s: %s\n", target, resp.Status, strings.TrimSpace(string(body)))
		return 1
	}
	fmt.Fprintf(stdout, "%s: %s\n", target, resp.Status)
	return 0
}
