package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestDialToken checks that dial sends the token in its hello, and no
// token field when it has none.
func TestDialToken(t *testing.T) {
	hellos := make(chan map[string]any, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"pmauthority.v1"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		_, msg, err := c.Read(r.Context())
		if err != nil {
			return
		}
		var hello map[string]any
		if err := json.Unmarshal(msg, &hello); err != nil {
			hello = map[string]any{"invalid": string(msg)}
		}
		hellos <- hello
		c.Write(r.Context(), websocket.MessageText, []byte(`{"type":"welcome","version":7}`))
		c.Read(r.Context()) // until the client closes
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, token := range []string{"abc.def.ghi", ""} {
		c, v, err := dial(ctx, addr, "d", token, 3, false)
		if err != nil {
			t.Fatalf("token %q: %v", token, err)
		}
		c.Close(websocket.StatusNormalClosure, "")
		hello := <-hellos
		got, has := hello["token"]
		if v != 7 || hello["type"] != "hello" || hello["clientID"] != 3.0 ||
			token != "" && got != token || token == "" && has {
			t.Errorf("token %q: version %d, hello %v", token, v, hello)
		}
	}
}
