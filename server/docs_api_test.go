package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// docText is the JSON of a basic document of one paragraph of text.
func docText(text string) string {
	if text == "" {
		return `{"type":"doc","content":[{"type":"paragraph"}]}`
	}
	return `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"` + text + `"}]}]}`
}

// typeInto submits text into document id's paragraph, a character a step,
// from version 0.
func typeInto(t *testing.T, e *collabEnv, id, text string) {
	t.Helper()
	e.mustGet(t, "/docs/"+id)
	for i, r := range text {
		e.mustPost(t, id, fmt.Sprintf(`{"version":%d,"clientID":%d,"steps":[%s]}`, i, 10+i%2, insert(1+i, string(r))))
	}
}

// expect answers a request and fails unless its status is status and, for
// an error, its message contains want (for a success, the body is want
// when want is not "").
func expect(t *testing.T, e *collabEnv, method, target, body string, status int, want string) string {
	t.Helper()
	got, answer := e.request(t, method, target, body)
	if got != status {
		t.Fatalf("%s %s %s: %d %s, want %d", method, target, body, got, answer, status)
	}
	if status >= 400 {
		var a struct {
			Error struct{ Message string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(answer), &a); err != nil || !strings.Contains(a.Error.Message, want) {
			t.Fatalf("%s %s %s: %s, want a message containing %q", method, target, body, answer, want)
		}
	} else if want != "" && answer != want {
		t.Fatalf("%s %s %s:\n got %s\nwant %s", method, target, body, answer, want)
	}
	return answer
}

func TestDocsCreate(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{Limits: collab.Limits{Limits: apply.Limits{MaxDocSize: 20}}})
	expect(t, e, "POST", "/docs", `{"id":"n1"}`, 201, `{"id":"n1","version":0}`)
	if got := e.mustGet(t, "/docs/n1"); !strings.HasPrefix(got, `{"doc":`+docText("")+`,`) {
		t.Errorf("GET /docs/n1: %s", got)
	}
	expect(t, e, "POST", "/docs", `{"id":"n2","schema":"basic","doc":`+docText("hi")+`}`, 201, `{"id":"n2","version":0}`)
	if got := e.mustGet(t, "/docs/n2"); !strings.HasPrefix(got, `{"doc":`+docText("hi")+`,`) {
		t.Errorf("GET /docs/n2: %s", got)
	}
	expect(t, e, "POST", "/docs", `{"id":"t","schema":"text","doc":{"type":"doc","content":[{"type":"text","text":"plain"}]}}`, 201, "")
	expect(t, e, "POST", "/docs/", `{"id":"My notes/ä"}`, 201, `{"id":"My notes/ä","version":0}`)
	var gen struct{ ID string }
	if err := json.Unmarshal([]byte(expect(t, e, "POST", "/docs", `{}`, 201, "")), &gen); err != nil || len(gen.ID) != 16 {
		t.Fatalf("generated id %q, %v", gen.ID, err)
	}
	e.mustGet(t, "/docs/"+gen.ID)
	// Refusals change nothing.
	before := e.mustGet(t, "/docs")
	expect(t, e, "POST", "/docs", `{"id":"n1","doc":`+docText("other")+`}`, 409, "already exists")
	expect(t, e, "POST", "/docs", `{"id":"x","schema":"nope"}`, 400, `unknown schema "nope"`)
	expect(t, e, "POST", "/docs", `{"id":"x","doc":{"type":"nope"}}`, 400, "invalid document")
	expect(t, e, "POST", "/docs", `{"id":"x","doc":`+docText("far more than twenty positions")+`}`, 413, "document size")
	expect(t, e, "POST", "/docs", `{"id":".."}`, 400, "invalid document id")
	expect(t, e, "POST", "/docs", `{"id":""}`, 400, "invalid document id")
	expect(t, e, "POST", "/docs", `{"id":5}`, 400, `"id" must be a string`)
	expect(t, e, "POST", "/docs", `{"id":"x","extra":1}`, 400, `unknown field "extra"`)
	expect(t, e, "POST", "/docs", `["x"]`, 400, "must be a JSON object")
	expect(t, e, "POST", "/docs", `{"id":`, 400, "")
	expect(t, e, "POST", "/docs", strings.Repeat(`{"a":`, 600)+"1"+strings.Repeat("}", 600), 400, "nested too deeply")
	w := e.serve(defaultIP, "POST", "/docs", "", nil)
	if w.Code != http.StatusUnsupportedMediaType {
		t.Errorf("POST /docs without a Content-Type: %d", w.Code)
	}
	if after := e.mustGet(t, "/docs"); listTimes(t, after) != listTimes(t, before) {
		t.Errorf("refusals changed the documents:\n%s\n%s", before, after)
	}
}

