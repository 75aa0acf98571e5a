package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pmauthority/pmauthority/metrics"
)

// TestDocs checks docs/operations.md and docs/grafana-dashboard.json
// against the metrics New registers: the dashboard is JSON whose queries
// name only those metrics, and both name every one of them.
func TestDocs(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	// Every vector has a child, so that Gather lists them all.
	m.Request("GET /healthz", 200, 0)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]string{} // name → type
	for _, mf := range mfs {
		registered[mf.GetName()] = mf.GetType().String()
	}
	if len(registered) != 10 {
		t.Errorf("%d metrics registered, want 10: %v", len(registered), registered)
	}

	raw, err := os.ReadFile("../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string
		Panels []struct {
			Type, Title string
			Targets     []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	name := regexp.MustCompile(`pmauthority_[a-z_]+`)
	used := map[string]bool{}
	for _, p := range dash.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, n := range name.FindAllString(tg.Expr, -1) {
				base := n
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(n, suffix); ok && registered[b] == "HISTOGRAM" {
						base = b
					}
				}
				if registered[base] == "" {
					t.Errorf("panel %q queries %s, which is not a metric", p.Title, n)
				}
				used[base] = true
			}
		}
	}
	ops, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for n := range registered {
		if !used[n] {
			t.Errorf("the dashboard has no panel of %s", n)
		}
		if !strings.Contains(string(ops), "`"+n+"`") {
			t.Errorf("docs/operations.md does not describe %s", n)
		}
	}
}
