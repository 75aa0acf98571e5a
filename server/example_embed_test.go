package server_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/transform"
	"github.com/pmauthority/pmauthority/web"
)

// An app embeds pmauthority in its own server: it mounts a Server under
// a prefix of its mux with http.StripPrefix (the demo pages of package web
// use relative URLs, so they work there too), and vets every submission
// with a collab.Config.BeforeSubmit hook, here one that refuses the steps
// that delete content. examples/embed is a runnable program that does
// this with SQLite and a few more things.
func Example_embed() {
	auth, err := collab.New(collab.Config{
		Store: memstore.New(),
		Schemas: func(name string) (*model.Schema, bool) {
			s, err := schemas.Get(name)
			return s, err == nil
		},
		AutoCreate: true,
		BeforeSubmit: func(ctx context.Context, p *collab.Proposal) error {
			for _, step := range p.Steps {
				if r, ok := step.(*transform.ReplaceStep); ok && r.To > r.From {
					return fmt.Errorf("%w: this app keeps everything written", collab.ErrForbidden)
				}
			}
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer auth.Close()
	srv, err := server.New(server.Config{Collab: auth, Web: web.Handler(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "the app's own page")
	})
	mux.Handle("/collab/", http.StripPrefix("/collab", srv))
	app := httptest.NewServer(mux)
	defer app.Close()

	do := func(method, path, body string) {
		req, _ := http.NewRequest(method, app.URL+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.Header.Get("Content-Type") == "text/html; charset=utf-8" {
			b = []byte("(a page)")
		}
		fmt.Println(method, path, res.StatusCode, strings.TrimSpace(string(b)))
	}
	insert := `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"Hi"}]}}`
	del := `{"stepType":"replace","from":1,"to":2}`
	do("GET", "/", "")
	do("GET", "/collab/", "")
	do("GET", "/collab/edit/notes", "")
	do("POST", "/collab/docs/notes/events", `{"version":0,"clientID":1,"steps":[`+insert+`]}`)
	do("POST", "/collab/docs/notes/events", `{"version":1,"clientID":1,"steps":[`+del+`]}`)
	do("GET", "/collab/docs/notes", "")
	do("GET", "/docs", "")
	// Output:
	// GET / 200 the app's own page
	// GET /collab/ 200 (a page)
	// GET /collab/edit/notes 200 (a page)
	// POST /collab/docs/notes/events 200 {"version":1,"commentVersion":0}
	// POST /collab/docs/notes/events 403 {"error":{"message":"forbidden: this app keeps everything written"}}
	// GET /collab/docs/notes 200 {"doc":{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Hi"}]}]},"users":1,"version":1,"comments":[],"commentVersion":0}
	// GET /docs 404 404 page not found
}
