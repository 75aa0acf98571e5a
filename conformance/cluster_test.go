//go:build linux

package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/pgtest"
	"github.com/pmauthority/pmauthority/store/postgres"
)

// TestClusterEditors runs three pmauthority serve processes (the real
// binary) on one PostgreSQL database (pgtest's throwaway cluster) and
// the real-editor harness against them: 12 editors, 6 of them over
// WebSocket, on three documents at once, each document's editors spread
// over the three nodes, its two WebSocket editors on two different
// ones, and every node serving editors of both kinds (editorURLs).
// The harness's checks must pass; every node must serve the same
// document, version and comments for each document; and each document
// must be the replay of the step log stored in PostgreSQL (checked on
// every node, whose events since version 0 must be the stored steps).
// Presence and users cross the nodes (checkAcrossNodes): each WebSocket
// editor is sent the selections of the other; every node counts all the
// editors of each document, each a user of its own (X-Forwarded-For,
// the nodes trusting it), which no node has alone; and a long poll on
// one node is answered when a user comes on another.
func TestClusterEditors(t *testing.T) {
	node := editorsNode(t, "js/node_modules/ws")
	if _, err := os.Stat("../web/src/client.js"); err != nil {
		t.Fatalf("the WebSocket client module: %v", err)
	}
	url := pgtest.URL(t)
	edits, reconnectEvery := 3000, 60
	if testing.Short() {
		edits, reconnectEvery = 300, 20
	}
	cfg := editorsConfig{Editors: 12, WS: 6, Edits: edits, ReconnectEvery: reconnectEvery, Seed: editorsSeed(t),
		Forwarded: true}
	docIDs := []string{"cluster-a", "cluster-b", "cluster-c"}
	c := startCluster(t, url, docIDs)

	count := countNotifies(t, url)
	start := time.Now()
	run := runEditors(t, node, c.editorURLs(cfg.Editors, cfg.WS, len(docIDs)), docIDs, cfg)
	secs := time.Since(start).Seconds()
	n := count()
	t.Logf("NOTIFY in %.1f s: %d step notices (%.0f/s), %d broadcast payloads (%.0f/s, %.0f/s a node) of %d bytes on average",
		secs, n.notices, float64(n.notices)/secs, n.casts, float64(n.casts)/secs, float64(n.casts)/secs/3, n.castBytes/max(n.casts, 1))
	run.check(t, cfg.Edits)
	run.checkWS(t, cfg)
	c.checkDocs(t, docIDs, run, cfg)
	c.checkAcrossNodes(t, run, cfg, len(docIDs))
}

