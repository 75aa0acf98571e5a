package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// TestRequestLog checks the access log lines in both formats: each
// carries its request id (the client's sane X-Request-Id, else a new
// one, echoed in the answer either way) and the route's document id.
func TestRequestLog(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			logs := &logBuffer{}
			var h slog.Handler = slog.NewTextHandler(logs, nil)
			if format == "json" {
				h = slog.NewJSONHandler(logs, nil)
			}
			e := newCollab(t, Config{Logger: slog.New(h), LogRequests: true}, collab.Config{})
			do := func(target, requestID string) string {
				r := httptest.NewRequest("GET", target, nil)
				if requestID != "" {
					r.Header.Set("X-Request-Id", requestID)
				}
				w := httptest.NewRecorder()
				e.s.ServeHTTP(w, r)
				if w.Code != 200 {
					t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
				}
				got := w.Header().Get("X-Request-Id")
				if got == "" {
					t.Fatalf("GET %s: no X-Request-Id in the answer", target)
				}
				return got
			}
			own := do("/docs/notes-1", "req-42.a:b/c+d=e@f_g")
			if own != "req-42.a:b/c+d=e@f_g" {
				t.Errorf("a sane X-Request-Id is answered %q", own)
			}
			genA := do("/docs/notes-2", "has space")
			genB := do("/docs", strings.Repeat("x", maxRequestID+1))
			genC := do("/healthz", "")
			if genA == genB || genB == genC || strings.Contains(genA, " ") || len(genB) > maxRequestID {
				t.Errorf("generated ids %q %q %q: want distinct new ones", genA, genB, genC)
			}
			type line struct{ path, requestID, doc string }
			var got []line
			for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				if format == "json" {
					var m map[string]any
					if err := json.Unmarshal([]byte(l), &m); err != nil {
						t.Fatalf("not JSON: %s", l)
					}
					if m["msg"] != "request" {
						continue
					}
					doc, _ := m["doc"].(string)
					got = append(got, line{m["path"].(string), m["request_id"].(string), doc})
					continue
				}
				if !strings.Contains(l, "msg=request ") {
					continue
				}
				attrs := map[string]string{}
				for _, f := range strings.Fields(l) {
					if k, v, ok := strings.Cut(f, "="); ok {
						if u, err := strconv.Unquote(v); err == nil {
							v = u
						}
						attrs[k] = v
					}
				}
				got = append(got, line{attrs["path"], attrs["request_id"], attrs["doc"]})
			}
			want := []line{{"/docs/notes-1", own, "notes-1"}, {"/docs/notes-2", genA, "notes-2"}, {"/docs", genB, ""}, {"/healthz", genC, ""}}
			if len(got) != len(want) {
				t.Fatalf("log lines %+v, want %+v\n%s", got, want, logs)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("line %d: %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}

func TestSaneRequestID(t *testing.T) {
	for id, want := range map[string]bool{
		"":                                  false,
		"abc-DEF_123":                       true,
		"0af7651916cd43dd":                  true,
		"a b":                               false,
		"a\nb":                              false,
		"<script>":                          false,
		"ünïcode":                           false,
		"a\"b":                              false,
		strings.Repeat("a", maxRequestID):   true,
		strings.Repeat("a", maxRequestID+1): false,
	} {
		if got := saneRequestID(id); got != want {
			t.Errorf("saneRequestID(%q) = %v", id, got)
		}
	}
}

func TestOpenURL(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080/",
		"0.0.0.0:80":     "http://localhost:80/",
		"[::]:8080":      "http://localhost:8080/",
		"[::1]:8080":     "http://[::1]:8080/",
		"10.1.2.3:443":   "http://10.1.2.3:443/",
	} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := openURL(a); got != want {
			t.Errorf("openURL(%s) = %q, want %q", addr, got, want)
		}
	}
}

// BenchmarkRequestID is what giving a request its id costs: making one
// and putting it in the answer's header.
func BenchmarkRequestID(b *testing.B) {
	var ids requestIDs
	ids.init()
	r := httptest.NewRequest("GET", "/", nil)
	h := http.Header{}
	b.ReportAllocs()
	for b.Loop() {
		h["X-Request-Id"] = []string{ids.of(r)}
	}
}

// TestReadyzDrainLog: the 503s of /readyz while the server drains are
// logged at INFO (they are what draining means), while the other 503s,
// /readyz's with a failing store among them, stay at ERROR.
func TestReadyzDrainLog(t *testing.T) {
	logs := &logBuffer{}
	st := &checkedStore{Store: memstore.New(), err: errDiskFull}
	e := newCollab(t, Config{Logger: slog.New(slog.NewJSONHandler(logs, nil))}, collab.Config{Store: st})
	level := func() string {
		t.Helper()
		var m struct{ Level, Msg, Path string }
		l := strings.TrimSpace(logs.String())
		logs.Reset()
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Msg != "request" || m.Path != "/readyz" {
			t.Fatalf("want one request line of /readyz, got %q (%v)", l, err)
		}
		return m.Level
	}
	if w := e.serve(defaultIP, "GET", "/readyz", "", nil); w.Code != 503 {
		t.Fatalf("/readyz with a failing store: %d", w.Code)
	}
	if l := level(); l != "ERROR" {
		t.Errorf("/readyz with a failing store logged at %s, want ERROR", l)
	}
	e.s.Drain(context.Background())
	if w := e.serve(defaultIP, "GET", "/readyz", "", nil); w.Code != 503 {
		t.Fatalf("/readyz while draining: %d", w.Code)
	}
	if l := level(); l != "INFO" {
		t.Errorf("/readyz while draining logged at %s, want INFO", l)
	}
}
