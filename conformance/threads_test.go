package conformance

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/server"
)

// TestCollabEditorsThreads runs the collab demo's long-poll editors
// (js/collab-editors.mjs, creating and deleting comments as the demo
// does) while another client replies to, edits, resolves and reopens the
// comments' threads and deletes replies: the demo's client must see none
// of it (the harness fails on a comment event that is not a create or a
// delete, or on a bad range) and converge as in TestCollabEditors, at the
// server's version and comment version (thread operations count in the
// thread version).
func TestCollabEditorsThreads(t *testing.T) {
	node := editorsNode(t, "js/node_modules/prosemirror-collab")
	edits := 2000
	if testing.Short() {
		edits = 400
	}
	cfg := editorsConfig{Editors: 6, Edits: edits, Seed: editorsSeed(t)}
	logger := slog.New(slog.NewTextHandler(&syncBuffer{}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, st, _ := newEditorsAuthority(t, filepath.Join(t.TempDir(), "pmauthority.db"), logger, cfg)
	defer st.Close()
	defer a.Close()
	ctx := context.Background()
	const id = "threads"
	if _, err := a.Create(ctx, id, "basic", editorsStart(t)); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Collab: a, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	base, stop := serveLoopback(t, srv)
	defer stop()

	done := make(chan struct{})
	ops := make(chan int, 1)
	go func() {
		rng := rand.New(rand.NewPCG(cfg.Seed, 7))
		n := 0
		defer func() { ops <- n }()
		for next := int64(1 << 40); ; next++ {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			s, err := a.Get(ctx, id, "")
			if err != nil || len(s.Comments) == 0 {
				continue
			}
			c := s.Comments[rng.IntN(len(s.Comments))]
			e := collab.CommentEvent{ID: c.ID}
			switch k := rng.IntN(6); {
			case k < 2:
				e = collab.CommentEvent{Type: collab.CommentReply, ID: next, Thread: c.ID, Text: "a reply"}
			case k == 2:
				e.Type, e.Text = collab.CommentEdit, c.Text+"!"
			case k == 3 && len(c.Replies) > 0:
				e = collab.CommentEvent{Type: collab.CommentDeleteReply, ID: c.Replies[0].ID}
			case c.Resolved:
				e.Type = collab.CommentReopen
			default:
				e.Type = collab.CommentResolve
			}
			// Comment-only at the version read: a conflict when the
			// editors moved on meanwhile, tried again with the next.
			if _, err := a.Submit(ctx, id, "", collab.Submission{Version: s.Version, Comments: []collab.CommentEvent{e}}); err == nil {
				n++
			}
		}
	}()
	run := runEditors(t, node, base, []string{id}, cfg)
	close(done)
	n := <-ops
	run.check(t, cfg.Edits)
	if n < 20 {
		t.Errorf("%d thread operations during the run, want more", n)
	}

	var final collabDocState
	getJSON(t, base+"/docs/"+id, &final)
	for _, e := range run.editors {
		if e.Version != final.Version || e.CommentVersion != final.CommentVersion || !bytes.Equal(e.Doc, final.Doc) || e.Sendable {
			t.Errorf("editor %d: version %d, comment version %d, sendable %t, document %s; the server's at %d, %d",
				e.Editor, e.Version, e.CommentVersion, e.Sendable, firstDifference(e.Doc, final.Doc), final.Version, final.CommentVersion)
		}
	}
	s, err := a.Get(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	replies := 0
	for _, c := range s.Comments {
		replies += len(c.Replies)
	}
	if s.ThreadVersion < int64(n) {
		t.Errorf("thread version %d after %d thread operations", s.ThreadVersion, n)
	}
	t.Logf("%d thread operations (thread version %d); %d comments with %d replies at the end", n, s.ThreadVersion, len(s.Comments), replies)
}