// TestDocsCreateSuggest: POST /docs with the suggest schema keeps the
// suggestion marks on text and on top-level blocks, and with Strict
// refuses them where that schema does not allow them (code block text,
// blocks inside a list); GET /v1/schemas lists it.
func TestDocsCreateSuggest(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{Strict: true})
	ins := `{"type":"insertion","attrs":{"id":1}}`
	del := `{"type":"deletion","attrs":{"id":"b"}}`
	mod := `{"type":"modification","attrs":{"id":2,"type":"attr","attrName":"level","previousValue":1,"newValue":2}}`
	doc := `{"type":"doc","content":[` +
		`{"type":"paragraph","content":[{"type":"text","text":"kept "},{"type":"text","marks":[` + del + `],"text":"gone"},{"type":"text","marks":[` + ins + `],"text":"new"}]},` +
		`{"type":"heading","attrs":{"level":2},"content":[{"type":"text","text":"Title"}],"marks":[` + mod + `]},` +
		`{"type":"paragraph","marks":[` + ins + `]}]}`
	expect(t, e, "POST", "/docs", `{"id":"s","schema":"suggest","doc":`+doc+`}`, 201, `{"id":"s","version":0}`)
	if got := e.mustGet(t, "/docs/s"); !strings.HasPrefix(got, `{"doc":`+doc+`,`) {
		t.Errorf("GET /docs/s: %s", got)
	}
	code := `{"type":"doc","content":[{"type":"code_block","content":[{"type":"text","marks":[` + ins + `],"text":"x"}]}]}`
	expect(t, e, "POST", "/docs", `{"id":"c","schema":"suggest","doc":`+code+`}`, 400, "Invalid content for node code_block")
	nested := `{"type":"doc","content":[{"type":"bullet_list","content":[{"type":"list_item","marks":[` + ins + `],"content":[{"type":"paragraph"}]}]}]}`
	expect(t, e, "POST", "/docs", `{"id":"l","schema":"suggest","doc":`+nested+`}`, 400, "Invalid content for node bullet_list")
	expect(t, e, "POST", "/docs", `{"id":"b","schema":"basic","doc":`+doc+`}`, 400, "There is no mark type deletion")
	if got := e.mustGet(t, "/v1/schemas"); !strings.Contains(got, `"suggest"`) {
		t.Errorf("GET /v1/schemas: %s", got)
	}
}

// TestDocsCreateStrict: with Strict, a document that violates its schema
// is refused.
func TestDocsCreateStrict(t *testing.T) {
	bad := `{"id":"x","doc":{"type":"doc","content":[{"type":"text","text":"loose"}]}}`
	lax := newCollab(t, Config{}, collab.Config{})
	expect(t, lax, "POST", "/docs", bad, 201, "")
	strict := newCollab(t, Config{}, collab.Config{Strict: true})
	expect(t, strict, "POST", "/docs", bad, 400, "Invalid content for node doc")
}

