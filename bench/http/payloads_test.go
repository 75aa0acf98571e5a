package main

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

func TestPayloads(t *testing.T) {
	dir := tracesDir("")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no traces: %v", err)
	}
	payloads, err := Payloads(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ minBytes, maxBytes, steps int }{
		"seed": {100, 200, 1}, "small": {300, 2000, 1}, "50KB": {45_000, 60_000, 20}, "1MB": {900_000, 1_100_000, 1},
	}
	for _, p := range payloads {
		w, ok := want[p.Name]
		if !ok {
			t.Errorf("unexpected payload %s", p.Name)
			continue
		}
		delete(want, p.Name)
		var req struct {
			Schema string            `json:"schema"`
			Doc    json.RawMessage   `json:"doc"`
			Steps  []json.RawMessage `json:"steps"`
		}
		if err := json.Unmarshal(p.Body, &req); err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if len(p.Body) < w.minBytes || len(p.Body) > w.maxBytes || len(req.Steps) != w.steps {
			t.Errorf("%s: %d bytes and %d steps, want %d-%d bytes and %d steps", p.Name, len(p.Body), len(req.Steps), w.minBytes, w.maxBytes, w.steps)
		}
		if req.Schema == "" {
			req.Schema = "text"
		}
		schema, err := schemas.Get(req.Schema)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := schema.NodeFromJSON(req.Doc)
		if err != nil {
			t.Errorf("%s: doc: %v", p.Name, err)
			continue
		}
		for i, s := range req.Steps {
			step, err := transform.StepFromJSON(schema, s)
			if err == nil {
				doc, err = step.Apply(doc)
			}
			if err != nil {
				t.Errorf("%s: step %d: %v", p.Name, i, err)
				break
			}
		}
	}
	for name := range want {
		t.Errorf("payload %s missing", name)
	}
	if !bytes.Equal([]byte(seedPayload), payloads[0].Body) {
		t.Errorf("seed payload changed")
	}
}
