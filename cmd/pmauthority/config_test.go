package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/internal/testutil"
)

// writeConfig writes a --config file and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pmauthority.conf")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServeConfigSources: every flag also comes from PMA_<FLAG> and from
// the --config file, the command line winning over the environment,
// which wins over the file.
func TestServeConfigSources(t *testing.T) {
	file := writeConfig(t, `# a comment
max-steps 7   # the steps of a request
max-memory 2GiB
allow-origin a.example.com
allow-origin b.example.com
strict

`)
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		steps int
	}{
		{"file", nil, []string{"--config", file}, 7},
		{"env over file", map[string]string{"PMA_MAX_STEPS": "8"}, []string{"--config", file}, 8},
		{"flag over env and file", map[string]string{"PMA_MAX_STEPS": "8"}, []string{"--config", file, "--max-steps", "9"}, 9},
		{"file from env", map[string]string{"PMA_CONFIG": file}, nil, 7},
		{"env alone", map[string]string{"PMA_MAX_STEPS": "8"}, nil, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var stderr testutil.LogBuffer
			f, err := parseServeFlags(tc.args, &stderr)
			if err != nil {
				t.Fatalf("%v: %s", err, &stderr)
			}
			if f.collab.MaxSteps != tc.steps {
				t.Errorf("--max-steps %d, want %d", f.collab.MaxSteps, tc.steps)
			}
			if tc.name == "env alone" {
				return
			}
			if f.maxMemory != 2<<30 || !f.collab.Strict || !slices.Equal(f.server.AllowOrigins, []string{"a.example.com", "b.example.com"}) {
				t.Errorf("from the file: --max-memory %d, --strict %v, --allow-origin %q", f.maxMemory, f.collab.Strict, f.server.AllowOrigins)
			}
		})
	}
}

// TestServeConfigPostgresURL: PMA_POSTGRES_URL, the variable serve has
// always read, is the environment variable of --postgres-url like any
// other: the flag wins over it.
func TestServeConfigPostgresURL(t *testing.T) {
	t.Setenv("PMA_POSTGRES_URL", "postgres:///from-env")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", "postgres"}, "postgres:///from-env"},
		{[]string{"--store", "postgres", "--postgres-url", "postgres:///from-flag"}, "postgres:///from-flag"},
	} {
		f, err := parseServeFlags(tc.args, &testutil.LogBuffer{})
		if err != nil || f.postgres.url != tc.want {
			t.Errorf("%q: --postgres-url %q (%v), want %q", tc.args, f.postgres.url, err, tc.want)
		}
	}
}

// TestServeConfigErrors: a name in the file that is no flag, a bad value
// from the file or from the environment, and a missing file are errors
// that name the flag and where its value came from; nothing is served.
func TestServeConfigErrors(t *testing.T) {
	unknown := writeConfig(t, "max-steps 7\nmax-memroy 1GiB\n\nfoo 1\nconfig-file x\n")
	badValue := writeConfig(t, "max-steps 7\nmax-memory lots\n")
	nested := writeConfig(t, "config other.conf\n")
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want []string
	}{
		{nil, []string{"--config", unknown}, []string{"--config " + unknown + ": no such flags: ",
			`line 2: "max-memroy" (did you mean --max-memory?)`, `line 4: "foo", line 5: "config-file"`}},
		{nil, []string{"--config", badValue}, []string{"--config " + badValue + `: line 2: --max-memory: want a size in bytes such as 8388608 or 8MiB, not "lots"`}},
		{nil, []string{"--config", nested}, []string{"line 1: a config file cannot name another"}},
		{nil, []string{"--config", "/nonexistent/pma.conf"}, []string{"--config: open /nonexistent/pma.conf: no such file or directory"}},
		{map[string]string{"PMA_MAX_MEMORY": "lots"}, nil, []string{`"max-memory"`, `"PMA_MAX_MEMORY"`, `not "lots"`}},
		{map[string]string{"PMA_DRAIN_DELAY": "soon"}, []string{"--config", badValue}, []string{`"drain-delay"`, `"PMA_DRAIN_DELAY"`}},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		var stderr testutil.LogBuffer
		code := serve(context.Background(), append([]string{"--addr", "127.0.0.1:0", "--store", "memory"}, tc.args...), &stderr, func(string) {
			t.Errorf("%q: served", tc.args)
		})
		for _, w := range tc.want {
			if code != 2 || !strings.Contains(stderr.String(), w) {
				t.Errorf("%v %q: exit %d, want 2; stderr lacks %q:\n%s", tc.env, tc.args, code, w, &stderr)
			}
		}
		for k := range tc.env {
			os.Unsetenv(k)
		}
	}
}