// TestDocsNoAutoCreate: without AutoCreate, an unknown document is 404 on
// every route, a WebSocket hello is closed with 4404, and POST /docs
// creates.
func TestDocsNoAutoCreate(t *testing.T) {
	e := newWSAuto(t, Config{}, collab.Config{}, nil, false)
	expect(t, e.collabEnv, "GET", "/docs/x", "", 404, "document not found")
	expect(t, e.collabEnv, "GET", "/docs/x/events?version=0&commentVersion=0", "", 404, "document not found")
	expect(t, e.collabEnv, "POST", "/docs/x/events", `{"version":0,"clientID":1,"steps":[`+insert(1, "a")+`]}`, 404, "document not found")
	c := e.dial(t, "x", false)
	c.hello(0, "1")
	if m := c.next("error"); m.Status != 404 {
		t.Fatalf("hello of an unknown document: %s", m.raw)
	}
	if code, reason := c.closed(0); code != wsCloseNotFound || reason != "document not found" {
		t.Fatalf("closed with %d %q, want 4404", code, reason)
	}
	if list := e.mustGet(t, "/docs"); list != "[]" {
		t.Fatalf("documents created: %s", list)
	}
	expect(t, e.collabEnv, "POST", "/docs", `{"id":"x"}`, 201, "")
	e.mustGet(t, "/docs/x")
	e.mustPost(t, "x", `{"version":0,"clientID":1,"steps":[`+insert(1, "a")+`]}`)
}

// TestDocsDelete: DELETE tells the document's WebSockets (error 404,
// close 4404) and waiting polls (404), removes it from the store and
// memory, and leaves other documents as they were.
func TestDocsDelete(t *testing.T) {
	st := memstore.New()
	e := newWS(t, Config{}, collab.Config{Store: st}, nil)
	typeInto(t, e.collabEnv, "d", "ab")
	typeInto(t, e.collabEnv, "other", "xy")
	a := e.dial(t, "d", false)
	a.hello(2, "1")
	a.next("welcome")
	o := e.dial(t, "other", false)
	o.hello(2, "2")
	o.next("welcome")
	poll := e.poll("198.51.100.9", "/docs/d/events?version=2&commentVersion=0", nil)
	e.waitWaiting(t, "d", 1)
	otherBefore := e.mustGet(t, "/docs/other")

	expect(t, e.collabEnv, "DELETE", "/docs/d", "", 204, "")
	if m := a.nextSkipping("error"); m.Status != 404 {
		t.Fatalf("the editor got %s, want error 404", m.raw)
	}
	if code, reason := a.closed(0); code != wsCloseNotFound || reason != "document deleted" {
		t.Fatalf("closed with %d %q, want 4404 document deleted", code, reason)
	}
	if status, body := answer(t, poll); status != 404 {
		t.Fatalf("the waiting poll: %d %s, want 404", status, body)
	}
	if _, err := st.Load(context.Background(), "d"); err == nil {
		t.Fatal("the store still has the document")
	}
	if ok, _ := e.auth.Exists(context.Background(), "d"); ok {
		t.Fatal("the authority still has the document")
	}
	// The other document is as it was and keeps working live.
	if got := e.mustGet(t, "/docs/other"); got != otherBefore {
		t.Errorf("the other document changed:\n%s\n%s", otherBefore, got)
	}
	e.post(t, "other", 2, "3", insert(1, "z"))
	if m := o.nextSkipping("steps"); m.Version != 3 {
		t.Fatalf("the other document's editor got %s", m.raw)
	}
	expect(t, e.collabEnv, "DELETE", "/docs/d", "", 404, "document not found")
	expect(t, e.collabEnv, "DELETE", "/docs/d%00", "", 400, "invalid document id")
	// With AutoCreate the id is free again: using it creates a new one,
	// whose versions start after the deleted one's (2).
	if got := e.mustGet(t, "/docs/d"); !strings.Contains(got, `"version":3,`) {
		t.Errorf("GET after DELETE: %s", got)
	}
}

