//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

// TestCrash drives the real binary through the collab HTTP API with
// several writers and long-polling watchers, kills it with SIGKILL at a
// random moment, restarts it on the same data directory and checks that
// nothing acknowledged or shown to a client was lost: for every document
// the version is at least the highest acknowledged one, the step log holds
// every acknowledged step at its version (and otherwise only whole
// submissions that were in flight at the kill), the served document is the
// replay of the log from the initial document, and the comments are those
// of the accepted comment events, mapped through the later steps. It runs
// with --sync full and --sync normal (both survive a killed process; power
// loss is not simulated). Each run ends with a SIGTERM during load, which
// must exit 0 and lose nothing.
//
// PMAUTHORITY_CRASH_SEED=N repeats a run's random choices (the timing of
// the kills and of the requests stays nondeterministic).
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary repeatedly")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PMAUTHORITY_CRASH_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PMAUTHORITY_CRASH_SEED: %v", err)
		}
		seed = n
	}
	t.Logf("seed %d (PMAUTHORITY_CRASH_SEED)", seed)
	bin := filepath.Join(t.TempDir(), "pmauthority")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sc, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		sync string
		ends []string
	}{
		{"full", []string{"kill", "kill", "kill", "kill", "kill", "kill", "term"}},
		{"normal", []string{"kill", "kill", "kill", "kill", "term"}},
	} {
		sync := tc.sync
		t.Run("sync="+sync, func(t *testing.T) {
			r := &crashRun{
				t:      t,
				bin:    bin,
				dir:    t.TempDir(),
				sync:   sync,
				args:   []string{"--sync", sync, "--history", "100000", "--snapshot-every", "50", "--shutdown-timeout", "5s"},
				schema: sc,
				rng:    rand.New(rand.NewPCG(seed, uint64(i))),
				seed:   seed + uint64(i)<<32,
			}
			r.run(tc.ends)
		})
	}
}

// crashDocs are the documents under load and how many writers each has;
// two writers on one document make 409s happen.
var crashDocs = []struct {
	id      string
	writers int
}{{"crash-a", 2}, {"crash-b", 2}, {"crash-c", 1}}

// crashRun is one data directory's life through several server processes,
// with the ledger of everything submitted to it.
type crashRun struct {
	t      *testing.T
	bin    string
	dir    string
	args   []string
	sync   string // --sync
	schema *model.Schema
	rng    *rand.Rand // the run's own choices (kill times); used by run only
	seed   uint64     // seeds the load goroutines

	// stopping is set just before the server is signalled: request
	// errors after it are expected.
	stopping atomic.Bool
	// nextID numbers comments, unique over the run.
	nextID atomic.Int64

	mu   sync.Mutex // guards docs' ledgers
	docs []*docLedger
}

// docLedger is what the test knows about one document.
type docLedger struct {
	id   string
	init []byte      // the document at version 0, as served
	subs []*crashSub // every submission sent, in order
	// seen holds the steps a client was shown (events answers) by
	// version: the server shows only durable steps, so they must survive.
	seen map[int64]loggedStep
	// comments are acknowledged comment ids writers may delete.
	comments []int64
	// mapped caches where each comment created would be at the last check
	// (mapping is the costly part of the check).
	mapped map[int64]mappedComment
}

// mappedComment is a comment's range mapped up to version.
type mappedComment struct {
	version  int64
	from, to int
}

// loggedStep is one step log entry: the step's JSON and the JSON of its
// client id.
type loggedStep struct {
	step, clientID string
}

// subState is what is known of a submission's fate.
type subState int

const (
	subPending  subState = iota // sent, no answer: the server died
	subAcked                    // answered 200
	subRejected                 // answered 409
	subSurvived                 // pending, and found in the log after the restart
	subLost                     // pending, with steps, and not in the log
	subUnknown                  // pending, comments only: cannot tell
)

// crashSub is one POST /docs/{id}/events.
type crashSub struct {
	cycle    int
	base     int64
	steps    []string // compact step JSON
	clientID int64
	creates  []crashComment
	deletes  []int64
	state    subState
	version  int64 // answered
	cversion int64 // answered commentVersion
}

