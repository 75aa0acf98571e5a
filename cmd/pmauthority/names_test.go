package main

import (
	"bytes"
	"errors"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// settingRE matches the settings that the libraries' errors name, as
// server's names.go does.
var settingRE = regexp.MustCompile(`\((?:[a-z]+\.)?(?:Limits|Config)\.[A-Za-z]+\)`)

// librarySettings returns the settings named in the string literals of
// the library packages' code (not their tests), each with where it is.
func librarySettings(t *testing.T) map[string]string {
	t.Helper()
	settings := map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range []string{"collab", "server", "auth", "apply", "webhook"} {
		paths, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
				}
				for _, m := range settingRE.FindAllString(s, -1) {
					settings[m[1:len(m)-1]] = fset.Position(lit.Pos()).String()
				}
				return true
			})
		}
		if len(paths) == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
	}
	return settings
}

// TestSettingNames: every setting that an error of the libraries names
// is named by a flag that serve -h lists, so that no answer names a
// setting that the binary does not let one set.
func TestSettingNames(t *testing.T) {
	var usage bytes.Buffer
	if _, err := parseServeFlags([]string{"-h"}, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("serve -h: %v", err)
	}
	f, err := parseServeFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	settings := librarySettings(t)
	if len(settings) < 10 {
		t.Fatalf("%d settings named in the libraries' strings, want many: %v", len(settings), settings)
	}
	for setting, where := range settings {
		name := f.settingNames[setting]
		flagName, ok := strings.CutPrefix(name, "serve --")
		if !ok {
			t.Errorf("%s names %s, which serve names %q, want a flag", where, setting, name)
			continue
		}
		if !strings.Contains(usage.String(), "\n  -"+flagName+" ") && !strings.Contains(usage.String(), "\n  -"+flagName+"\n") {
			t.Errorf("%s names %s, which serve names %q, a flag serve -h does not list", where, setting, name)
		}
	}
	// Flags found by the fields they write to.
	for setting, want := range map[string]string{
		"Limits.MaxConns":         "serve --max-conns",          // server.Limits
		"Limits.MaxCheckpoints":   "serve --max-checkpoints",    // collab.Limits
		"Limits.MaxSteps":         "serve --max-steps",          // apply.Limits in collab.Limits
		"Limits.MaxClientStorage": "serve --max-client-storage", // a sizeFlag
		"Limits.MaxChangesDiff":   "serve --max-changes-diff",   // an int64
		"Config.AllowOrigins":     "serve --allow-origin",       // server.Config, a stringsFlag
		"Config.History":          "serve --history",            // collab.Config
	} {
		if got := f.settingNames[setting]; got != want {
			t.Errorf("%s is named %q, want %q", setting, got, want)
		}
	}
}

// TestServeSettingName: serve's answers name the flag of the setting an
// error names.
func TestServeSettingName(t *testing.T) {
	addr, _, stop := startServe(t, "--store", "memory", "--allowed-host", "pma.example.com")
	r, _ := http.NewRequest("GET", "http://"+addr+"/docs", nil)
	r.Host = "evil.example"
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 421 || !strings.Contains(string(body), "(Config.AllowedHosts, serve --allowed-host)") {
		t.Errorf("Host evil.example: %d %s, want 421 naming serve --allowed-host", resp.StatusCode, body)
	}
	if code := stop(); code != 0 {
		t.Fatalf("serve exited with %d", code)
	}
}
