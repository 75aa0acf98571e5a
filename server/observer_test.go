package server

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
)

// recordingObserver is an Observer that counts what it is told.
type recordingObserver struct {
	mu          sync.Mutex
	requests    map[string]int // "route code"
	submissions map[string]int // "transport result"
	conns       map[Transport]int
	drops       int
}

func newRecordingObserver() *recordingObserver {
	return &recordingObserver{requests: map[string]int{}, submissions: map[string]int{}, conns: map[Transport]int{}}
}

func (o *recordingObserver) Request(route string, status int, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests[route+" "+strconv.Itoa(status)]++
}

func (o *recordingObserver) Submission(t Transport, r SubmissionResult) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.submissions[string(t)+" "+string(r)]++
}

func (o *recordingObserver) Connections(t Transport, delta int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.conns[t] += delta
}

func (o *recordingObserver) DeliveryDropped() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.drops++
}

func (o *recordingObserver) get(f func(o *recordingObserver) int) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return f(o)
}

// TestObserverWebSocket: a slow WebSocket's queue overflow is one
// delivery drop; WebSockets are counted open and closed; WebSocket
// submissions are counted by result.
func TestObserverWebSocket(t *testing.T) {
	obs := newRecordingObserver()
	e := newWS(t, Config{Observer: obs}, collab.Config{Limits: collab.Limits{Limits: apply.Limits{MaxDocSize: 1 << 30}}}, func(h *wsHubs) { h.queueLen = 4 })
	fast := e.dial(t, "d", false)
	fast.hello(0, "1")
	fast.next("welcome")
	slow := e.dial(t, "d", true)
	slow.hello(0, "2")
	waitFor(t, func() bool { return e.wsConns("d") == 2 })
	if n := obs.get(func(o *recordingObserver) int { return o.conns[TransportWebSocket] }); n != 2 {
		t.Fatalf("%d WebSockets counted open, want 2", n)
	}
	big := strings.Repeat("x", 32<<10)
	para := `{"stepType":"replace","from":0,"to":0,"slice":{"content":[{"type":"paragraph","content":[{"type":"text","text":"` + big + `"}]}]}}`
	for v := range 40 {
		e.post(t, "d", v, "9", para)
		fast.nextSkipping("steps")
	}
	waitFor(t, func() bool { return e.wsConns("d") == 1 })
	if code, _ := slow.closed(40); code != wsCloseTooSlow {
		t.Fatalf("slow client closed with %d, want 4008", code)
	}
	if n := obs.get(func(o *recordingObserver) int { return o.drops }); n != 1 {
		t.Errorf("%d delivery drops, want 1", n)
	}
	waitFor(t, func() bool {
		return obs.get(func(o *recordingObserver) int { return o.conns[TransportWebSocket] }) == 1
	})

	fast.send(`{"type":"steps","id":1,"version":40,"clientID":1,"steps":[` + insert(1, "a") + `]}`)
	fast.nextSkipping("steps")
	fast.nextSkipping("ack")
	fast.send(`{"type":"steps","id":2,"version":40,"clientID":1,"steps":[` + insert(1, "a") + `]}`)
	fast.nextSkipping("conflict")
	fast.send(`{"type":"steps","id":3,"version":41,"clientID":1,"steps":[{"stepType":"replace","from":999999999,"to":999999999}]}`)
	fast.nextSkipping("error")
	fast.send(`{"type":"steps","id":"x","version":41,"clientID":1,"steps":[]}`)
	fast.nextSkipping("error")
	// A submission is counted once it is answered: the answer may come
	// first.
	for key, want := range map[string]int{"websocket accepted": 1, "websocket conflict": 1, "websocket rejected": 2, "longpoll accepted": 40} {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			n := obs.get(func(o *recordingObserver) int { return o.submissions[key] })
			if n == want {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("submissions %s: %d, want %d", key, n, want)
				break
			}
		}
	}
	if n := obs.get(func(o *recordingObserver) int { return o.requests["GET /docs/{id}/ws 101"] }); n != 2 {
		t.Errorf("%d WebSocket upgrades counted, want 2", n)
	}
}
