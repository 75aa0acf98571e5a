//go:build linux

package conformance

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

// TestRollingRestart runs the real-editor harness (both transports,
// three documents) against one pmauthority serve process (the real
// binary) on a SQLite data directory, and restarts it four times during
// the run as a rolling restart does: SIGTERM, which drains it (/readyz
// 503, --drain-delay of serving, then its WebSockets closed with 1012,
// its waiting polls answered, its requests in flight finished), then a
// new process on the same data and address. The editors reconnect (the
// WebSocket ones with their unconfirmed steps, the long-poll ones trying
// again), and everything must converge with nothing typed lost: every
// step an editor was told was accepted is in the stored log, which
// replays to the server's document, and every editor ends with it.
func TestRollingRestart(t *testing.T) {
	node := editorsNode(t, "js/node_modules/ws")
	if _, err := os.Stat("../web/src/client.js"); err != nil {
		t.Fatalf("the WebSocket client module: %v", err)
	}
	edits, restarts := 2000, 4
	if testing.Short() {
		edits = 800
	}
	cfg := editorsConfig{Editors: 9, WS: 5, Edits: edits, ReconnectEvery: 60, Seed: editorsSeed(t),
		NoComments: true, Faults: true}
	docIDs := []string{"restart-a", "restart-b", "restart-c"}

	data := t.TempDir()
	dbPath := filepath.Join(data, "pmauthority.db")
	st, err := sqlite.Open(dbPath, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := collab.New(collab.Config{Store: st, Schemas: collabSchemas, DefaultSchema: "basic", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := editorsStart(t)
	for _, id := range docIDs {
		if _, err := a.Create(ctx, id, "basic", start); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	bin := stepsBuildCLI(t)
	flags := []string{"--max-submissions", "1000000", "--max-ws-messages", "100000", "--snapshot-every", "200",
		"--drain-delay", "300ms"}
	p := startHostile(t, bin, data, nil, flags...)
	addr := p.addr
	var logs []string
	defer func() {
		if t.Failed() {
			for i, l := range logs {
				t.Logf("process %d log:\n%s", i, lastLines(l, 15))
			}
			t.Logf("last process log:\n%s", lastLines(p.log.String(), 30))
		}
	}()

	ran := make(chan editorsRun, 1)
	go func() { ran <- runEditors(t, node, p.base, docIDs, cfg) }()
	for i := range restarts {
		// Restart after each further sixth of the steps (about; rebases
		// drop some).
		want := int64(edits * (i + 1) / (restarts + 2))
		for {
			var list []collabListEntry
			getJSON(t, p.base+"/docs", &list)
			var sum int64
			for _, d := range list {
				sum += d.Version
			}
			if sum >= want {
				t.Logf("restart %d at %d steps in all", i+1, sum)
				break
			}
			select {
			case run := <-ran:
				t.Fatalf("the harness ended before restart %d, at %d steps:\n%s", i+1, sum, lastLines(run.stderr, 20))
			case <-time.After(20 * time.Millisecond):
			}
		}
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		<-p.done
		log := p.log.String()
		logs = append(logs, log)
		if p.err != nil {
			t.Fatalf("restart %d: the server exited with %v after SIGTERM, want 0:\n%s", i+1, p.err, lastLines(log, 30))
		}
		for _, want := range []string{`"msg":"draining: /readyz answers 503"`, `"msg":"stopped"`} {
			if !strings.Contains(log, want) {
				t.Errorf("restart %d: the log lacks %s", i+1, want)
			}
		}
		p = startHostile(t, bin, data, nil, append(flags, "--addr", addr)...)
	}

	run := <-ran
	run.check(t, cfg.Edits)
	run.checkWS(t, cfg)
	s := run.summary
	// The restarts met the editors: WebSockets closed with 1012, and
	// long-poll requests that found no server and were tried again.
	if s.WS.ServerCloses["1012"] == 0 || s.NetErrors == 0 {
		t.Errorf("summary: %d WebSockets closed with 1012, %d long-poll requests tried again: want some of each",
			s.WS.ServerCloses["1012"], s.NetErrors)
	}
	if s.WS.ServerCloses["1006"] != 0 {
		t.Errorf("summary: %d WebSockets closed abnormally (1006): a drain closes them with 1012", s.WS.ServerCloses["1006"])
	}
	t.Logf("%d restarts: %d WebSockets closed with 1012, %d connection attempts failed, %d long-poll requests tried again, %d own steps confirmed by polls",
		restarts, s.WS.ServerCloses["1012"], s.WS.FailedConnects, s.NetErrors, s.ConfirmedByEvents)

	st, err = sqlite.Open(dbPath, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range docIDs {
		checkEditorsDoc(t, p.base, st, start, id, run, cfg)
	}
}
