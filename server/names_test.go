package server

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
)

// flagNames names a few settings as a binary's flags do.
func flagNames(setting string) string {
	return map[string]string{
		"Limits.MaxConns":              "serve --max-conns",
		"Limits.MaxHTTPConns":          "serve --max-http-conns",
		"Limits.MaxWSMessages":         "serve --max-ws-messages",
		"Config.AllowedHosts":          "serve --allowed-host",
		"auth.Config.WebhookMaxCalls":  "serve --auth-webhook-max-calls",
		"Limits.MaxCheckpoints":        "serve --max-checkpoints",
		"collab.Limits.MaxDocStorage":  "serve --max-doc-storage",
		"Limits.MaxClientDocuments":    "serve --max-client-documents",
		"Limits.MaxDocMemory":          "serve --max-memory",
		"Config.SettingNameIsNotNamed": "",
	}[setting]
}

func TestNameSettings(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{"", ""},
		{"document not found", "document not found"},
		{"too many connections: the server holds its limit of 3 (Limits.MaxConns)",
			"too many connections: the server holds its limit of 3 (Limits.MaxConns, serve --max-conns)"},
		{"checkpoints (Limits.MaxCheckpoints) over the limit: 2 > 1",
			"checkpoints (Limits.MaxCheckpoints, serve --max-checkpoints) over the limit: 2 > 1"},
		{"auth webhook busy (auth.Config.WebhookMaxCalls): try again later",
			"auth webhook busy (auth.Config.WebhookMaxCalls, serve --auth-webhook-max-calls): try again later"},
		{"(collab.Limits.MaxDocStorage)", "(collab.Limits.MaxDocStorage, serve --max-doc-storage)"},
		// Several names, each named.
		{"(Limits.MaxDocMemory) and (Limits.MaxClientDocuments)",
			"(Limits.MaxDocMemory, serve --max-memory) and (Limits.MaxClientDocuments, serve --max-client-documents)"},
		// Unknown names, and those named "", stay as they are.
		{"over (Limits.MaxUnknown)", "over (Limits.MaxUnknown)"},
		{"(Config.SettingNameIsNotNamed)", "(Config.SettingNameIsNotNamed)"},
		// Not a setting: another type, no parentheses, more in them.
		{"(Timeouts.Read)", "(Timeouts.Read)"},
		{"Limits.MaxConns is 3", "Limits.MaxConns is 3"},
		{"(Limits.MaxConns, serve --max-conns)", "(Limits.MaxConns, serve --max-conns)"},
		{"(see Limits.MaxConns)", "(see Limits.MaxConns)"},
	} {
		if got := nameSettings(tc.msg, flagNames); got != tc.want {
			t.Errorf("nameSettings(%q) = %q, want %q", tc.msg, got, tc.want)
		}
		if got := nameSettings(tc.msg, nil); got != tc.msg {
			t.Errorf("nameSettings(%q, nil) = %q, want it unchanged", tc.msg, got)
		}
	}
}

// TestSettingNameHTTP: an HTTP error answer names its setting as
// Config.SettingName does (the WebSocket errors and the refused
// connections: TestWSMessageRate and TestHTTPConnsRefuse).
func TestSettingNameHTTP(t *testing.T) {
	e := newCollab(t, Config{AllowedHosts: []string{"pma.example.com"}, SettingName: flagNames}, collab.Config{})
	r := httptest.NewRequest("GET", "/docs/d", nil)
	r.Host = "example.com"
	w := httptest.NewRecorder()
	e.s.ServeHTTP(w, r)
	if w.Code != 421 || !strings.Contains(w.Body.String(), "(Config.AllowedHosts, serve --allowed-host)") {
		t.Fatalf("Host example.com: %d %s, want 421 naming serve --allowed-host", w.Code, w.Body)
	}
}
