package server_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/pmauthority/pmauthority/server"
)

// A Server is an http.Handler: here it answers prosemirror-v8-perf's
// request with the text schema as the default.
func ExampleServer() {
	s, err := server.New(server.Config{DefaultSchema: "text"})
	if err != nil {
		log.Fatal(err)
	}
	body := `{"steps":[{"stepType":"replace","from":0,"to":0,"slice":{"content":[{"type":"text","text":"Hello"}]}}],"doc": {"type":"doc"}}`
	r := httptest.NewRequest("POST", "/v1/apply", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("Content-Type"))
	fmt.Println(w.Body)

	// A step that does not fit the document.
	r = httptest.NewRequest("POST", "/v1/apply", strings.NewReader(`{"doc":{"type":"doc"},"steps":[{"stepType":"replace","from":3,"to":3}]}`))
	w = httptest.NewRecorder()
	s.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Body)
	// Output:
	// 200 application/json; charset=utf-8
	// {"doc":{"type":"doc","content":[{"type":"text","text":"Hello"}]}}
	// 422 {"error":{"step":0,"message":"Position 3 out of range"}}
}

// Serve runs a Server on a listener until its context ends, then stops
// gracefully.
func ExampleServer_Serve() {
	s, err := server.New(server.Config{Logger: discardLogger()})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Serve(ctx, ln) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/v1/schemas")
	if err != nil {
		log.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(b))

	stop() // as SIGTERM does in `pmauthority serve`
	fmt.Println(<-done)
	// Output:
	// {"default":"basic","schemas":["basic","suggest","text"]}
	// <nil>
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