// crashComment is a comment as created and as served.
type crashComment struct {
	From int    `json:"from"`
	To   int    `json:"to"`
	Text string `json:"text"`
	ID   int64  `json:"id"`
}

// body returns the submission's request body, as prosemirror-collab's
// client sends it.
func (s *crashSub) body() []byte {
	b := []byte(`{"version":`)
	b = strconv.AppendInt(b, s.base, 10)
	b = append(b, `,"steps":[`...)
	b = append(b, strings.Join(s.steps, ",")...)
	b = append(b, `],"clientID":`...)
	b = strconv.AppendInt(b, s.clientID, 10)
	b = append(b, `,"comment":[`...)
	for i, c := range s.creates {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"type":"create","id":%d,"text":%q,"from":%d,"to":%d}`, c.ID, c.Text, c.From, c.To)
	}
	for i, id := range s.deletes {
		if i > 0 || len(s.creates) > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"type":"delete","id":%d}`, id)
	}
	return append(b, "]}"...)
}

// cycleStats counts one cycle's submissions.
type cycleStats struct {
	ackedSteps, ackedComments, conflicts, pending atomic.Int64
}

// run starts the server, sets up the documents and goes through the
// cycles, each a burst of load ended by a SIGKILL ("kill") or a SIGTERM
// ("term"), followed by a restart and the checks.
func (r *crashRun) run(ends []string) {
	t := r.t
	p := r.start()
	for _, d := range crashDocs {
		st, err := p.getDoc(context.Background(), d.id)
		if err != nil {
			t.Fatalf("GET /docs/%s: %v", d.id, err)
		}
		if st.Version != 0 || len(st.Comments) != 0 {
			t.Fatalf("GET /docs/%s on a new data directory: version %d, %d comments", d.id, st.Version, len(st.Comments))
		}
		if _, err := r.schema.NodeFromJSON(st.Doc); err != nil {
			t.Fatalf("GET /docs/%s: doc: %v", d.id, err)
		}
		r.docs = append(r.docs, &docLedger{id: d.id, init: compactJSON(t, st.Doc), seen: map[int64]loggedStep{}, mapped: map[int64]mappedComment{}})
	}
	var totalAcked int64
	for n, end := range ends {
		stats := &cycleStats{}
		loadFor := 100*time.Millisecond + time.Duration(r.rng.Int64N(int64(1400*time.Millisecond)))
		r.load(n, p, loadFor, end, stats)
		p = r.start()
		survived, lost, unknown := r.verify(p, n)
		if end == "term" && survived > 0 {
			// A server that exits 0 after SIGTERM has answered every
			// request it took; the others failed before it read them.
			t.Errorf("cycle %d: %d submissions went unanswered at the SIGTERM but were applied", n, survived)
		}
		totalAcked += stats.ackedSteps.Load() + stats.ackedComments.Load()
		t.Logf("cycle %d: %s after %v: acked %d step and %d comment-only submissions, %d conflicts (409), %d in flight at the %s (%d survived, %d lost, %d comment-only unknown); versions %s",
			n, end, loadFor.Round(time.Millisecond), stats.ackedSteps.Load(), stats.ackedComments.Load(), stats.conflicts.Load(),
			stats.pending.Load(), end, survived, lost, unknown, r.versions(p))
		if t.Failed() {
			break
		}
	}
	if totalAcked == 0 {
		t.Errorf("no submission was acknowledged in %d cycles: the test checked nothing", len(ends))
	}
	p.term()
	// What the servers wrote, killed or not, replays from the first step.
	out, err := exec.Command(r.bin, "verify", "--data", r.dir).CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), "\nOK\n") {
		t.Errorf("pmauthority verify: %v\n%s", err, out)
	}
	t.Logf("%s", bytes.TrimSpace(out))
}

// versions lists the documents' versions on p, for the log.
func (r *crashRun) versions(p *proc) string {
	var parts []string
	for _, d := range r.docs {
		st, err := p.getDoc(context.Background(), d.id)
		if err != nil {
			return err.Error()
		}
		parts = append(parts, fmt.Sprintf("%s=%d/%d", d.id, st.Version, st.CommentVersion))
	}
	return strings.Join(parts, " ")
}