// TestClusterKill runs the same editors (without comments, which are not
// safe to resend) and kills node 2 with SIGKILL in the middle of the
// run, restarting it on the same address a second later. Its WebSocket
// editors resume through the client's back-off, its long-poll editors
// try again (a POST whose answer was lost is resent, and answers 409
// when it was committed); everything must converge as in
// TestClusterEditors, with nothing acknowledged lost: every step an
// editor was told was accepted is in the stored log, which replays to
// every node's document.
func TestClusterKill(t *testing.T) {
	node := editorsNode(t, "js/node_modules/ws")
	if _, err := os.Stat("../web/src/client.js"); err != nil {
		t.Fatalf("the WebSocket client module: %v", err)
	}
	url := pgtest.URL(t)
	edits := 3000
	if testing.Short() {
		edits = 600
	}
	cfg := editorsConfig{Editors: 12, WS: 6, Edits: edits, ReconnectEvery: 60, Seed: editorsSeed(t),
		NoComments: true, Faults: true}
	docIDs := []string{"kill-a", "kill-b", "kill-c"}
	c := startCluster(t, url, docIDs)

	ran := make(chan editorsRun, 1)
	go func() { ran <- runEditors(t, node, c.editorURLs(cfg.Editors, cfg.WS, len(docIDs)), docIDs, cfg) }()
	// Kill node 2 once a fifth of the steps are in (about; rebases drop
	// some), restart it a second later.
	ctx := context.Background()
	var at int64
	for {
		var sum int64
		for _, id := range docIDs {
			h, err := c.st.Load(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			sum += h.Version
		}
		if sum >= int64(edits/5) {
			at = sum
			break
		}
		select {
		case run := <-ran:
			t.Fatalf("the harness ended before the kill, at %d steps:\n%s", sum, lastLines(run.stderr, 20))
		case <-time.After(20 * time.Millisecond):
		}
	}
	p := c.nodes[2]
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	time.Sleep(time.Second)
	c.nodes[2] = c.start(t, p.addr)
	t.Logf("node 2 killed at %d steps in all, restarted on %s", at, p.addr)

	run := <-ran
	run.check(t, cfg.Edits)
	run.checkWS(t, cfg)
	s := run.summary
	// The node's editors met its death: long-poll requests failed, and
	// WebSockets closed under them or (when it died between two of their
	// connections) failed to connect.
	if s.NetErrors == 0 || s.WS.ServerCloses["1006"]+s.WS.FailedConnects == 0 {
		t.Errorf("summary: %d long-poll requests failed on the network, %d WebSockets closed by the dying server, %d failed to connect: want some of each kind",
			s.NetErrors, s.WS.ServerCloses["1006"], s.WS.FailedConnects)
	}
	t.Logf("kill: %d long-poll requests failed and tried again, %d own steps confirmed by polls; %d WebSockets closed by the dying server, %d connection attempts failed",
		s.NetErrors, s.ConfirmedByEvents, s.WS.ServerCloses["1006"], s.WS.FailedConnects)
	c.checkDocs(t, docIDs, run, cfg)
}

// notifyCount counts the NOTIFYs of the nodes.
type notifyCount struct {
	notices, casts, castBytes int
}

// countNotifies listens to the nodes' channels on the database at url
// until the returned function is called, which returns the counts.
func countNotifies(t *testing.T, url string) func() notifyCount {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range []string{"pmauthority", "pmauthority_cast"} {
		if _, err := conn.Exec(ctx, "LISTEN "+ch); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan notifyCount)
	go func() {
		var n notifyCount
		for {
			note, err := conn.WaitForNotification(ctx)
			if err != nil {
				conn.Close(context.Background())
				done <- n
				return
			}
			if note.Channel == "pmauthority" {
				n.notices++
			} else {
				n.casts++
				n.castBytes += len(note.Payload)
			}
		}
	}()
	return func() notifyCount {
		cancel()
		return <-done
	}
}

// cluster is three serve processes on one PostgreSQL database, and a
// store opened on it for the checks.
type cluster struct {
	bin   string
	url   string
	nodes []*hostileProc
	st    *postgres.Store
}

// clusterFlags are the flags of every node: the editors all come from
// 127.0.0.1, faster than one client may submit by default, and may say
// who they are with X-Forwarded-For (editorsConfig.Forwarded).
var clusterFlags = []string{"--store", "postgres", "--max-submissions", "1000000", "--max-ws-messages", "100000", "--snapshot-every", "200",
	"--trust-proxy"}

// startCluster creates the documents docIDs (editorsStartDoc, through an
// authority on the database at url) and starts three nodes on it.
func startCluster(t *testing.T, url string, docIDs []string) *cluster {
	t.Helper()
	ctx := context.Background()
	st, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := collab.New(collab.Config{Store: st, Schemas: collabSchemas, DefaultSchema: "basic",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	start := editorsStart(t)
	for _, id := range docIDs {
		if _, err := a.Create(ctx, id, "basic", start); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	c := &cluster{bin: stepsBuildCLI(t), url: url, st: st}
	for range 3 {
		c.nodes = append(c.nodes, c.start(t, "127.0.0.1:0"))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, p := range c.nodes {
				t.Logf("node %d log:\n%s", i, lastLines(p.log.String(), 30))
			}
		}
	})
	return c
}

// start starts a node listening on addr.
func (c *cluster) start(t *testing.T, addr string) *hostileProc {
	t.Helper()
	args := append([]string{"--postgres-url", c.url, "--addr", addr}, clusterFlags...)
	return startHostile(t, c.bin, t.TempDir(), nil, args...)
}

// editorURLs returns the harness's --url: one URL per editor (editor i
// takes URL i). Editor i edits document d = i mod docs, as its k-th
// editor (k = i div docs), on node (d + k) mod 3 (editorNode). The
// WebSocket editors are the first ws: with 12 editors, 6 over WebSocket,
// on 3 documents, each document has editors on all three nodes, its two
// WebSocket editors on two of them, and each node serves both kinds.
func (c *cluster) editorURLs(editors, ws, docs int) string {
	urls := make([]string, editors)
	for i := range urls {
		urls[i] = c.nodes[editorNode(i, docs, len(c.nodes))].base
	}
	return strings.Join(urls, ",")
}

// editorNode returns the node of editor i (editorURLs).
func editorNode(i, docs, nodes int) int {
	return (i%docs + i/docs) % nodes
}

// checkAcrossNodes checks that presence and users crossed the nodes:
// every WebSocket editor was sent the selection of every other
// WebSocket editor of its document, on another node; every node counts,
// for each document, its editors (each a user of its own, through
// X-Forwarded-For) and the harness (127.0.0.1, as the test's own
// requests), where a node that counted only its own users would count at
// most three; and a long poll waiting on one node is answered when a
// user comes on another.
func (c *cluster) checkAcrossNodes(t *testing.T, run editorsRun, cfg editorsConfig, docs int) {
	t.Helper()
	if !cfg.Forwarded {
		t.Fatal("checkAcrossNodes needs editors with addresses of their own (cfg.Forwarded)")
	}
	byDoc := map[string][]editorLine{}
	var ids []string
	for _, e := range run.editors {
		if byDoc[e.DocID] == nil {
			ids = append(ids, e.DocID)
		}
		byDoc[e.DocID] = append(byDoc[e.DocID], e)
	}
	slices.Sort(ids)
	for _, id := range ids {
		es := byDoc[id]
		// What the editors were told while editing, for the log: the
		// count may reach a node after an editor's last answer.
		var told []string
		nodes := map[int]bool{}
		for _, e := range es {
			node := editorNode(e.Editor, docs, len(c.nodes))
			nodes[node] = true
			told = append(told, fmt.Sprintf("editor %d (%s, node %d): %d", e.Editor, e.Transport, node, e.MaxUsers))
			if e.Transport != "ws" {
				continue
			}
			from := map[string]bool{}
			for _, cid := range e.PresenceFrom {
				from[string(cid)] = true
			}
			for _, o := range es {
				if o.Transport != "ws" || o.Editor == e.Editor {
					continue
				}
				if other := editorNode(o.Editor, docs, len(c.nodes)); other == node {
					t.Errorf("%s: WebSocket editors %d and %d on one node: the test wants them apart", id, e.Editor, o.Editor)
				} else if !from[string(o.ClientID)] {
					t.Errorf("%s: WebSocket editor %d (node %d) was never sent a selection of editor %d (node %d); it had %d clients'",
						id, e.Editor, node, o.Editor, other, len(from))
				}
			}
		}
		t.Logf("%s: users told at most while editing: %s", id, strings.Join(told, ", "))
		if len(nodes) != len(c.nodes) {
			t.Errorf("%s: editors on %d nodes, want all %d", id, len(nodes), len(c.nodes))
		}
		want := len(es) + 1
		for i, p := range c.nodes {
			var got collabUsers
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				got = getUsers(t, context.Background(), p.base+"/docs/"+id, "")
				if got.Users == want || time.Now().After(deadline) {
					break
				}
			}
			if got.Users != want {
				t.Errorf("%s: node %d counts %d users, want %d: the editors on every node and the harness", id, i, got.Users, want)
			}
		}
	}
	// A long poll on node 0 (of a new user) waits; a new user on node 1
	// answers it. The poll must be waiting before the user comes, which
	// the test cannot see: an attempt whose poll started late is not
	// answered, and the test tries again with new users.
	id := ids[0]
	answered := false
	for try := 0; try < 3 && !answered; try++ {
		poller, newcomer := fmt.Sprintf("10.200.%d.1", try), fmt.Sprintf("10.200.%d.2", try)
		st := getUsers(t, context.Background(), c.nodes[0].base+"/docs/"+id, poller)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		answer := make(chan collabUsers, 1)
		go func() {
			answer <- getUsers(t, ctx, fmt.Sprintf("%s/docs/%s/events?version=%d&commentVersion=%d", c.nodes[0].base, id, st.Version, st.CommentVersion), poller)
		}()
		time.Sleep(300 * time.Millisecond)
		getUsers(t, context.Background(), c.nodes[1].base+"/docs/"+id, newcomer)
		got := <-answer
		cancel()
		if got.Users == 0 && ctx.Err() != nil {
			t.Logf("%s: try %d: the long poll on node 0 was not answered: it may have started waiting after the user came", id, try)
			continue
		}
		answered = true
		if got.Users != st.Users+1 {
			t.Errorf("%s: the long poll on node 0 answered %d users after a user came on node 1, want %d", id, got.Users, st.Users+1)
		}
	}
	if !answered {
		t.Errorf("%s: no long poll on node 0 was answered when a user came on node 1", id)
	}
}

// collabUsers is what checkAcrossNodes reads of GET /docs/{id} and of
// an events answer.
type collabUsers struct {
	Users          int   `json:"users"`
	Version        int64 `json:"version"`
	CommentVersion int64 `json:"commentVersion"`
}

// getUsers GETs url, as the user forwardedFor when not empty; a request
// that ctx ends returns the zero collabUsers.
func getUsers(t *testing.T, ctx context.Context, url, forwardedFor string) collabUsers {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Error(err)
		return collabUsers{}
	}
	if forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", forwardedFor)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			t.Error(err)
		}
		return collabUsers{}
	}
	defer resp.Body.Close()
	var u collabUsers
	if err := json.NewDecoder(resp.Body).Decode(&u); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s, %v", url, resp.Status, err)
	}
	return u
}

