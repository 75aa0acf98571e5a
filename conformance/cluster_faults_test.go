//go:build linux

package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmauthority/pmauthority/internal/pgtest"
	"github.com/pmauthority/pmauthority/internal/testutil"
	"github.com/pmauthority/pmauthority/transform"
)

// The fault tests of a cluster (docs/cluster.md, "Failures"): three
// serve processes on one PostgreSQL, the real-editor harness on three
// documents, and the database failing under them.

// TestClusterPostgresRestart stops PostgreSQL (a fast shutdown: every
// connection ends) while the editors of TestClusterKill's run type, and
// starts it again 2 seconds later on its data. While it is down, a
// submission to any node answers 503 with a Retry-After (checked here
// with a POST to each node, and met by the editors: long-poll POSTs 503,
// WebSocket errors 503); the editors keep their steps and send them
// again, and once the database is back everything converges and equals
// the replayed log, with nothing acknowledged lost (checkDocs). Every
// node's listener lost its connection and reconnected (its log says so),
// after which it re-checks its loaded documents.
func TestClusterPostgresRestart(t *testing.T) {
	node := editorsNode(t, "js/node_modules/ws")
	if _, err := os.Stat("../web/src/client.js"); err != nil {
		t.Fatalf("the WebSocket client module: %v", err)
	}
	url := pgtest.URL(t)
	edits := 2400
	if testing.Short() {
		edits = 900
	}
	cfg := editorsConfig{Editors: 12, WS: 6, Edits: edits, ReconnectEvery: 60, Seed: editorsSeed(t),
		NoComments: true, Faults: true}
	docIDs := []string{"restart-a", "restart-b", "restart-c"}
	c := startCluster(t, url, docIDs)

	ran := make(chan editorsRun, 1)
	go func() { ran <- runEditors(t, node, c.editorURLs(cfg.Editors, cfg.WS, len(docIDs)), docIDs, cfg) }()
	before := c.waitVersions(t, docIDs, int64(edits/4), ran)

	pgtest.Stop(t)
	stopped := time.Now()
	defer func() {
		if pgtest.Stopped() {
			pgtest.Start(t)
		}
	}()
	// A submission to each node, at the version its memory has, while
	// the database is down: 503 with a Retry-After, whole seconds.
	time.Sleep(300 * time.Millisecond)
	for i, p := range c.nodes {
		id := docIDs[i%len(docIDs)]
		status, body, header := c.postNoop(t, p, id, 0x7fff0000+int64(i))
		if status != http.StatusServiceUnavailable || header.Get("Retry-After") != "1" {
			t.Errorf("node %d: POST /docs/%s/events with PostgreSQL down: %d, Retry-After %q: %s",
				i, id, status, header.Get("Retry-After"), clip(string(body)))
		}
	}
	time.Sleep(2*time.Second - time.Since(stopped))
	pgtest.Start(t)
	back := time.Now()
	down := c.waitVersions(t, docIDs, 0, ran) // the steps committed before the shutdown
	after := c.waitVersions(t, docIDs, down+1, ran)
	t.Logf("PostgreSQL stopped (at %d steps in all when asked to, %d once down), down %v; the first commit after it was back came %v later (%d steps then)",
		before, down, back.Sub(stopped).Round(time.Millisecond), time.Since(back).Round(time.Millisecond), after)

	run := <-ran
	run.check(t, cfg.Edits)
	run.checkWS(t, cfg)
	run.checkKept(t)
	s := run.summary
	if s.Unavailable == 0 || s.WS.Unavailable == 0 {
		t.Errorf("summary: %d long-poll answers 503, %d WebSocket errors 503: want some of each", s.Unavailable, s.WS.Unavailable)
	}
	t.Logf("restart: %d long-poll answers 503 (tried again after their Retry-After), %d network errors, %d own steps confirmed by polls; "+
		"%d WebSocket errors 503 (%d notices), %d hellos refused",
		s.Unavailable, s.NetErrors, s.ConfirmedByEvents, s.WS.Unavailable, s.WS.UnavailableNotices, s.WS.FailedConnects)
	for i, p := range c.nodes {
		if log := p.log.String(); !strings.Contains(log, "the listener lost its connection") {
			t.Errorf("node %d: its listener did not log losing its connection:\n%s", i, lastLines(log, 20))
		}
	}
	c.checkDocs(t, docIDs, run, cfg)
}