// load runs writers and watchers on p for loadFor, then ends p as end
// says and waits for the load to stop.
func (r *crashRun) load(cycle int, p *proc, loadFor time.Duration, end string, stats *cycleStats) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.stopping.Store(false)
	var wg sync.WaitGroup
	w := 0
	for i, d := range crashDocs {
		led := r.docs[i]
		for range d.writers {
			wr := &crashWriter{
				r: r, p: p, doc: led, cycle: cycle, stats: stats,
				clientID: 4294900000 + int64(cycle)*100 + int64(w), // beyond int32, as real client ids are
				rng:      rand.New(rand.NewPCG(r.seed, uint64(cycle)<<16|uint64(w))),
			}
			w++
			wg.Go(func() { wr.run(ctx) })
		}
		wg.Go(func() { r.watch(ctx, p, led) })
	}
	time.Sleep(loadFor)
	r.stopping.Store(true)
	switch end {
	case "kill":
		p.kill()
	case "term":
		p.term()
	}
	cancel()
	wg.Wait()
}

// unexpected reports a failed request unless the server is being stopped.
func (r *crashRun) unexpected(format string, args ...any) {
	if !r.stopping.Load() {
		r.t.Errorf(format, args...)
	}
}

// crashWriter submits steps and comments to one document as a
// prosemirror-collab client would: at its known version, catching up
// through GET events after a 409. It keeps the document to make steps
// that apply.
type crashWriter struct {
	r        *crashRun
	p        *proc
	doc      *docLedger
	cycle    int
	stats    *cycleStats
	clientID int64
	rng      *rand.Rand
	n        int // texts inserted

	version, cversion int64
	node              *model.Node
}

// run submits until ctx ends or the server goes away.
func (w *crashWriter) run(ctx context.Context) {
	r := w.r
	st, err := w.p.getDoc(ctx, w.doc.id)
	if err != nil {
		r.unexpected("writer %d: GET /docs/%s: %v", w.clientID, w.doc.id, err)
		return
	}
	w.version, w.cversion = st.Version, st.CommentVersion
	if w.node, err = r.schema.NodeFromJSON(st.Doc); err != nil {
		r.t.Errorf("GET /docs/%s: doc: %v", w.doc.id, err)
		return
	}
	for ctx.Err() == nil {
		sub, after, ok := w.next()
		if !ok {
			return
		}
		r.mu.Lock()
		w.doc.subs = append(w.doc.subs, sub)
		r.mu.Unlock()
		status, body, err := w.p.do(ctx, "POST", "/docs/"+w.doc.id+"/events", sub.body())
		if err != nil {
			w.stats.pending.Add(1)
			r.unexpected("POST /docs/%s/events: %v", w.doc.id, err)
			return
		}
		switch status {
		case http.StatusOK:
			var ans struct{ Version, CommentVersion *int64 }
			if err := json.Unmarshal(body, &ans); err != nil || ans.Version == nil || ans.CommentVersion == nil {
				r.t.Errorf("POST /docs/%s/events: answer %s (%v)", w.doc.id, body, err)
				w.stats.pending.Add(1)
				return
			}
			if want := sub.base + int64(len(sub.steps)); *ans.Version != want {
				r.t.Errorf("POST /docs/%s/events at version %d with %d steps: answered version %d, want %d", w.doc.id, sub.base, len(sub.steps), *ans.Version, want)
			}
			r.mu.Lock()
			sub.state, sub.version, sub.cversion = subAcked, *ans.Version, *ans.CommentVersion
			for _, c := range sub.creates {
				w.doc.comments = append(w.doc.comments, c.ID)
			}
			r.mu.Unlock()
			if len(sub.steps) > 0 {
				w.stats.ackedSteps.Add(1)
			} else {
				w.stats.ackedComments.Add(1)
			}
			w.version, w.cversion, w.node = *ans.Version, *ans.CommentVersion, after
		case http.StatusConflict:
			r.mu.Lock()
			sub.state = subRejected
			if len(sub.deletes) > 0 { // may be deleted again
				w.doc.comments = append(w.doc.comments, sub.deletes...)
			}
			r.mu.Unlock()
			w.stats.conflicts.Add(1)
			if !w.catchUp(ctx) {
				return
			}
		default:
			w.stats.pending.Add(1)
			r.unexpected("POST /docs/%s/events at version %d: %d %s", w.doc.id, sub.base, status, body)
			return
		}
	}
}