func TestDocsVersion(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	e := newCollab(t, Config{}, collab.Config{Store: st})
	typeInto(t, e, "d", "abcde")
	for v := range 6 {
		want := `{"doc":` + docText("abcde"[:v]) + fmt.Sprintf(`,"version":%d}`, v)
		expect(t, e, "GET", fmt.Sprintf("/docs/d?version=%d", v), "", 200, want)
	}
	expect(t, e, "GET", "/docs/d/?version=3", "", 200, `{"doc":`+docText("abc")+`,"version":3}`)
	expect(t, e, "GET", "/docs/d?version=6", "", 400, "Invalid version 6")
	expect(t, e, "GET", "/docs/d?version=99999999999999999999", "", 400, "Invalid version")
	expect(t, e, "GET", "/docs/d?version=-1", "", 400, "Not a non-negative integer")
	expect(t, e, "GET", "/docs/d?version=1.5", "", 400, "Not a non-negative integer")
	expect(t, e, "GET", "/docs/d?version=", "", 400, "Not a non-negative integer")
	expect(t, e, "GET", "/docs/nothing?version=0", "", 404, "document not found")
	if list := e.mustGet(t, "/docs"); strings.Contains(list, "nothing") {
		t.Errorf("?version created the document: %s", list)
	}
	// Pruned: a snapshot at 4 keeping no steps.
	doc4 := docText("abcd")
	if err := st.SaveSnapshot(ctx, "d", store.Snapshot{Version: 4, Doc: []byte(doc4), Meta: []byte(`{"comments":[]}`)}, 0); err != nil {
		t.Fatal(err)
	}
	expect(t, e, "GET", "/docs/d?version=3", "", 410, "History no longer available")
	expect(t, e, "GET", "/docs/d?version=4", "", 200, `{"doc":`+doc4+`,"version":4}`)
	expect(t, e, "GET", "/docs/d?version=5", "", 200, `{"doc":`+docText("abcde")+`,"version":5}`)
}

func TestDocsSteps(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	e := newCollab(t, Config{}, collab.Config{Store: st})
	typeInto(t, e, "d", "abcde")
	var page struct {
		Steps []struct {
			Version  int64
			Step     json.RawMessage
			ClientID json.RawMessage
			Author   *string
			Time     string
		}
		Version, Oldest int64
		Next            *int64
	}
	get := func(target string) {
		t.Helper()
		page.Next = nil
		if err := json.Unmarshal([]byte(expect(t, e, "GET", target, "", 200, "")), &page); err != nil {
			t.Fatal(err)
		}
	}
	get("/docs/d/steps?from=1&limit=2")
	if len(page.Steps) != 2 || page.Next == nil || *page.Next != 3 || page.Version != 5 || page.Oldest != 0 {
		t.Fatalf("page %+v", page)
	}
	for i, s := range page.Steps {
		v := int64(i + 2)
		if s.Version != v || string(s.Step) != insert(int(v), "abcde"[v-1:v]) || string(s.ClientID) != fmt.Sprint(10+(v-1)%2) || s.Author != nil || s.Time == "" {
			t.Errorf("step %d: %+v", i, s)
		}
	}
	get("/docs/d/steps")
	if len(page.Steps) != 5 || page.Next != nil {
		t.Fatalf("all steps: %d, next %v", len(page.Steps), page.Next)
	}
	get("/docs/d/steps?from=3&limit=5000")
	if len(page.Steps) != 2 || page.Next != nil {
		t.Fatalf("from 3: %d, next %v", len(page.Steps), page.Next)
	}
	get("/docs/d/steps?from=5")
	if len(page.Steps) != 0 || page.Next != nil {
		t.Fatalf("from 5: %+v", page)
	}
	expect(t, e, "GET", "/docs/d/steps?from=6", "", 400, "Invalid version 6")
	expect(t, e, "GET", "/docs/d/steps?from=-1", "", 400, "Not a non-negative integer")
	expect(t, e, "GET", "/docs/d/steps?limit=0", "", 400, `"limit" must be at least 1`)
	expect(t, e, "GET", "/docs/d/steps?limit=x", "", 400, "Not a non-negative integer")
	expect(t, e, "GET", "/docs/nothing/steps", "", 404, "document not found")
	if err := st.SaveSnapshot(ctx, "d", store.Snapshot{Version: 4, Doc: []byte(docText("abcd")), Meta: []byte(`{"comments":[]}`)}, 0); err != nil {
		t.Fatal(err)
	}
	expect(t, e, "GET", "/docs/d/steps?from=3", "", 410, "History no longer available")
	get("/docs/d/steps?from=4")
	if len(page.Steps) != 1 || page.Oldest != 4 {
		t.Fatalf("from 4 after pruning: %+v", page)
	}
}

