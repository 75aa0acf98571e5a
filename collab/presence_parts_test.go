package collab

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/pmauthority/pmauthority/store"
)

// recordingCaster is a store.Broadcaster that keeps what it is given.
type recordingCaster struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recordingCaster) Node() string { return "rec" }
func (r *recordingCaster) Broadcast(topic string, msg []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(topic)+len(msg) > store.MaxBroadcast {
		return fmt.Errorf("a message of %d bytes", len(topic)+len(msg))
	}
	r.msgs = append(r.msgs, string(msg))
	return nil
}
func (r *recordingCaster) SubscribeBroadcasts(string, func(string, []byte)) func() { return func() {} }

// TestBroadcastPresenceParts: the presence of many clients, and of many
// that left, goes in several messages under the limit that hold every
// entry and id once.
func TestBroadcastPresenceParts(t *testing.T) {
	rec := &recordingCaster{}
	a := &Authority{log: slog.New(slog.DiscardHandler)}
	a.peers.caster = rec
	id := strings.Repeat("é", 200)
	var entries []castEntry
	var left []ClientID
	for i := range 300 {
		cid := ClientID(fmt.Sprintf(`"client-%d-%s"`, i, strings.Repeat("x", i%50)))
		info := []byte(`{"name":"` + strings.Repeat("ñ", 60) + `","color":"#aabbcc"}`)
		entries = append(entries, castEntry{Presence{ClientID: cid, Info: info, Anchor: i, Head: i + 1}, ownerOf("", "u")})
		left = append(left, ClientID(fmt.Sprint(1000+i)))
	}
	a.broadcastPresence(id, 3, entries, left)
	if len(rec.msgs) < 3 {
		t.Fatalf("%d messages, want several", len(rec.msgs))
	}
	seen, gone := map[string]bool{}, map[string]bool{}
	for _, raw := range rec.msgs {
		var m presenceMessage
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("%v: %.200s", err, raw)
		}
		if m.Doc != id || m.Version != 3 {
			t.Fatalf("message of doc %.20q at %d", m.Doc, m.Version)
		}
		for _, c := range m.Clients {
			if seen[string(c.ClientID)] || c.Anchor == nil || c.Head == nil || *c.Head != *c.Anchor+1 || c.Owner.User != "u" {
				t.Fatalf("entry %s twice or wrong: %.200s", c.ClientID, raw)
			}
			seen[string(c.ClientID)] = true
		}
		for _, id := range m.Left {
			gone[string(id)] = true
		}
	}
	if len(seen) != 300 || len(gone) != 300 {
		t.Errorf("%d entries and %d left ids, want 300 of each", len(seen), len(gone))
	}
}