// catchUp applies the steps after the writer's version, from GET events.
func (w *crashWriter) catchUp(ctx context.Context) bool {
	ev, err := w.r.events(ctx, w.p, w.doc, w.version, w.cversion)
	if err != nil {
		w.r.unexpected("writer %d: %v", w.clientID, err)
		return false
	}
	if ev.Version == nil {
		w.r.t.Errorf("GET /docs/%s/events?version=%d after a 409: {}", w.doc.id, w.version)
		return false
	}
	for _, s := range ev.Steps {
		step, err := transform.StepFromJSON(w.r.schema, s)
		if err == nil {
			w.node, err = step.Apply(w.node)
		}
		if err != nil {
			w.r.t.Errorf("GET /docs/%s/events: step %s does not apply to the writer's document: %v", w.doc.id, s, err)
			return false
		}
	}
	w.version, w.cversion = *ev.Version, ev.CommentVersion
	return true
}

// next makes the writer's next submission at its version: mostly 1–3
// replace steps (inserting or deleting text in the first paragraph),
// sometimes with a new comment, sometimes only a comment created or
// deleted. It returns the submission and the document after its steps.
func (w *crashWriter) next() (*crashSub, *model.Node, bool) {
	sub := &crashSub{cycle: w.cycle, base: w.version}
	doc := w.node
	textSize := func(doc *model.Node) int { return doc.FirstChild().Content.Size() }
	newComment := func(size int) crashComment {
		from := 1 + w.rng.IntN(size)
		to := from + 1 + w.rng.IntN(min(1+size-from, 6))
		id := w.r.nextID.Add(1)
		return crashComment{From: from, To: to, Text: "note " + strconv.FormatInt(id, 10), ID: id}
	}
	switch k := w.rng.IntN(20); {
	case k < 3 && textSize(doc) > 0: // a comment-only create, as the demo client sends them
		sub.creates = append(sub.creates, newComment(textSize(doc)))
		return sub, doc, true
	case k < 5: // a comment-only delete of an acknowledged comment
		w.r.mu.Lock()
		if n := len(w.doc.comments); n > 0 {
			i := w.rng.IntN(n)
			sub.deletes = append(sub.deletes, w.doc.comments[i])
			w.doc.comments = append(w.doc.comments[:i], w.doc.comments[i+1:]...)
		}
		w.r.mu.Unlock()
		if len(sub.deletes) > 0 {
			return sub, doc, true
		}
	}
	sub.clientID = w.clientID
	for range 1 + w.rng.IntN(3) {
		size := textSize(doc)
		var js string
		// Deletions keep the paragraph at a few hundred characters and
		// collapse some comments.
		if size > 0 && (w.rng.IntN(4) == 0 || w.rng.IntN(300) < size-300) {
			from := 1 + w.rng.IntN(size)
			to := from + 1 + w.rng.IntN(min(1+size-from, 5+size/10))
			js = fmt.Sprintf(`{"stepType":"replace","from":%d,"to":%d}`, from, to)
		} else {
			w.n++
			pos := 1 + w.rng.IntN(size+1)
			if w.rng.IntN(2) == 0 {
				pos = 1
			}
			text := fmt.Sprintf("w%dn%d ", w.clientID%1000, w.n)
			js = fmt.Sprintf(`{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"text","text":%q}]}}`, pos, pos, text)
		}
		step, err := transform.StepFromJSON(w.r.schema, []byte(js))
		if err == nil {
			doc, err = step.Apply(doc)
		}
		if err != nil {
			w.r.t.Errorf("the test made a step that does not apply: %s: %v", js, err)
			return nil, nil, false
		}
		sub.steps = append(sub.steps, js)
	}
	if size := textSize(doc); size > 0 && w.rng.IntN(4) == 0 {
		sub.creates = append(sub.creates, newComment(size))
	}
	return sub, doc, true
}