// checkDocs checks every document on every node: checkEditorsDoc against
// the PostgreSQL store (the editors, the replayed step log, the events),
// and the nodes' states equal.
func (c *cluster) checkDocs(t *testing.T, docIDs []string, run editorsRun, cfg editorsConfig) {
	t.Helper()
	start := editorsStart(t)
	for _, id := range docIDs {
		finals := make([]collabDocState, len(c.nodes))
		for i, p := range c.nodes {
			finals[i] = checkEditorsDoc(t, p.base, c.st, start, id, run, cfg)
		}
		for i, f := range finals[1:] {
			if !bytes.Equal(f.Doc, finals[0].Doc) || f.Version != finals[0].Version ||
				f.CommentVersion != finals[0].CommentVersion || !bytes.Equal(f.Comments, finals[0].Comments) {
				t.Errorf("%s: node %d is at version %d, comment version %d, comments %s; node 0 at %d, %d, %s; documents %s",
					id, i+1, f.Version, f.CommentVersion, clip(string(f.Comments)),
					finals[0].Version, finals[0].CommentVersion, clip(string(finals[0].Comments)), firstDifference(f.Doc, finals[0].Doc))
			}
		}
		t.Logf("%s: every node at version %d, comment version %d", id, finals[0].Version, finals[0].CommentVersion)
	}
}
