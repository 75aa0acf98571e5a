package conformance

// TestChangesetCorpus replays the changeset corpora
// (js/FORMAT-changeset.md) against the changeset package: for each
// random history, ChangeSet.AddSteps, called as the generator called
// prosemirror-changeset's addSteps (the maps of the recorded steps, one
// author per step, in the same calls), must give the recorded changes,
// and SimplifyChanges on the last document the recorded simplified
// changes, byte for byte as JSON. Where JS threw, Go must fail in the
// same call.

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/pmauthority/pmauthority/changeset"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

type changesetCase struct {
	ID         int             `json:"id"`
	Schema     string          `json:"schema"`
	Kind       string          `json:"kind"`
	Doc        json.RawMessage `json:"doc"`
	Calls      []changesetCall `json:"calls"`
	Changes    json.RawMessage `json:"changes"`
	Simplified json.RawMessage `json:"simplified"`
	Threw      *changesetThrew `json:"threw"`
}

type changesetCall struct {
	Steps []json.RawMessage `json:"steps"`
	Data  []string          `json:"data"`
}

type changesetThrew struct {
	Call      int    `json:"call"`
	Error     string `json:"error"`
	ErrorName string `json:"errorName"`
}

const changesetCommitted = "testdata/changeset/corpus.jsonl"

// changesetVersions are the packages whose behaviour the changeset
// package ports.
var changesetVersions = map[string]string{
	"prosemirror-changeset": "2.4.6",
	"prosemirror-transform": "1.12.7",
	"prosemirror-model":     "1.25.13",
}

func TestChangesetCorpus(t *testing.T) {
	schemas := loadSchemas(t)
	for _, file := range corpusFiles(changesetCommitted, "PMA_CHANGESET_CORPUS") {
		h, lines := readCorpus(t, file, "pmauthority-changeset-conformance", 1)
		checkVersions(t, file, h, changesetVersions, "the changeset package")
		var stats stepsStats
		r := checkCases(lines, func(line []byte) *caseCheck { return changesetCheckCase(schemas, line, &stats) })
		r.report(t, file)
		t.Logf("%s: seed %d; JS outcomes %s", file, h.Seed, countsText(stats.outcomes))
	}
}

func changesetCheckCase(schemas map[string]*model.Schema, line []byte, stats *stepsStats) *caseCheck {
	var tc changesetCase
	if err := strictUnmarshal(line, &tc); err != nil {
		c := &caseCheck{id: -1}
		c.fail("line", "", "a case", err.Error())
		return c
	}
	c := &caseCheck{id: tc.ID, schema: tc.Schema, kind: tc.Kind}
	s := schemas[tc.Schema]
	if s == nil {
		c.fail("schema", "", "a known schema", tc.Schema)
		return c
	}
	doc, err := s.NodeFromJSON(tc.Doc)
	if err != nil {
		c.fail("doc", "", "a document", err.Error())
		return c
	}
	threwAt := func(call int) bool { return tc.Threw != nil && tc.Threw.Call == call }
	set := changeset.Create(doc, changeset.Options[string]{})
	for i, call := range tc.Calls {
		maps := make([]*transform.StepMap, len(call.Steps))
		for j, raw := range call.Steps {
			step, err := transform.StepFromJSON(s, raw)
			if err == nil {
				doc, err = step.Apply(doc)
			}
			if err != nil {
				c.fail("steps", fmt.Sprintf("call %d step %d", i, j), "a step that applies", err.Error())
				return c
			}
			maps[j] = step.GetMap()
		}
		if tc.Threw != nil && tc.Threw.Call >= 0 && tc.Threw.Call < i {
			continue
		}
		next, err := set.AddSteps(doc, maps, call.Data)
		switch {
		case threwAt(i) && err == nil:
			c.fail("threw", fmt.Sprintf("addSteps call %d", i), tc.Threw.ErrorName+": "+tc.Threw.Error, "no error")
			return c
		case threwAt(i):
			stats.add(&stats.outcomes, "addSteps threw "+tc.Threw.ErrorName)
			c.fields++
			return c
		case err != nil:
			c.fail("threw", fmt.Sprintf("addSteps call %d", i), "no error", err.Error())
			return c
		}
		set = next
	}
	c.eq("changes", "", tc.Changes, changesJSON(set.Changes()))
	simplified, err := changeset.SimplifyChanges(set.Changes(), doc)
	switch {
	case threwAt(-1) && err == nil:
		c.fail("threw", "simplifyChanges", tc.Threw.ErrorName+": "+tc.Threw.Error, "no error")
	case threwAt(-1):
		stats.add(&stats.outcomes, "simplifyChanges threw "+tc.Threw.ErrorName)
		c.fields++
	case err != nil:
		c.fail("threw", "simplifyChanges", "no error", err.Error())
	default:
		stats.add(&stats.outcomes, tc.Kind)
		c.eq("simplified", "", tc.Simplified, changesJSON(simplified))
	}
	return c
}

// changesJSON renders changes as JSON.stringify(changes).
func changesJSON(changes []changeset.Change[string]) []byte {
	buf := []byte{'['}
	for i, ch := range changes {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf, _ = ch.AppendJSON(buf)
	}
	return append(buf, ']')
}