// watch long-polls a document's events until ctx ends, recording the
// steps it is shown.
func (r *crashRun) watch(ctx context.Context, p *proc, d *docLedger) {
	st, err := p.getDoc(ctx, d.id)
	if err != nil {
		r.unexpected("watcher: GET /docs/%s: %v", d.id, err)
		return
	}
	v, cv := st.Version, st.CommentVersion
	for ctx.Err() == nil {
		ev, err := r.events(ctx, p, d, v, cv)
		if err != nil {
			r.unexpected("watcher: %v", err)
			return
		}
		if ev.Version != nil {
			v, cv = *ev.Version, ev.CommentVersion
		}
	}
}

// eventsAnswer is the answer of GET /docs/{id}/events; Version is nil in
// the {} of a long-poll timeout.
type eventsAnswer struct {
	Version        *int64            `json:"version"`
	CommentVersion int64             `json:"commentVersion"`
	Steps          []json.RawMessage `json:"steps"`
	ClientIDs      []json.RawMessage `json:"clientIDs"`
	Comment        []json.RawMessage `json:"comment"`
}

// events asks for the events after version and commentVersion, checks the
// answer's shape and records the steps in d.seen, reporting a step that
// differs from one shown before at the same version.
func (r *crashRun) events(ctx context.Context, p *proc, d *docLedger, version, cversion int64) (eventsAnswer, error) {
	var ev eventsAnswer
	path := fmt.Sprintf("/docs/%s/events?version=%d&commentVersion=%d", d.id, version, cversion)
	status, body, err := p.do(ctx, "GET", path, nil)
	if err != nil {
		return ev, fmt.Errorf("GET %s: %w", path, err)
	}
	if status != http.StatusOK {
		return ev, fmt.Errorf("GET %s: %d %s", path, status, body)
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return ev, fmt.Errorf("GET %s: %v: %s", path, err, body)
	}
	if ev.Version == nil {
		return ev, nil
	}
	if *ev.Version != version+int64(len(ev.Steps)) || len(ev.ClientIDs) != len(ev.Steps) {
		return ev, fmt.Errorf("GET %s: version %d with %d steps and %d clientIDs", path, *ev.Version, len(ev.Steps), len(ev.ClientIDs))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, s := range ev.Steps {
		v := version + 1 + int64(i)
		e := loggedStep{step: string(compactJSON(r.t, s)), clientID: string(compactJSON(r.t, ev.ClientIDs[i]))}
		if old, ok := d.seen[v]; ok && old != e {
			r.t.Errorf("%s: step %d was shown as %s (client %s) and later as %s (client %s)", d.id, v, old.step, old.clientID, e.step, e.clientID)
		}
		d.seen[v] = e
	}
	return ev, nil
}

// verify checks every document on the restarted server p against the
// ledger after cycle, resolving the submissions that were in flight. It
// returns how they resolved.
func (r *crashRun) verify(p *proc, cycle int) (survived, lost, unknown int) {
	for _, d := range r.docs {
		s, l, u := r.verifyDoc(p, d, cycle)
		survived, lost, unknown = survived+s, lost+l, unknown+u
	}
	return survived, lost, unknown
}

func (r *crashRun) verifyDoc(p *proc, d *docLedger, cycle int) (survived, lost, unknown int) {
	t := r.t
	ctx := context.Background()
	// fail reports the first few failures: one lost write tends to bring
	// many.
	failures := 0
	fail := func(format string, args ...any) {
		t.Helper()
		if failures++; failures <= 10 {
			t.Errorf(format, args...)
		}
	}
	defer func() {
		if failures > 10 {
			t.Errorf("%s after restart %d: %d more failures", d.id, cycle, failures-10)
		}
	}()
	st, err := p.getDoc(ctx, d.id)
	if err != nil {
		fail("after restart %d: GET /docs/%s: %v", cycle, d.id, err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	where := fmt.Sprintf("%s after restart %d (sync %s)", d.id, cycle, r.sync)

	// The version and the comment version cover everything acknowledged.
	var top, ctop *crashSub
	for _, s := range d.subs {
		if s.state != subAcked {
			continue
		}
		if top == nil || s.version > top.version {
			top = s
		}
		if ctop == nil || s.cversion > ctop.cversion {
			ctop = s
		}
	}
	if top != nil && st.Version < top.version {
		fail("%s: version %d, but version %d was acknowledged (POST at version %d with %d steps in cycle %d)",
			where, st.Version, top.version, top.base, len(top.steps), top.cycle)
	}
	if ctop != nil && st.CommentVersion < ctop.cversion {
		fail("%s: commentVersion %d, but commentVersion %d was acknowledged (POST at version %d in cycle %d)",
			where, st.CommentVersion, ctop.cversion, ctop.base, ctop.cycle)
	}

	// The whole step log.
	var log []loggedStep
	if st.Version > 0 {
		path := fmt.Sprintf("/docs/%s/events?version=0&commentVersion=%d", d.id, st.CommentVersion)
		status, body, err := p.do(ctx, "GET", path, nil)
		var ev eventsAnswer
		if err == nil && status == http.StatusOK {
			err = json.Unmarshal(body, &ev)
		}
		switch {
		case err != nil:
			fail("%s: GET %s: %v", where, path, err)
			return
		case status != http.StatusOK:
			fail("%s: GET %s: %d %s", where, path, status, body)
			return
		case ev.Version == nil || *ev.Version != st.Version || len(ev.Steps) != int(st.Version) || len(ev.ClientIDs) != len(ev.Steps):
			fail("%s: GET %s at version %d: %.300s", where, path, st.Version, body)
			return
		}
		for i, s := range ev.Steps {
			log = append(log, loggedStep{step: string(compactJSON(t, s)), clientID: string(compactJSON(t, ev.ClientIDs[i]))})
		}
	}

	// Every acknowledged step is in the log at its version, and so is every
	// step a client was shown.
	owner := make([]*crashSub, len(log)+1)
	for _, s := range d.subs {
		if s.state != subAcked && s.state != subSurvived {
			continue
		}
		for i, js := range s.steps {
			v := s.base + 1 + int64(i)
			if v > int64(len(log)) {
				fail("%s: acknowledged step %d is missing (the log ends at version %d): POST at version %d with %d steps in cycle %d answered version %d",
					where, v, len(log), s.base, len(s.steps), s.cycle, s.version)
				break
			}
			want := loggedStep{step: js, clientID: strconv.FormatInt(s.clientID, 10)}
			if got := log[v-1]; got != want {
				fail("%s: version %d holds %s (client %s), but %s (client %s) was acknowledged at it (POST at version %d in cycle %d)",
					where, v, got.step, got.clientID, want.step, want.clientID, s.base, s.cycle)
			}
			owner[v] = s
		}
	}
	for v, e := range d.seen {
		if v > int64(len(log)) {
			fail("%s: step %d (%s) was shown to a client but is gone: the log ends at version %d", where, v, e.step, len(log))
		} else if log[v-1] != e {
			fail("%s: step %d was shown to a client as %s (client %s), but the log holds %s (client %s)", where, v, e.step, e.clientID, log[v-1].step, log[v-1].clientID)
		}
	}

	// What is left of the log are whole submissions that were in flight,
	// each at its base version.
	for v := int64(1); v <= int64(len(log)); {
		if owner[v] != nil {
			v++
			continue
		}
		var found *crashSub
		for _, s := range d.subs {
			if s.state == subPending && len(s.steps) > 0 && s.base == v-1 && s.matches(log[v-1:]) {
				found = s
				break
			}
		}
		if found == nil {
			fail("%s: step %d (%s, client %s) is no acknowledged step nor part of a submission in flight at the kill", where, v, log[v-1].step, log[v-1].clientID)
			v++
			continue
		}
		found.state = subSurvived
		survived++
		for range found.steps {
			owner[v] = found
			v++
		}
	}
	for _, s := range d.subs {
		if s.state != subPending {
			continue
		}
		if len(s.steps) > 0 {
			s.state = subLost
			lost++
		} else {
			s.state = subUnknown
			unknown++
		}
	}

	// The served document is the replay of the log.
	doc, err := r.schema.NodeFromJSON(d.init)
	if err != nil {
		t.Fatal(err)
	}
	maps := make([]*transform.StepMap, 0, len(log))
	for i, e := range log {
		step, err := transform.StepFromJSON(r.schema, []byte(e.step))
		if err == nil {
			doc, err = step.Apply(doc)
		}
		if err != nil {
			fail("%s: step %d (%s) does not apply to the replayed document: %v", where, i+1, e.step, err)
			return
		}
		maps = append(maps, step.GetMap())
	}
	if got, want := compactJSON(t, st.Doc), doc.AppendJSON(nil); !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		from := max(i-100, 0)
		fail("%s: the served document at version %d differs from the replay of its log at byte %d:\nserved …%.300s\nreplay …%.300s", where, st.Version, i, got[from:], want[from:])
	}

	// The comments: those of accepted submissions, mapped through the later
	// steps, minus the deleted and collapsed ones; a comment of a
	// submission whose fate is unknown may be there, at its place.
	served := map[int64]crashComment{}
	for _, c := range st.Comments {
		if _, dup := served[c.ID]; dup {
			fail("%s: comment %d served twice", where, c.ID)
		}
		served[c.ID] = c
	}
	// deleted tells whether a comment id was surely deleted (an
	// acknowledged delete) or maybe (a delete in flight at a kill).
	deleted, maybeDeleted := map[int64]bool{}, map[int64]bool{}
	for _, s := range d.subs {
		for _, id := range s.deletes {
			switch s.state {
			case subAcked:
				deleted[id] = true
			case subUnknown:
				maybeDeleted[id] = true
			}
		}
	}
	for _, s := range d.subs {
		for _, c := range s.creates {
			got, present := served[c.ID]
			delete(served, c.ID)
			at := s.base + int64(len(s.steps))
			if at > int64(len(log)) {
				if present {
					fail("%s: comment %d is served but was created at version %d, after the log's end", where, c.ID, at)
				}
				continue
			}
			// Map the comment from where the last check left it.
			mc, ok := d.mapped[c.ID]
			if !ok || mc.version > int64(len(log)) {
				mc = mappedComment{version: at, from: c.From, to: c.To}
			}
			if mc.from < mc.to {
				m := transform.NewMapping(maps[mc.version:])
				mc.from, mc.to = m.Map(mc.from, 1), m.Map(mc.to, -1)
			}
			mc.version = int64(len(log))
			d.mapped[c.ID] = mc
			want := c
			want.From, want.To = mc.from, mc.to
			switch {
			case s.state == subRejected || s.state == subLost:
				if present {
					fail("%s: comment %+v is served, but its submission (at version %d in cycle %d) was rejected or lost", where, got, s.base, s.cycle)
				}
			case want.From >= want.To || deleted[c.ID]:
				if present {
					fail("%s: comment %+v is served, but it was deleted or its range %d-%d collapsed", where, got, want.From, want.To)
				}
			case !present:
				if s.state == subAcked || s.state == subSurvived {
					if !maybeDeleted[c.ID] {
						fail("%s: comment %+v of an acknowledged submission (at version %d in cycle %d) is missing; created as %+v", where, want, s.base, s.cycle, c)
					}
				}
			case got != want:
				fail("%s: comment %d is %+v, want %+v (created at version %d as %+v)", where, c.ID, got, want, at, c)
			}
		}
	}
	for _, c := range served {
		fail("%s: comment %+v was never created", where, c)
	}
	return survived, lost, unknown
}

// matches reports whether log starts with the submission's steps.
func (s *crashSub) matches(log []loggedStep) bool {
	if len(log) < len(s.steps) {
		return false
	}
	for i, js := range s.steps {
		if log[i] != (loggedStep{step: js, clientID: strconv.FormatInt(s.clientID, 10)}) {
			return false
		}
	}
	return true
}

// compactJSON returns data without insignificant space.
func compactJSON(t *testing.T, data []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		t.Errorf("invalid JSON %.200s: %v", data, err)
		return data
	}
	return b.Bytes()
}

// proc is one running server process.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	stderr *serveLog
	client *http.Client
	done   chan struct{} // closed once the process was waited for
	err    error         // cmd.Wait's, after done
}

