package server

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
)

// docVersion returns the version of document id in GET /docs/{id}.
func docVersion(t *testing.T, e *collabEnv, id string) int64 {
	t.Helper()
	var st struct{ Version int64 }
	if err := json.Unmarshal([]byte(e.mustGet(t, "/docs/"+id)), &st); err != nil {
		t.Fatal(err)
	}
	return st.Version
}

// TestStorageQuotas: a document that holds --max-doc-storage refuses
// further steps and checkpoints with 507, changing nothing, and can be
// deleted; a client that stored --max-client-storage gets 507 with
// Retry-After in any document while others go on.
func TestStorageQuotas(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{Limits: collab.Limits{MaxDocStorage: 20_000, MaxClientStorage: 30_000}})
	text := strings.Repeat("q", 1000)
	// Each address posts under a client id of its own (client ids belong
	// to their client).
	post := func(ip, id string) (int, string) {
		t.Helper()
		v := docVersion(t, e, id)
		w := e.serve(ip, "POST", "/docs/"+id+"/events", fmt.Sprintf(`{"version":%d,"clientID":%q,"steps":[%s]}`, v, ip, insert(1, text)), nil)
		if w.Code != 507 { // checkAnswer takes 5xx for a fault
			checkAnswer(t, w.Code, w.Header(), w.Body.Bytes())
		}
		if w.Code == 507 && strings.Contains(w.Body.String(), "Limits.MaxClientStorage") && w.Header().Get("Retry-After") == "" {
			t.Errorf("507 of the client quota without Retry-After")
		}
		return w.Code, w.Body.String()
	}

	// The document's quota, from clients that each store little.
	n, status, answer := 0, 0, ""
	for ; n < 100; n++ {
		if status, answer = post("198.51.100."+strconv.Itoa(n+1), "d"); status != 200 {
			break
		}
	}
	if status != 507 || !strings.Contains(answer, "Limits.MaxDocStorage") {
		t.Fatalf("after %d steps of 1 KB: %d %s, want 507 naming Limits.MaxDocStorage", n, status, answer)
	}
	if v := docVersion(t, e, "d"); v != int64(n) {
		t.Errorf("version %d after the refusal, want %d", v, n)
	}
	if w := e.serve(defaultIP, "POST", "/docs/d/checkpoints", `{"name":"full"}`, nil); w.Code != 507 || !strings.Contains(w.Body.String(), "Limits.MaxDocStorage") {
		t.Errorf("a checkpoint of the full document: %d %s, want 507 naming Limits.MaxDocStorage", w.Code, w.Body)
	}
	expect(t, e, "GET", "/docs/d/checkpoints", "", 200, `{"checkpoints":[]}`)
	expect(t, e, "DELETE", "/docs/d", "", 204, "")

	// One client's quota, over several documents.
	n = 0
	for ; n < 100; n++ {
		if status, answer = post("192.0.2.66", "doc-"+strconv.Itoa(n%4)); status != 200 {
			break
		}
	}
	if status != 507 || !strings.Contains(answer, "Limits.MaxClientStorage") {
		t.Fatalf("after %d steps of 1 KB from one client: %d %s, want 507 naming Limits.MaxClientStorage", n, status, answer)
	}
	if n < 20 || n > 30 {
		t.Errorf("one client stored %d steps of 1 KB under a quota of 30,000 bytes", n)
	}
	if status, answer := post("192.0.2.67", "doc-0"); status != 200 {
		t.Errorf("another client in the same document: %d %s", status, answer)
	}
}

// TestStorageQuotaWS: over a WebSocket, a submission beyond
// --max-doc-storage gets error 507 naming the flag, and the connection
// stays.
func TestStorageQuotaWS(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{Limits: collab.Limits{MaxDocStorage: 5000}}, nil)
	c := e.dial(t, "w", false)
	c.hello(0, "1")
	c.next("welcome")
	text := strings.Repeat("w", 2000)
	for i := range 2 {
		c.send(stepsMsg(i+1, i, "1", insert(1, text)))
		c.nextSkipping("steps") // the push of the steps, then their ack
		c.nextSkipping("ack")
	}
	c.send(stepsMsg(3, 2, "1", insert(1, text)))
	if m := c.nextSkipping("error"); m.Status != 507 || string(m.ID) != "3" || !strings.Contains(m.Message, "Limits.MaxDocStorage") {
		t.Fatalf("error %s, want 507 for message 3 naming Limits.MaxDocStorage", m.raw)
	}
	c.send(`{"type":"ping"}`)
	c.nextSkipping("pong")
	if v := docVersion(t, e.collabEnv, "w"); v != 2 {
		t.Errorf("version %d after the refusal, want 2", v)
	}
}
