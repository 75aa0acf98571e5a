package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/changeset"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/transform"
)

// changesHistory is a history of two authors (and an anonymous step):
// ann types, bob replaces a word, ann deletes across both.
var changesHistory = []struct {
	author, step string
}{
	{"ann", insert(1, "Hello world")},
	{"bob", `{"stepType":"replace","from":7,"to":12}`},
	{"bob", insert(7, "there")},
	{"ann", insert(1, "Oh, ")},
	{"", insert(16, "!")},
	{"ann", `{"stepType":"replace","from":5,"to":9}`},
}

// submitHistory submits changesHistory to the document id, step by
// step, with its authors.
func submitHistory(t *testing.T, e *collabEnv, id string) {
	t.Helper()
	e.mustGet(t, "/docs/"+id)
	for i, h := range changesHistory {
		if _, err := e.auth.Submit(context.Background(), id, "", collab.Submission{Version: int64(i), Steps: [][]byte{[]byte(h.step)},
			ClientID: collab.ClientID(fmt.Sprintf("%q", "c-"+h.author)), Author: h.author}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDocsChanges: GET /docs/{id}/changes answers, for every pair of
// versions, what the changeset package makes of the same documents,
// steps and authors, with and without simplify.
func TestDocsChanges(t *testing.T) {
	ctx := context.Background()
	e := newCollab(t, Config{}, collab.Config{})
	submitHistory(t, e, "d")
	schema, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	n := len(changesHistory)
	for from := 0; from <= n; from++ {
		for to := from; to <= n; to++ {
			start, err := e.auth.DocAt(ctx, "d", int64(from))
			if err != nil {
				t.Fatal(err)
			}
			doc := start
			var maps []*transform.StepMap
			var authors []string
			for _, h := range changesHistory[from:to] {
				step, err := transform.StepFromJSON(schema, []byte(h.step))
				if err == nil {
					doc, err = step.Apply(doc)
				}
				if err != nil {
					t.Fatal(err)
				}
				maps, authors = append(maps, step.GetMap()), append(authors, h.author)
			}
			set, err := changeset.Create(start, changeset.Options[string]{}).AddSteps(doc, maps, authors)
			if err != nil {
				t.Fatal(err)
			}
			simplified, err := changeset.SimplifyChanges(set.Changes(), doc)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []struct {
				query   string
				changes []changeset.Change[string]
			}{{"", set.Changes()}, {"&simplify=0", set.Changes()}, {"&simplify=1", simplified}, {"&simplify=true", simplified}} {
				want := fmt.Sprintf(`{"from":%d,"to":%d,"changes":[`, from, to)
				for i, ch := range q.changes {
					if i > 0 {
						want += ","
					}
					b, _ := ch.AppendJSON(nil)
					want += string(b)
				}
				want += "]}"
				expect(t, e, "GET", fmt.Sprintf("/docs/d/changes?from=%d&to=%d%s", from, to, q.query), "", 200, want)
			}
		}
	}
	// Bob's replacement of "world" by "there", as docs/api.md shows it.
	expect(t, e, "GET", "/docs/d/changes/?from=1&to=3", "", 200,
		`{"from":1,"to":3,"changes":[{"fromA":7,"toA":12,"fromB":7,"toB":12,"deleted":[{"length":5,"data":"bob"}],"inserted":[{"length":5,"data":"bob"}]}]}`)
}

// TestDocsChangesErrors: the parameters are checked, and versions and
// documents fail as GET /docs/{id}?version=N fails.
func TestDocsChangesErrors(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	e := newCollab(t, Config{}, collab.Config{Store: st, Limits: collab.Limits{MaxChangesSteps: 4}})
	submitHistory(t, e, "d")
	for _, tt := range []struct {
		target string
		status int
		want   string
	}{
		{"/docs/d/changes", 400, `missing query parameter "from"`},
		{"/docs/d/changes?from=0", 400, `missing query parameter "to"`},
		{"/docs/d/changes?to=1", 400, `missing query parameter "from"`},
		{"/docs/d/changes?from=-1&to=1", 400, "Not a non-negative integer: -1"},
		{"/docs/d/changes?from=x&to=1", 400, "Not a non-negative integer: x"},
		{"/docs/d/changes?from=0&to=1.5", 400, "Not a non-negative integer: 1.5"},
		{"/docs/d/changes?from=0&to=", 400, "Not a non-negative integer"},
		{"/docs/d/changes?from=3&to=2", 400, "from 3 is after to 2"},
		{"/docs/d/changes?from=5&to=7", 400, "Invalid version 7"},
		{"/docs/d/changes?from=0&to=99999999999999999999", 400, "Invalid version"},
		{"/docs/d/changes?from=0&to=1&simplify=2", 400, `"simplify" must be 1 or 0`},
		{"/docs/d/changes?from=1&to=6", 413, "steps between from and to (Limits.MaxChangesSteps) over the limit: 5 > 4"},
		{"/docs/nothing/changes?from=0&to=0", 404, "document not found"},
	} {
		expect(t, e, "GET", tt.target, "", tt.status, tt.want)
	}
	if list := e.mustGet(t, "/docs"); strings.Contains(list, `"nothing"`) {
		t.Errorf("GET /changes created the document: %s", list)
	}
	// Pruned: a snapshot at 4 keeping no steps.
	doc4, err := e.auth.DocAt(ctx, "d", 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SaveSnapshot(ctx, "d", store.Snapshot{Version: 4, Doc: doc4.AppendJSON(nil), Meta: []byte(`{"comments":[]}`)}, 0); err != nil {
		t.Fatal(err)
	}
	expect(t, e, "GET", "/docs/d/changes?from=3&to=6", "", 410, "History no longer available")
	expect(t, e, "GET", "/docs/d/changes?from=3&to=3", "", 410, "History no longer available")
	expect(t, e, "GET", "/docs/d/changes?from=4&to=6", "", 200, "")
}