// start starts the server on the run's data directory and waits for its
// address in the startup log line.
func (r *crashRun) start() *proc {
	t := r.t
	// The load comes from one address, faster than a client may submit.
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", r.dir, "--log-format", "json",
		"--max-submissions", "1000000", "--drain-delay", "0"}, r.args...)
	cmd := exec.Command(r.bin, args...)
	log := &serveLog{addr: make(chan string, 1)}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, stderr: log, done: make(chan struct{}),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.checkLog() })
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	select {
	case addr := <-log.addr:
		p.base = "http://" + addr
	case <-p.done:
		t.Fatalf("pmauthority %s exited before serving: %v\n%s", strings.Join(args, " "), p.err, log)
	case <-time.After(30 * time.Second):
		t.Fatalf("pmauthority %s did not log its address in 30 s:\n%s", strings.Join(args, " "), log)
	}
	return p
}

// checkLog reports the server's error log lines: it has nothing to
// complain about, a restart after a SIGKILL included.
func (p *proc) checkLog() {
	for line := range strings.Lines(p.stderr.String()) {
		if strings.Contains(line, `"level":"ERROR"`) {
			p.t.Errorf("server log: %s", line)
		}
	}
}

// kill ends the process with SIGKILL; it must not have exited before.
func (p *proc) kill() {
	select {
	case <-p.done:
		p.t.Errorf("the server exited during the load: %v\n%s", p.err, p.stderr)
		return
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatal(err)
	}
	<-p.done
	p.client.CloseIdleConnections()
}