// TestDocsCheckpointsRestore: checkpoints record versions; a restore is a
// new step, by the principal, that a connected editor receives live.
func TestDocsCheckpointsRestore(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	typeInto(t, e.collabEnv, "d", "ab")
	c := e.dial(t, "d", false)
	c.hello(2, "1")
	c.next("welcome")

	got := expect(t, e.collabEnv, "POST", "/docs/d/checkpoints", `{"name":"two"}`, 201, "")
	if !strings.HasPrefix(got, `{"name":"two","version":2,"author":null,"time":"`) {
		t.Errorf("checkpoint: %s", got)
	}
	expect(t, e.collabEnv, "POST", "/docs/d/checkpoints", `{"name":"two"}`, 409, "checkpoint already exists")
	expect(t, e.collabEnv, "POST", "/docs/d/checkpoints", `{}`, 400, `"name" is missing`)
	expect(t, e.collabEnv, "POST", "/docs/d/checkpoints", `{"name":""}`, 400, "empty checkpoint name")
	expect(t, e.collabEnv, "POST", "/docs/d/checkpoints", `{"name":7}`, 400, `"name" must be a string`)
	expect(t, e.collabEnv, "POST", "/docs/nothing/checkpoints", `{"name":"x"}`, 404, "document not found")
	e.post(t, "d", 2, "5", insert(3, "c"))
	c.nextSkipping("steps")
	expect(t, e.collabEnv, "POST", "/docs/d/checkpoints", `{"name":"three"}`, 201, "")
	list := expect(t, e.collabEnv, "GET", "/docs/d/checkpoints", "", 200, "")
	var cps struct {
		Checkpoints []struct {
			Name    string
			Version int64
		}
	}
	if err := json.Unmarshal([]byte(list), &cps); err != nil || len(cps.Checkpoints) != 2 ||
		cps.Checkpoints[0].Name != "two" || cps.Checkpoints[0].Version != 2 || cps.Checkpoints[1].Name != "three" || cps.Checkpoints[1].Version != 3 {
		t.Fatalf("checkpoints %s", list)
	}
	expect(t, e.collabEnv, "GET", "/docs/nothing/checkpoints", "", 404, "document not found")

	// Restore by name: a new step the editor receives.
	expect(t, e.collabEnv, "POST", "/docs/d/restore", `{"checkpoint":"two"}`, 200, `{"version":4,"commentVersion":0}`)
	m := c.nextSkipping("steps")
	if m.Version != 4 || len(m.Steps) != 1 || string(m.ClientIDs[0]) != `"restore"` {
		t.Fatalf("the editor got %s", m.raw)
	}
	if got := e.mustGet(t, "/docs/d?version=4"); got != `{"doc":`+docText("ab")+`,"version":4}` {
		t.Errorf("after restoring two: %s", got)
	}
	// By version.
	expect(t, e.collabEnv, "POST", "/docs/d/restore", `{"version":1}`, 200, `{"version":5,"commentVersion":0}`)
	if got := e.mustGet(t, "/docs/d?version=5"); got != `{"doc":`+docText("a")+`,"version":5}` {
		t.Errorf("after restoring 1: %s", got)
	}
	before := e.mustGet(t, "/docs/d")
	expect(t, e.collabEnv, "POST", "/docs/d/restore", `{"version":9}`, 400, "Invalid version 9")
	expect(t, e.collabEnv, "POST", "/docs/d/restore", `{"version":-1}`, 400, "Invalid version -1")
	expect(t, e.collabEnv, "POST", "/docs/d/restore", `{"version":1,"checkpoint":"two"}`, 400, `one of "version" and "checkpoint"`)
	expect(t, e.collabEnv, "POST", "/docs/d/restore", `{}`, 400, `one of "version" and "checkpoint"`)
	expect(t, e.collabEnv, "POST", "/docs/d/restore", `{"version":"1"}`, 400, `"version" must be an integer`)
	expect(t, e.collabEnv, "POST", "/docs/d/restore", `{"checkpoint":"four"}`, 404, `checkpoint "four"`)
	expect(t, e.collabEnv, "POST", "/docs/nothing/restore", `{"version":0}`, 404, "document not found")
	if after := e.mustGet(t, "/docs/d"); after != before {
		t.Errorf("refused restores changed the document:\n%s\n%s", before, after)
	}
}

