package conformance

import (
	"encoding/json"
	"testing"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/suggest"
	"github.com/pmauthority/pmauthority/transform"
)

// The suggest corpus (js/FORMAT-suggest.md): random suggestion-laden
// documents of the suggest schema with what
// @handlewithcare/prosemirror-suggest-changes's revertSuggestions and
// applySuggestions make of them, steps and document, and what reverting
// and applying one id makes by the generator's reference; replayed
// against package suggest.

const suggestCommitted = "testdata/suggest/corpus.jsonl"

// suggestVersions are the packages whose behaviour package suggest ports.
var suggestVersions = map[string]string{
	"@handlewithcare/prosemirror-suggest-changes": "0.1.8",
	"prosemirror-transform":                       "1.12.7",
	"prosemirror-model":                           "1.25.13",
}

type suggestCase struct {
	ID           int             `json:"id"`
	Doc          json.RawMessage `json:"doc"`
	Revert       json.RawMessage `json:"revert"`
	Apply        json.RawMessage `json:"apply"`
	RevertThrows *string         `json:"revertThrows"`
	ApplyThrows  *string         `json:"applyThrows"`
	ByID         []struct {
		ID     json.RawMessage `json:"id"`
		Revert json.RawMessage `json:"revert"`
		Apply  json.RawMessage `json:"apply"`
	} `json:"byId"`
}

func TestSuggestCorpus(t *testing.T) {
	s := loadSchemas(t)["suggest"]
	for _, file := range corpusFiles(suggestCommitted, "PMA_SUGGEST_CORPUS") {
		h, lines := readCorpus(t, file, "pmauthority-suggest-conformance", 1)
		checkVersions(t, file, h, suggestVersions, "package suggest")
		r := checkCases(lines, func(line []byte) *caseCheck { return suggestCheckCase(s, line) })
		r.report(t, file)
		throws := 0
		for _, line := range lines {
			var c suggestCase
			if json.Unmarshal(line, &c) == nil && (c.RevertThrows != nil || c.ApplyThrows != nil) {
				throws++
			}
		}
		t.Logf("%s: seed %d; %d cases where the JavaScript reads past the document's end (compared with its fix)", file, h.Seed, throws)
	}
}

func suggestCheckCase(s *model.Schema, line []byte) *caseCheck {
	var sc suggestCase
	if err := strictUnmarshal(line, &sc); err != nil {
		c := &caseCheck{id: -1}
		c.fail("line", "", "a case", err.Error())
		return c
	}
	c := &caseCheck{id: sc.ID, schema: "suggest", kind: "suggest"}
	doc, err := s.NodeFromJSON(sc.Doc)
	if err != nil {
		c.fail("doc", "", "a document", err.Error())
		return c
	}
	tr, err := suggest.Revert(doc)
	c.eq("revert", "", sc.Revert, suggestResult(tr, err, true))
	tr, err = suggest.Apply(doc)
	c.eq("apply", "", sc.Apply, suggestResult(tr, err, true))
	for _, one := range sc.ByID {
		id, err := model.ParseJSONValue(one.ID)
		if err != nil {
			c.fail("byId.id", string(one.ID), "a JSON value", err.Error())
			continue
		}
		tr, err := suggest.RevertID(doc, id)
		c.eq("byId.revert", "id "+string(one.ID), one.Revert, suggestResult(tr, err, false))
		tr, err = suggest.ApplyID(doc, id)
		c.eq("byId.apply", "id "+string(one.ID), one.Apply, suggestResult(tr, err, false))
	}
	return c
}

// suggestResult renders a result as the generator records it:
// {"doc", "steps"?} or {"error"}.
func suggestResult(tr *transform.Transform, err error, steps bool) []byte {
	if err != nil {
		return append(append([]byte(`{"error":`), jsonString(err.Error())...), '}')
	}
	b := tr.Doc.AppendJSON([]byte(`{"doc":`))
	if steps {
		b = append(b, `,"steps":[`...)
		for i, st := range tr.Steps {
			if i > 0 {
				b = append(b, ',')
			}
			b = st.AppendJSON(b)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