// TestServeShortUsage: a mistyped flag gets the error, the flags it is
// close to and where the others are, not the list of every flag.
func TestServeShortUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mxa-memory", "1GiB"}, "pmauthority serve: flag provided but not defined: -mxa-memory\ndid you mean --max-memory?\nrun pmauthority serve -h for all flags\n"},
		{[]string{"--max_memory=1GiB"}, "pmauthority serve: flag provided but not defined: -max_memory\ndid you mean --max-memory?\nrun pmauthority serve -h for all flags\n"},
		{[]string{"--drain"}, "pmauthority serve: flag provided but not defined: -drain\ndid you mean --drain-delay or --drain-timeout?\nrun pmauthority serve -h for all flags\n"},
		{[]string{"--zzzzzzzz"}, "pmauthority serve: flag provided but not defined: -zzzzzzzz\nrun pmauthority serve -h for all flags\n"},
		{[]string{"--max-memory", "lots"}, "pmauthority serve: invalid value \"lots\" for flag -max-memory: want a size in bytes such as 8388608 or 8MiB, not \"lots\"\nrun pmauthority serve -h for all flags\n"},
		{[]string{"--addr"}, "pmauthority serve: flag needs an argument: -addr\nrun pmauthority serve -h for all flags\n"},
	} {
		var stderr testutil.LogBuffer
		if code := serve(context.Background(), tc.args, &stderr, nil); code != 2 || stderr.String() != tc.want {
			t.Errorf("serve %q: exit %d, want 2; printed\n%s\nwant\n%s", tc.args, code, &stderr, tc.want)
		}
	}
}

// TestUnknownEnv: PMA_ variables of no flag are found, with the closest
// flags' variables; the tests' own are not.
func TestUnknownEnv(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.String("max-memory", "", "")
	fs.String("max-steps", "", "")
	got := unknownEnv(fs, []string{"PMA_MAX_MEMROY=1", "PMA_MAX_MEMORY=2", "PMA_TRACES=x", "PMA_NOTHING_LIKE_IT=1", "HOME=/root"})
	want := []string{"PMA_MAX_MEMROY (did you mean PMA_MAX_MEMORY?)", "PMA_NOTHING_LIKE_IT"}
	if !slices.Equal(got, want) {
		t.Errorf("unknownEnv: %q, want %q", got, want)
	}
}

// TestServeDrainDelayLoopback: on a loopback --addr there is no drain
// delay unless one is given, on the command line, in the environment or
// in the file; elsewhere it is 5 s by default.
func TestServeDrainDelayLoopback(t *testing.T) {
	file := writeConfig(t, "drain-delay 2s\n")
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want time.Duration
	}{
		{nil, []string{"--addr", "127.0.0.1:8080"}, 0},
		{nil, []string{"--addr", "localhost:8080"}, 0},
		{nil, []string{"--addr", "[::1]:8080"}, 0},
		{nil, []string{"--addr", "127.0.0.1:8080", "--drain-delay", "2s"}, 2 * time.Second},
		{map[string]string{"PMA_DRAIN_DELAY": "2s"}, []string{"--addr", "127.0.0.1:8080"}, 2 * time.Second},
		{nil, []string{"--addr", "127.0.0.1:8080", "--config", file}, 2 * time.Second},
		{nil, []string{"--addr", "0.0.0.0:8080", "--insecure-no-auth"}, 5 * time.Second},
		{map[string]string{"PMA_ADDR": "0.0.0.0:8080", "PMA_INSECURE_NO_AUTH": "true"}, nil, 5 * time.Second},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		f, err := parseServeFlags(tc.args, &testutil.LogBuffer{})
		if err != nil || f.server.DrainDelay != tc.want {
			t.Errorf("%v %q: --drain-delay %v (%v), want %v", tc.env, tc.args, f.server.DrainDelay, err, tc.want)
		}
		for k := range tc.env {
			os.Unsetenv(k)
		}
	}
	// The drain of a server on a loopback address without --drain-delay
	// says it waits for nothing.
	ctx, cancel := context.WithCancel(context.Background())
	var stderr testutil.LogBuffer
	code := serve(ctx, []string{"--addr", "127.0.0.1:0", "--store", "memory", "--log-format", "json"}, &stderr, func(string) { cancel() })
	if code != 0 || !strings.Contains(stderr.String(), `"msg":"draining: /readyz answers 503","drain_delay":0`) {
		t.Errorf("exit %d; the log lacks a draining line with no delay:\n%s", code, &stderr)
	}
}
