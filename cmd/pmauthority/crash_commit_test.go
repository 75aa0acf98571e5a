//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/schemas"
)

// TestCrashCommits drives the real binary in commit mode (POST
// /docs/{id}/commits) with writers on one document, all inserting at
// once, kills it with SIGKILL at random moments and restarts it on the
// same data directory. Each commit inserts a marker of its own. A writer
// whose commit was in flight at the kill sends it again after the restart
// (same ref, version and steps), as a client does after a lost answer: it
// must be answered, applied once. At the end every acknowledged commit's
// marker is in the document exactly once, the answers' steps are the
// step log's at their versions, and the version is the number of
// commits: nothing acknowledged lost, nothing applied twice.
func TestCrashCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary repeatedly")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	bin := filepath.Join(t.TempDir(), "pmauthority")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sc, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	r := &crashRun{t: t, bin: bin, dir: t.TempDir(), sync: "full", schema: sc,
		args: []string{"--sync", "full", "--history", "100000", "--snapshot-every", "20", "--shutdown-timeout", "5s"}}
	const writers, cycles = 4, 4
	ws := make([]*commitWriter, writers)
	for i := range ws {
		ws[i] = &commitWriter{id: i + 1}
	}
	applied := 0 // commits in flight at a kill that the store had taken
	resend := func(ctx context.Context, p *proc, w *commitWriter) error {
		st, err := p.getDoc(ctx, commitDoc)
		if err != nil {
			return err
		}
		if strings.Contains(string(st.Doc), w.pending.marker) {
			applied++
		}
		w.resends++
		return w.send(ctx, p, w.pending)
	}
	p := r.start()
	for cycle := range cycles {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for _, w := range ws {
			// The commit in flight at the last kill first.
			if w.pending != nil {
				if err := resend(ctx, p, w); err != nil {
					t.Fatalf("cycle %d: writer %d: the commit in flight at the kill, sent again: %v", cycle, w.id, err)
				}
			}
			wg.Go(func() { w.run(ctx, p, &r.stopping) })
		}
		time.Sleep(time.Duration(300+rng.IntN(700)) * time.Millisecond)
		r.stopping.Store(true)
		p.kill()
		cancel()
		wg.Wait()
		r.stopping.Store(false)
		for _, w := range ws {
			if w.err != nil {
				t.Fatalf("cycle %d: writer %d: %v", cycle, w.id, w.err)
			}
		}
		p = r.start()
	}
	// The commits in flight at the last kill, sent again.
	for _, w := range ws {
		if w.pending != nil {
			if err := resend(context.Background(), p, w); err != nil {
				t.Fatalf("writer %d: the commit in flight at the kill, sent again: %v", w.id, err)
			}
		}
	}

	st, err := p.getDoc(context.Background(), commitDoc)
	if err != nil {
		t.Fatal(err)
	}
	acked := 0
	for _, w := range ws {
		for _, c := range w.acked {
			acked++
			if n := strings.Count(string(st.Doc), c.marker); n != 1 {
				t.Errorf("writer %d: the marker %s of its acknowledged commit %s is %d times in the document", w.id, c.marker, c.ref, n)
			}
		}
	}
	if st.Version != int64(acked) || strings.Count(string(st.Doc), "[w") != acked {
		t.Errorf("version %d and %d markers for %d acknowledged commits of one step each", st.Version, strings.Count(string(st.Doc), "[w"), acked)
	}
	// The answers' steps are the log's.
	logged := map[int64]string{}
	for from := int64(0); from < st.Version; {
		status, body, err := p.do(context.Background(), "GET", fmt.Sprintf("/docs/%s/steps?from=%d&limit=1000", commitDoc, from), nil)
		if err != nil || status != http.StatusOK {
			t.Fatalf("GET steps: %d %v %.300s", status, err, body)
		}
		var page struct {
			Steps []struct {
				Version int64           `json:"version"`
				Step    json.RawMessage `json:"step"`
			} `json:"steps"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Steps) == 0 {
			t.Fatalf("GET steps from %d: none, at version %d", from, st.Version)
		}
		for _, s := range page.Steps {
			logged[s.Version] = string(compactJSON(t, s.Step))
			from = s.Version
		}
	}
	for _, w := range ws {
		for _, c := range w.acked {
			if got := logged[c.version]; got != c.step {
				t.Errorf("writer %d: commit %s answered %s at version %d; the log has %s", w.id, c.ref, c.step, c.version, got)
			}
		}
	}
	t.Logf("%d commits acknowledged over %d kills; %d sent again after a kill, %d of them already applied", acked, cycles, resent(ws), applied)
	if acked < 20 {
		t.Errorf("only %d commits acknowledged: the load did not run", acked)
	}
	p.term()
}

// commitDoc is the document of TestCrashCommits.
const commitDoc = "crash-commits"

// commitWriter commits inserts, one in flight.
type commitWriter struct {
	id      int
	n       int
	version int64         // of the last answer
	pending *commitSent   // sent, not answered: the server died
	acked   []*commitSent // answered 200
	resends int
	err     error
}

// commitSent is one commit and its answer.
type commitSent struct {
	ref, marker string
	body        []byte
	version     int64  // answered: the step's version
	step        string // answered: the step as applied
}

// run commits until ctx is done; errors once stopping is set are the
// kill's.
func (w *commitWriter) run(ctx context.Context, p *proc, stopping *atomic.Bool) {
	for ctx.Err() == nil {
		w.n++
		ref := fmt.Sprintf("w%d-%d", w.id, w.n)
		marker := "[" + ref + "]"
		step := fmt.Sprintf(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":%q}]}}`, marker)
		c := &commitSent{ref: ref, marker: marker,
			body: fmt.Appendf(nil, `{"version":%d,"ref":%q,"clientID":%d,"steps":[%s]}`, w.version, ref, w.id, step)}
		w.pending = c
		if err := w.send(ctx, p, c); err != nil {
			if !stopping.Load() {
				w.err = err
			}
			return // killed: pending stays for the restart
		}
	}
}

// send posts c and records its answer.
func (w *commitWriter) send(ctx context.Context, p *proc, c *commitSent) error {
	if c != w.pending {
		return fmt.Errorf("not the pending commit")
	}
	status, body, err := p.do(ctx, "POST", "/docs/"+commitDoc+"/commits", c.body)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("%s: %d %s", c.body, status, body)
	}
	var ans struct {
		From    int64             `json:"from"`
		Version int64             `json:"version"`
		Steps   []json.RawMessage `json:"steps"`
		Dropped []int             `json:"dropped"`
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return err
	}
	if len(ans.Steps) != 1 || ans.Version != ans.From+1 || len(ans.Dropped) != 0 || !strings.Contains(string(ans.Steps[0]), c.marker) {
		return fmt.Errorf("%s: answer %s", c.body, body)
	}
	c.version, c.step = ans.Version, string(ans.Steps[0])
	w.version = ans.Version
	w.acked = append(w.acked, c)
	w.pending = nil
	return nil
}

func resent(ws []*commitWriter) int {
	n := 0
	for _, w := range ws {
		n += w.resends
	}
	return n
}