// term ends the process with SIGTERM and checks that it stops gracefully.
func (p *proc) term() {
	select {
	case <-p.done:
		p.t.Errorf("the server exited before SIGTERM: %v\n%s", p.err, p.stderr)
		return
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-p.done:
		if p.err != nil {
			p.t.Errorf("after SIGTERM: %v (want exit 0)\n%s", p.err, p.stderr)
		}
	case <-time.After(30 * time.Second):
		p.t.Errorf("still running 30 s after SIGTERM:\n%s", p.stderr)
		p.cmd.Process.Kill()
		<-p.done
	}
	p.client.CloseIdleConnections()
}

// do sends a request and reads the answer. Requests other than long polls
// must be answered within 15 s.
func (p *proc) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	limit := 15 * time.Second
	if method == "GET" && strings.Contains(path, "/events") {
		limit = 90 * time.Second // over the default poll timeout of 60 s
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, b, nil
}

// docAnswer is the answer of GET /docs/{id}.
type docAnswer struct {
	Doc            json.RawMessage `json:"doc"`
	Version        int64           `json:"version"`
	Comments       []crashComment  `json:"comments"`
	CommentVersion int64           `json:"commentVersion"`
}

func (p *proc) getDoc(ctx context.Context, id string) (docAnswer, error) {
	var st docAnswer
	status, body, err := p.do(ctx, "GET", "/docs/"+id, nil)
	if err != nil {
		return st, err
	}
	if status != http.StatusOK {
		return st, fmt.Errorf("%d %s", status, body)
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, fmt.Errorf("%v: %.300s", err, body)
	}
	if st.Doc == nil || st.Comments == nil {
		return st, fmt.Errorf("no doc or comments: %.300s", body)
	}
	return st, nil
}

// serveLog keeps a server's output and hands over the address of its
// "pmauthority serving" log line.
type serveLog struct {
	mu      sync.Mutex
	b       bytes.Buffer
	scanned int // bytes of b looked at for the address
	addr    chan string
	found   bool
}

func (l *serveLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
	for !l.found {
		rest := l.b.Bytes()[l.scanned:]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		line := rest[:i]
		l.scanned += i + 1
		var rec struct{ Msg, Addr string }
		if json.Unmarshal(line, &rec) == nil && rec.Msg == "pmauthority serving" && rec.Addr != "" {
			l.found = true
			l.addr <- rec.Addr
		}
	}
	return len(p), nil
}

func (l *serveLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