// TestClusterTerminate terminates the database connections of node 1
// (pg_terminate_backend, the backends whose application_name is node
// 1's), over and over while the editors type: every 5 ms those running
// a statement (most of them a commit: an append), and every 300 ms all
// of them, its listener's included, until the documents have taken
// steps for half the edits (about three quarters of the run). A commit cut so may or may not have committed: the node
// answers 503, re-reads the document (or, the database refusing it too,
// learns at the client's resend, which conflicts on the key (doc_id,
// version)), and the client's steps, when they committed, come back to
// it as its own by their client id. So no step is doubled or lost:
// every editor's steps in the log are those it had acknowledged, plus
// at most those in doubt, and the log replays to every node's document
// (checkDocs).
func TestClusterTerminate(t *testing.T) {
	node := editorsNode(t, "js/node_modules/ws")
	if _, err := os.Stat("../web/src/client.js"); err != nil {
		t.Fatalf("the WebSocket client module: %v", err)
	}
	url := pgtest.URL(t)
	edits := 2400
	if testing.Short() {
		edits = 900
	}
	cfg := editorsConfig{Editors: 12, WS: 6, Edits: edits, ReconnectEvery: 60, Seed: editorsSeed(t),
		NoComments: true, Faults: true}
	docIDs := []string{"terminate-a", "terminate-b", "terminate-c"}
	c := startCluster(t, url, docIDs)
	// Node 1 again, its connections named.
	const app = "pma-node-1"
	c.nodes[1].stop()
	c.nodes[1] = c.startNamed(t, "127.0.0.1:0", app)

	ran := make(chan editorsRun, 1)
	go func() { ran <- runEditors(t, node, c.editorURLs(cfg.Editors, cfg.WS, len(docIDs)), docIDs, cfg) }()
	ctx := context.Background()
	killer, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close(ctx)
	c.waitVersions(t, docIDs, 50, ran)
	var active, appends, all, rounds int64
	var run editorsRun
	ended := false
	last := time.Now()
	for !ended {
		var sum int64
		for _, id := range docIDs {
			h, err := c.st.Load(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			sum += h.Version
		}
		if sum >= int64(edits)/2 {
			break
		}
		select {
		case run = <-ran:
			ended = true
		default:
		}
		which := "state = 'active'"
		if time.Since(last) >= 300*time.Millisecond {
			which, last = "true", time.Now()
		}
		rows, err := killer.Query(ctx, `
			SELECT pg_terminate_backend(pid), coalesce(state = 'active', false), coalesce(query LIKE '%pma_steps%', false)
			FROM pg_stat_activity WHERE application_name = $1 AND `+which, app)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var ok, isActive, isAppend bool
			if err := rows.Scan(&ok, &isActive, &isAppend); err != nil {
				t.Fatal(err)
			}
			if !ok {
				continue
			}
			if which == "true" {
				all++
			}
			if isActive {
				active++
			}
			if isActive && isAppend {
				appends++
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rounds++
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("terminated %d backends of node 1 in %d rounds: %d running a statement (%d of them an append), %d in the rounds of all",
		active+all, rounds, active, appends, all)
	if appends == 0 {
		t.Errorf("no backend of node 1 terminated during an append")
	}

	if !ended {
		run = <-ran
	}
	run.check(t, cfg.Edits)
	run.checkWS(t, cfg)
	run.checkKept(t)
	s := run.summary
	if s.Unavailable+s.WS.Unavailable == 0 {
		t.Errorf("summary: no answer 503 to node 1's editors")
	}
	t.Logf("terminate: %d long-poll answers 503, %d own steps confirmed by polls; %d WebSocket errors 503, %d hellos refused; %d WebSocket own steps confirmed on resume",
		s.Unavailable, s.ConfirmedByEvents, s.WS.Unavailable, s.WS.FailedConnects, s.WS.ConfirmedOnResume)
	if log := c.nodes[1].log.String(); !strings.Contains(log, "the listener lost its connection") {
		t.Errorf("node 1: its listener did not log losing its connection:\n%s", lastLines(log, 20))
	}
	c.checkDocs(t, docIDs, run, cfg)
}

// TestClusterRace makes two nodes take a submission at the same version
// of one document at once, 2000 times (two POSTs sent together, one to
// each node, each inserting its own letter): every time exactly one
// answers 200 with the next version and the other 409 "Version not
// current", whichever node's memory had heard of the other's last
// commit. The log ends contiguous at version 2000, each version the
// step of the round's winner (by its client id), and both nodes serve
// the document that it replays to. Each node wins some rounds.
func TestClusterRace(t *testing.T) {
	url := pgtest.URL(t)
	rounds := 2000
	if testing.Short() {
		rounds = 500
	}
	const id = "race"
	c := startCluster(t, url, []string{id})
	a, b := c.nodes[0], c.nodes[2]
	winners := make([]int, 0, rounds) // 0 for a, 1 for b
	type answer struct {
		status int
		body   []byte
		err    error
	}
	post := func(p *hostileProc, version int64, client int, letter string) answer {
		body := fmt.Sprintf(`{"version":%d,"clientID":%d,"steps":[{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":%q}]}}]}`,
			version, client, letter)
		status, resp, _, err := p.do("POST", "/docs/"+id+"/events", "application/json", []byte(body), nil)
		return answer{status, resp, err}
	}
	start := time.Now()
	for v := int64(0); v < int64(rounds); v++ {
		var wg sync.WaitGroup
		var ans [2]answer
		for i, p := range []*hostileProc{a, b} {
			wg.Go(func() { ans[i] = post(p, v, i+1, string(rune('a'+i))) })
		}
		wg.Wait()
		won := -1
		for i, x := range ans {
			switch {
			case x.err != nil:
				t.Fatalf("round %d: node %d: %v", v, i, x.err)
			case x.status == http.StatusOK:
				var r struct{ Version int64 }
				if err := json.Unmarshal(x.body, &r); err != nil || r.Version != v+1 {
					t.Fatalf("round %d: node %d answered 200 %s: want version %d", v, i, x.body, v+1)
				}
				if won >= 0 {
					t.Fatalf("round %d: both nodes took a submission at version %d", v, v)
				}
				won = i
			case x.status == http.StatusConflict && strings.Contains(string(x.body), "Version not current"):
			default:
				t.Fatalf("round %d: node %d answered %d: %s", v, i, x.status, clip(string(x.body)))
			}
		}
		if won < 0 {
			t.Fatalf("round %d: both nodes answered 409", v)
		}
		winners = append(winners, won)
	}
	took := time.Since(start)
	var wins [2]int
	for _, w := range winners {
		wins[w]++
	}
	t.Logf("%d rounds in %v: node 0 won %d, node 2 won %d", rounds, took.Round(time.Millisecond), wins[0], wins[1])
	if wins[0] == 0 || wins[1] == 0 {
		t.Errorf("one node won every round: %v", wins)
	}

	ctx := context.Background()
	head, err := c.st.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if head.Version != int64(rounds) {
		t.Fatalf("store: version %d after %d rounds", head.Version, rounds)
	}
	steps, err := c.st.Steps(ctx, id, 0, head.Version)
	if err != nil {
		t.Fatal(err)
	}
	doc := editorsStart(t)
	for i, s := range steps {
		if s.Version != int64(i+1) || string(s.ClientID) != fmt.Sprint(winners[i]+1) {
			t.Fatalf("store: step %d is version %d from client %s; round %d was won by client %d", i, s.Version, s.ClientID, i, winners[i]+1)
		}
		step, err := transform.StepFromJSON(doc.Type.Schema, s.JSON)
		if err == nil {
			doc, err = step.Apply(doc)
		}
		if err != nil {
			t.Fatalf("store: step %d: %v", s.Version, err)
		}
	}
	want := doc.AppendJSON(nil)
	for i, p := range []*hostileProc{a, b} {
		st := getDocState(t, p.base+"/docs/"+id)
		if st.Version != int64(rounds) || !bytes.Equal(st.Doc, want) {
			t.Errorf("node %d: version %d, want %d; document %s", i, st.Version, rounds, firstDifference(st.Doc, want))
		}
	}
}

// checkKept checks that the editors kept every edit through the faults:
// none reloaded its document (a 410 or a snapshot on resume), so that
// each of their steps was accepted or dropped in a rebase, none lost or
// left in doubt (run.check and checkWS count them).
func (r editorsRun) checkKept(t *testing.T) {
	t.Helper()
	s := r.summary
	if s.StepsLost != 0 || s.StepsInDoubt != 0 || s.HistoryGone != 0 || s.WS.HistoryGone != 0 {
		t.Errorf("summary: %d steps lost in reloads, %d in doubt, %d answers 410, %d snapshots on resume: want none",
			s.StepsLost, s.StepsInDoubt, s.HistoryGone, s.WS.HistoryGone)
	}
}

// startNamed starts a node listening on addr whose database connections
// have the application_name app.
func (c *cluster) startNamed(t *testing.T, addr, app string) *hostileProc {
	t.Helper()
	sep := "?"
	if strings.Contains(c.url, "?") {
		sep = "&"
	}
	args := append([]string{"--postgres-url", c.url + sep + "application_name=" + app, "--addr", addr}, clusterFlags...)
	return startHostile(t, c.bin, t.TempDir(), nil, args...)
}

// waitVersions waits until the documents' versions in the store add up
// to at least n, and returns their sum. A store that fails (the database
// restarting) is asked again; the harness ending first (ran) fails t.
func (c *cluster) waitVersions(t *testing.T, docIDs []string, n int64, ran <-chan editorsRun) int64 {
	t.Helper()
	ctx := context.Background()
	for {
		var sum int64
		var err error
		for _, id := range docIDs {
			h, lerr := c.st.Load(ctx, id)
			if lerr != nil {
				err = lerr
				break
			}
			sum += h.Version
		}
		if err == nil && sum >= n {
			return sum
		}
		select {
		case run := <-ran:
			t.Fatalf("the harness ended at %d steps, before %d (store: %v):\n%s", sum, n, err, lastLines(run.stderr, 20))
		case <-time.After(time.Duration(10+rand.IntN(10)) * time.Millisecond):
		}
	}
}

// postNoop posts an empty replace step (it changes nothing, and applies
// to any document) from clientID to document id on p, at the version
// p's memory has, and returns the answer.
func (c *cluster) postNoop(t *testing.T, p *hostileProc, id string, clientID int64) (int, []byte, http.Header) {
	t.Helper()
	st := getDocState(t, p.base+"/docs/"+id)
	body := fmt.Sprintf(`{"version":%d,"clientID":%d,"steps":[{"stepType":"replace","from":0,"to":0}]}`, st.Version, clientID)
	status, resp, header, err := p.do("POST", "/docs/"+id+"/events", "application/json", []byte(body), nil)
	if err != nil {
		t.Fatalf("POST /docs/%s/events: %v", id, err)
	}
	return status, resp, header
}

// TestClusterBrowsers runs ../web/test/browser-nodes.mjs: the demo page
// in two browsers, Alice's on node 0 and Bob's on node 2 of a cluster,
// on one document. Its typing scenario checks that each sees the other's
// typing and that both nodes serve what the editors hold; its cursors
// scenario that each sees the other's cursor and name. Skipped as the web package's browser
// tests are (testutil.NeedBrowser: Chromium, node, web/node_modules;
// PMA_REQUIRE_BROWSER=1 fails instead), and without PostgreSQL as the
// other cluster tests.
func TestClusterBrowsers(t *testing.T) {
	node := testutil.NeedBrowser(t, "../web")
	url := pgtest.URL(t)
	c := startCluster(t, url, nil)
	urls := c.nodes[0].base + "," + c.nodes[2].base
	run := func(t *testing.T, only string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out := filepath.Join("..", "web", "test", "out", "nodes")
		if dir := os.Getenv("PMA_BROWSER_OUT"); dir != "" {
			out = filepath.Join(dir, "nodes")
		}
		cmd := exec.CommandContext(ctx, node, "../web/test/browser-nodes.mjs", "--url", urls, "--only", only,
			"--out", out, "--chromium", testutil.Chromium)
		cmd.WaitDelay = 5 * time.Second
		output, err := cmd.CombinedOutput()
		t.Logf("browser-nodes.mjs --only %s:\n%s", only, output)
		if err != nil {
			t.Fatalf("browser-nodes.mjs --only %s: %v", only, err)
		}
	}
	t.Run("typing", func(t *testing.T) { run(t, "typing") })
	t.Run("cursors", func(t *testing.T) { run(t, "cursors") })
}