func TestDocsAuthors(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{})
	typeInto(t, e, "d", "ab")
	expect(t, e, "GET", "/docs/d/authors", "", 200, `{"version":2,"oldest":0,"ranges":[`+
		`{"from":0,"to":1,"version":0,"author":null,"clientID":null},`+
		`{"from":1,"to":2,"version":1,"author":"10","clientID":10},`+
		`{"from":2,"to":3,"version":2,"author":"11","clientID":11},`+
		`{"from":3,"to":4,"version":0,"author":null,"clientID":null}]}`)
	expect(t, e, "GET", "/docs/nothing/authors", "", 404, "document not found")
}

// TestDocsCreateLimit: POST /docs over collab.Config.MaxDocuments is a
// 507.
func TestDocsCreateLimit(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{Limits: collab.Limits{MaxDocuments: 1}})
	expect(t, e, "POST", "/docs", `{"id":"one"}`, 201, "")
	if w := e.serve(defaultIP, "POST", "/docs", `{"id":"two"}`, nil); w.Code != http.StatusInsufficientStorage || !strings.Contains(w.Body.String(), "too many documents") {
		t.Errorf("over MaxDocuments: %d %s", w.Code, w.Body)
	}
	if list := e.mustGet(t, "/docs"); strings.Contains(list, `"two"`) {
		t.Errorf("created over the limit: %s", list)
	}
}

// TestDocsStepsPage: Config.MaxStepsPage bounds a page, also the default
// one.
func TestDocsStepsPage(t *testing.T) {
	e := newCollab(t, Config{Limits: Limits{MaxStepsPage: 2}}, collab.Config{})
	typeInto(t, e, "d", "abcde")
	for _, target := range []string{"/docs/d/steps", "/docs/d/steps?limit=100"} {
		var page struct {
			Steps []json.RawMessage
			Next  *int64
		}
		if err := json.Unmarshal([]byte(expect(t, e, "GET", target, "", 200, "")), &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Steps) != 2 || page.Next == nil || *page.Next != 2 {
			t.Errorf("%s: %d steps, next %v; want 2 and 2", target, len(page.Steps), page.Next)
		}
	}
}

// TestDocsMaxCheckpoints: a checkpoint over collab.Config.MaxCheckpoints
// is a 413.
func TestDocsMaxCheckpoints(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{Limits: collab.Limits{MaxCheckpoints: 1}})
	typeInto(t, e, "d", "a")
	expect(t, e, "POST", "/docs/d/checkpoints", `{"name":"one"}`, 201, "")
	expect(t, e, "POST", "/docs/d/checkpoints", `{"name":"two"}`, 413, "checkpoints (Limits.MaxCheckpoints) over the limit: 2 > 1")
}
