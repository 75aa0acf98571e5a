package server

import (
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/collab"
)

// TestWSInvalidUTF8: a text frame that is not UTF-8 closes the connection
// with 1007 (RFC 6455 §8.1), before or after the hello; an escaped lone
// surrogate in valid UTF-8 JSON is not that, and a ping before the hello
// is answered.
func TestWSInvalidUTF8(t *testing.T) {
	e := newWS(t, Config{}, collab.Config{}, nil)
	for _, hello := range []bool{false, true} {
		c := e.dial(t, "d", false)
		c.send(`{"type":"ping","id":1,"pad":"\ud800"}`)
		if m := c.next("pong"); string(m.ID) != "1" {
			t.Fatalf("pong %s", m.raw)
		}
		if hello {
			c.hello(0, "1")
			c.next("welcome")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := c.c.Write(ctx, websocket.MessageText, []byte("{\"type\":\"ping\",\"id\":2,\"pad\":\"\xff\"}"))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if code, _ := c.closed(0); code != websocket.StatusInvalidFramePayloadData {
			t.Fatalf("hello %v: closed with %d, want 1007", hello, code)
		}
	}
}

// TestHeadCreatesNothing: HEAD /docs/{id} answers 404 for a document that
// does not exist, and does not create it (GET does, as in the demo); for
// one that exists it answers 200 as GET does.
func TestHeadCreatesNothing(t *testing.T) {
	e := newCollab(t, Config{}, collab.Config{})
	if status, _ := e.request(t, "HEAD", "/docs/new", ""); status != 404 {
		t.Fatalf("HEAD of an unknown document: %d, want 404", status)
	}
	if ok, err := e.auth.Exists(context.Background(), "new"); err != nil || ok {
		t.Fatalf("after HEAD the document exists: %v %v", ok, err)
	}
	if status, _ := e.request(t, "GET", "/docs/new", ""); status != 200 {
		t.Fatalf("GET: %d", status)
	}
	if status, _ := e.request(t, "HEAD", "/docs/new", ""); status != 200 {
		t.Fatalf("HEAD of an existing document: %d", status)
	}
}
