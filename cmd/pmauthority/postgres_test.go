package main

import (
	"os"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestServePostgres runs two servers on one PostgreSQL database, one
// given the URL by flag and one by PMA_POSTGRES_URL: a step accepted by
// one reaches a poll waiting on the other, and a step made on the version
// the other server has moved on from answers 409.
func TestServePostgres(t *testing.T) {
	url := pgtest.URL(t)
	args := []string{"--store", "postgres", "--poll-timeout", "30s", "--idle-unload", "0"}
	a, stderrA, stopA := startServe(t, append(args, "--postgres-url", url)...)
	t.Setenv("PMA_POSTGRES_URL", url)
	b, _, _ := startServe(t, args...)
	do := func(addr, method, path, body string) (int, string) {
		t.Helper()
		return httpDo(t, addr, method, path, body)
	}
	expect := func(addr, method, path, body string, status int, want string) {
		t.Helper()
		if s, got := do(addr, method, path, body); s != status || got != want {
			t.Fatalf("%s %s on %s: %d %s\nwant %d %s", method, path, addr, s, got, status, want)
		}
	}
	step := func(text string) string {
		return `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"` + text + `"}]}}`
	}
	expect(a, "POST", "/docs/x/events", `{"version":0,"steps":[`+step("a")+`],"clientID":1}`, 200, `{"version":1,"commentVersion":0}`)
	// b loads the document from the database.
	expect(b, "GET", "/docs/x/events?version=0&commentVersion=0", "", 200,
		`{"version":1,"commentVersion":0,"steps":[`+step("a")+`],"clientIDs":[1],"comment":[],"users":1}`)
	// A poll waiting on b hears a's next step through the notices.
	polled := make(chan string, 1)
	go func() {
		_, got := do(b, "GET", "/docs/x/events?version=1&commentVersion=0", "")
		polled <- got
	}()
	expect(a, "POST", "/docs/x/events", `{"version":1,"steps":[`+step("b")+`],"clientID":1}`, 200, `{"version":2,"commentVersion":0}`)
	if got, want := <-polled, `"steps":[`+step("b")+`]`; !strings.Contains(got, want) {
		t.Errorf("the poll on the other server answered %s, want %s", got, want)
	}
	// b is at version 2 now, whatever a client of b saw: version 1 is stale.
	expect(b, "POST", "/docs/x/events", `{"version":1,"steps":[`+step("c")+`],"clientID":2}`, 409, `{"error":{"message":"Version not current"}}`)
	if code := stopA(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderrA)
	}
	if want := `msg="store opened" store=postgres database="database \"`; !strings.Contains(stderrA.String(), want) {
		t.Errorf("log lacks %s:\n%s", want, stderrA)
	}
}
