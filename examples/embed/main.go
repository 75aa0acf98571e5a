// Command embed is an app's own Go web server that embeds pmauthority: it
// serves a page of its own at / and mounts the collaboration server (the
// demo pages, the collab API and the WebSocket) under /collab/, with two
// hooks of the app's own.
//
// Run it, then open http://127.0.0.1:8090/ in two browser windows:
//
//	go run ./examples/embed --addr 127.0.0.1:8090 --data /tmp/embed-data
//
// What it shows:
//
//   - The documents are kept in a SQLite file in --data (store/sqlite),
//     served by a collab.Authority that creates a document on first use.
//   - A server.Server answers the collab API and the WebSocket, with the
//     demo pages (web.Handler()). The app's http.ServeMux mounts it with
//     mux.Handle("/collab/", http.StripPrefix("/collab", srv)): the pages
//     use URLs relative to themselves, so the list of documents is at
//     /collab/, an editor at /collab/edit/{id}, its WebSocket at
//     /collab/docs/{id}/ws.
//   - collab.Config.BeforeSubmit is the app's step firewall: it runs after
//     a submission's steps applied in memory and before anything is
//     stored. This app refuses every submission whose steps insert an
//     image; the refusal wraps collab.ErrForbidden, so the server answers
//     403 with the hook's message ("images are not allowed in this app"),
//     over HTTP and over the WebSocket; nothing is stored. The demo
//     editor shows the message and reloads the document, dropping its
//     unconfirmed changes.
//   - collab.Config.AfterCommit runs after the steps are durable, outside
//     the editing path; this app logs each commit (document, versions,
//     steps, author).
//   - SIGINT or SIGTERM stops it gracefully: the HTTP server stops
//     accepting, and the pmauthority server's Shutdown answers the
//     waiting long polls and ends the WebSockets (their clients
//     reconnect); once the requests in flight are finished the authority
//     snapshots the documents and closes, then the store.
//
// Flags:
//
//	--addr HOST:PORT  the address to listen on (default 127.0.0.1:8090)
//	--data DIR        the folder of the SQLite file (default ./embed-data)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store/sqlite"
	"github.com/pmauthority/pmauthority/transform"
	"github.com/pmauthority/pmauthority/web"
)

// appConfig configures newApp.
type appConfig struct {
	// DataDir is the folder of the SQLite file.
	DataDir string
	// Logger gets the server's log and the commits (nil discards them).
	Logger *slog.Logger
	// AllowImages turns the image rule of BeforeSubmit off (the hook still
	// runs). The tests that drive random real editors, which insert
	// images, set it.
	AllowImages bool
}

// shutdownTimeout bounds how long the requests in flight (long polls
// included) may take to finish when the app stops.
const shutdownTimeout = 5 * time.Second

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

// run parses the flags and serves until SIGINT or SIGTERM.
func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("embed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8090", "the address to listen on")
	data := fs.String("data", "./embed-data", "the folder of the SQLite file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	a, err := newApp(appConfig{DataDir: *data, Logger: logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return errors.Join(err, a.Close())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger.Info("serving", "app", "http://"+ln.Addr().String()+"/", "collab", "http://"+ln.Addr().String()+"/collab/")
	if err := serve(ctx, ln, a); err != nil {
		return err
	}
	logger.Info("stopped")
	return nil
}

// serve answers requests on ln until ctx is done, then shuts the HTTP
// server down and closes a. As the shutdown begins, the pmauthority
// server's own Shutdown answers the waiting long polls and ends the
// WebSockets (hijacked connections, which http.Server.Shutdown leaves
// alone); once the requests in flight are done and the WebSocket handlers
// have returned, the authority and the store are closed.
func serve(ctx context.Context, ln net.Listener, a *app) error {
	hs := &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second}
	sctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hs.RegisterOnShutdown(func() { a.srv.Shutdown(sctx) })
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		var stop context.CancelFunc
		sctx, stop = context.WithTimeout(sctx, shutdownTimeout)
		defer stop()
		err = hs.Shutdown(sctx)
		if err != nil {
			// Requests still in flight after the timeout are cut off.
			hs.Close()
		}
		<-errc
		a.srv.Shutdown(sctx) // waits for the WebSocket handlers
	}
	return errors.Join(err, a.Close())
}

// app is the app's handler over its pmauthority server, authority and
// store.
type app struct {
	http.Handler
	srv   *server.Server
	auth  *collab.Authority
	store *sqlite.Store
}

// Close closes the authority, then the store.
func (a *app) Close() error {
	return errors.Join(a.auth.Close(), a.store.Close())
}

// newApp opens the store in cfg.DataDir and returns the app. The caller
// closes it.
func newApp(cfg appConfig) (*app, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	st, err := sqlite.Open(filepath.Join(cfg.DataDir, "embed.db"), sqlite.Options{})
	if err != nil {
		return nil, err
	}
	auth, err := collab.New(collab.Config{
		Store: st,
		Schemas: func(name string) (*model.Schema, bool) {
			s, err := schemas.Get(name)
			return s, err == nil
		},
		DefaultSchema: "basic",
		AutoCreate:    true,
		Logger:        logger,
		BeforeSubmit: func(ctx context.Context, p *collab.Proposal) error {
			if !cfg.AllowImages && insertsImage(p.Steps) {
				return errImages
			}
			return nil
		},
		AfterCommit: func(ctx context.Context, c collab.Commit) error {
			logger.Info("commit", "doc", c.ID, "from", c.From, "to", c.To, "steps", len(c.Steps), "author", c.Author)
			return nil
		},
	})
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	a := &app{auth: auth, store: st}
	srv, err := server.New(server.Config{Collab: auth, Web: web.Handler(), Logger: logger})
	if err != nil {
		return nil, errors.Join(err, a.Close())
	}
	a.srv = srv

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, appPage)
	})
	mux.Handle("/collab/", http.StripPrefix("/collab", srv))
	a.Handler = mux
	return a, nil
}

// errImages is BeforeSubmit's refusal of an image. It matches
// collab.ErrForbidden, so the server answers 403 with its text.
var errImages = refusal("images are not allowed in this app")

// refusal is a refusal of BeforeSubmit whose text is the answer's
// message.
type refusal string

func (r refusal) Error() string { return string(r) }

func (r refusal) Unwrap() error { return collab.ErrForbidden }

// insertsImage reports whether any of steps inserts an image node. Only
// the replace steps add nodes (the content of their slices, including
// what they only move); the other kinds change marks and attributes of
// the nodes in place.
func insertsImage(steps []transform.Step) bool {
	for _, step := range steps {
		var slice model.Slice
		switch s := step.(type) {
		case *transform.ReplaceStep:
			slice = s.Slice
		case *transform.ReplaceAroundStep:
			slice = s.Slice
		case *transform.MarkSetStep:
			if insertsImage(s.Steps) {
				return true
			}
			continue
		default:
			continue
		}
		found := false
		slice.Content.Descendants(func(n *model.Node, _ int, _ *model.Node, _ int) bool {
			if n.Type.Name == "image" {
				found = true
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// appPage is the app's own page, at /. Its links are relative, as the
// demo pages' are.
const appPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>An app with pmauthority</title>
</head>
<body>
<h1>An app with pmauthority</h1>
<p>This page is the app's own. pmauthority is mounted under <code>/collab/</code>:</p>
<ul>
<li><a href="collab/">the documents</a></li>
<li><a href="collab/edit/welcome">the document "welcome"</a> (open it in two windows)</li>
</ul>
<p>This app refuses images: a change that inserts one is dropped.</p>
</body>
</html>
`
