package conformance

// TestCollabEditors runs real editors against pmauthority: the node
// harness js/collab-editors.mjs drives 8 EditorStates with the real
// prosemirror-collab plugin and the real editing commands against the
// collab API of an in-process server (over SQLite in a temporary folder),
// all on one document, until a few thousand edits are made and every
// editor has synced. Then every editor's document must be the server's,
// byte for byte, at the server's version; the stored step log replayed
// from version 0 must give the same document (and the stored snapshot
// the document at its version); and a new authority over the reopened
// store must serve the same document, version and comments.
//
// The harness needs node and the npm packages of js/ (npm ci, which
// scripts/test runs); without them the test is skipped, unless
// PMA_REQUIRE_NODE=1. Each run takes a new seed (PMA_EDITORS_SEED sets
// it); the network's timing decides what each editor sees, so a seed
// reproduces a run in distribution only.
//
// TestCollabEditorsMixed runs the same with half of the editors over the
// WebSocket protocol (GET /docs/{id}/ws, docs/protocol.md) through the
// demo page's own client module, web/src/client.js: WebSocket and
// long-poll editors on one document must converge just the same. The
// harness also checks every WebSocket message against the protocol
// (pushes contiguous and before their ack, conflicts at the version
// pushed, presence well formed and in the document), and drops each
// WebSocket editor's connection now and then, abruptly or with a close
// handshake: the client must resume at its version and lose nothing.
//
// TestCollabEditorsCommit runs long-poll editors in commit mode (POST
// /docs/{id}/commits, docs/api.md): one commit out at a time, stale ones
// rebased on the server, which drops the steps that no longer apply; on
// each answer the editor moves to the server's document at its version
// (from the events up to the answer's from and the answer's steps, not
// its own rebase) with its later steps rebased on top. Now and then an
// editor drops an answer as lost and sends the commit again: the second
// answer must be the first. There must be answers with dropped steps.
// TestCollabEditorsCommitMixed runs classic and commit-mode editors on
// one document. Both are checked as TestCollabEditors.
//
// TestCollabEditorsDocs runs editors (both kinds) on three documents at
// once (each WebSocket editor must see presence from its own document's
// editors only) against a server that keeps only a short history and
// unloads idle documents soon. Two editors of each document fall behind
// now and then: they pause until their document is beyond the server's
// history, then go on as the demo client does: a long-poll editor gets
// 410 "History no longer available" and reloads the document (its unsent
// steps are lost), a WebSocket editor resumes and gets a snapshot. And
// twice per document all of its editors pause until the server has
// unloaded it, then go on: the document is reloaded from SQLite. The
// 410s, the snapshots and the unloads (counted as loads of the store)
// must have happened; every document is checked as in TestCollabEditors.
//
// TestCollabEditorsTwoNodes runs editors of both kinds against two
// servers, each with its own authority, over one shared store (a
// memstore, whose notices tell each authority what the other committed):
// the editors of one document talk to either server, and must converge
// all the same. Every editor and both servers must end with the same
// document at the same version, each server's history must be the stored
// step log, and both authorities must agree.
//
// TestCollabEditorsNodeAuthority checks the harness itself against the
// node reference authority (bench/noderef/authority.mjs), when its npm
// packages are installed.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/testutil"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/server"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/store/sqlite"
	"github.com/pmauthority/pmauthority/transform"
)

// editorsStartDoc is the document the editors start from: a little of
// everything the basic schema has, so that list and quote commands find
// something to work on from the first edit.
const editorsStartDoc = `{"type":"doc","content":[` +
	`{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Real editors"}]},` +
	`{"type":"paragraph","content":[{"type":"text","text":"Some "},{"type":"text","marks":[{"type":"em"}],"text":"text"},{"type":"text","text":" to edit. 😀"}]},` +
	`{"type":"bullet_list","content":[` +
	`{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","text":"one"}]}]},` +
	`{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","text":"two"}]}]}]},` +
	`{"type":"blockquote","content":[{"type":"paragraph","content":[{"type":"text","text":"quoted"}]}]},` +
	`{"type":"code_block","content":[{"type":"text","text":"x := 1"}]},` +
	`{"type":"paragraph","content":[{"type":"text","text":"end"}]}]}`

// editorLine is a line of the harness's output for one editor.
type editorLine struct {
	Editor         int             `json:"editor"`
	DocID          string          `json:"docID"`
	ClientID       json.RawMessage `json:"clientID"`
	Transport      string          `json:"transport"` // "http" (long poll) or "ws"
	Mode           string          `json:"mode"`      // "commit" for a commit-mode editor, else ""
	Version        int64           `json:"version"`
	CommentVersion int64           `json:"commentVersion"`
	Sendable       bool            `json:"sendable"`
	Accepted       int64           `json:"accepted"` // own steps the server confirmed
	InDoubt        int64           `json:"inDoubt"`  // own steps the server may have accepted
	// MaxUsers is the largest user count the editor was told while
	// editing; PresenceFrom (WebSocket editors) the client ids whose
	// selections it was sent.
	MaxUsers     int               `json:"maxUsers"`
	PresenceFrom []json.RawMessage `json:"presenceFrom"`
	Doc          json.RawMessage   `json:"doc"`
}

// editorsSummary is the harness's last line (the fields checked here).
type editorsSummary struct {
	Seed          uint64 `json:"seed"`
	Editors       int    `json:"editors"`
	Edits         int    `json:"edits"`
	StepsLocal    int64  `json:"stepsLocal"`
	StepsSent     int64  `json:"stepsSent"`
	MaxPostSteps  int64  `json:"maxPostSteps"`
	StepsAccepted int64  `json:"stepsAccepted"`
	StepsDropped  int64  `json:"stepsDropped"`
	Posts         int64  `json:"posts"`
	Conflicts     int64  `json:"conflicts"`
	Polls         int64  `json:"polls"`
	PollsAborted  int64  `json:"pollsAborted"`
	Rebased       int64  `json:"rebased"`
	CommentsMade  int64  `json:"commentsCreated"`
	CommentsGone  int64  `json:"commentsDeleted"`
	Lags          int64  `json:"lags"`
	HistoryGone   int64  `json:"historyGone"` // 410s
	StepsLost     int64  `json:"stepsLostInReloads"`
	StepsInDoubt  int64  `json:"stepsInDoubt"`
	Breaks        int64  `json:"breaks"`
	UnloadsSeen   int64  `json:"unloadsSeen"`
	Bursts        int64  `json:"bursts"`
	// NetErrors counts long-poll requests that failed on the network and
	// were tried again, ConfirmedByEvents own steps confirmed by a poll
	// (a resent POST whose first try was committed); both only with
	// --faults.
	NetErrors         int64 `json:"netErrors"`
	ConfirmedByEvents int64 `json:"confirmedByEvents"`

	// Unavailable counts long-poll answers 503 (each with a Retry-After,
	// tried again after it); only with --faults.
	Unavailable int64 `json:"unavailable"`

	// SelectionGuards counts node selections the harness kept from
	// crashing prosemirror-state (guardNodeSelection in js/collab-editors.mjs).
	SelectionGuards int64             `json:"selectionGuards"`
	InitialVersion  int64             `json:"initialVersion"` // summed over the documents
	ServerVersion   int64             `json:"serverVersion"`
	Docs            []docSummary      `json:"docs"`
	Diverged        []json.RawMessage `json:"diverged"`
	Ms              int64             `json:"ms"`
	Error           *string           `json:"error"`
	WS              wsEditorsSummary  `json:"ws"`
	Commit          commitSummary     `json:"commit"`
}

// commitSummary is the summary of the commit-mode editors.
type commitSummary struct {
	Editors int   `json:"editors"`
	Commits int64 `json:"commits"`
	// Stale commits were made behind the server's version (rebased on
	// the server); WithDrops were answered with steps dropped.
	Stale                int64 `json:"stale"`
	WithDrops            int64 `json:"withDrops"`
	StepsDroppedByServer int64 `json:"stepsDroppedByServer"`
	// Resends are answers dropped as lost, the commit sent again.
	Resends int64 `json:"resends"`
	// AnswersFirst and EventsFirst count the commits whose answer came
	// before, and after, the events up to its from.
	AnswersFirst     int64 `json:"answersFirst"`
	EventsFirst      int64 `json:"eventsFirst"`
	OwnEventsChecked int64 `json:"ownEventsChecked"`
	RebasedOnAnswer  int64 `json:"rebasedOnAnswer"`
}

// docSummary is the summary of one document.
type docSummary struct {
	ID             string `json:"id"`
	Editors        int    `json:"editors"`
	Edits          int    `json:"edits"`
	Breaks         int    `json:"breaks"`
	Unloads        int    `json:"unloads"`
	InitialVersion int64  `json:"initialVersion"`
	ServerVersion  int64  `json:"serverVersion"`
}

// wsEditorsSummary is the summary of the WebSocket editors.
type wsEditorsSummary struct {
	Editors           int              `json:"editors"`
	Submissions       int64            `json:"submissions"`
	Acks              int64            `json:"acks"`
	Conflicts         int64            `json:"conflicts"`
	MessagesSent      int64            `json:"messagesSent"`
	MessagesReceived  int64            `json:"messagesReceived"`
	Drops             int64            `json:"drops"`
	FailedConnects    int64            `json:"failedConnects"` // with --faults
	Reconnects        int64            `json:"reconnects"`
	Resumes           int64            `json:"resumes"`
	ConfirmedOnResume int64            `json:"confirmedOnResume"`
	SnapshotsOnResume int64            `json:"snapshotsOnResume"`
	StepsLost         int64            `json:"stepsLost"`
	ServerCloses      map[string]int64 `json:"serverCloses"`
	PresenceSent      int64            `json:"presenceSent"`
	PresenceReceived  int64            `json:"presenceReceived"`
	PresenceChecked   int64            `json:"presenceChecked"`
	Pauses            int64            `json:"pauses"`
	HistoryGone       int64            `json:"historyGone"` // snapshots on resume

	// Unavailable counts errors 503 (the store failed),
	// UnavailableNotices the client's notices of them; with --faults.
	Unavailable        int64 `json:"unavailable"`
	UnavailableNotices int64 `json:"unavailableNotices"`
}

// editorsConfig is what a run of the harness does.
type editorsConfig struct {
	Editors int // editors in all
	WS      int // of them over WebSocket, the others over long polls
	Edits   int
	// ReconnectEvery is how many of its edits (about) a WebSocket editor
	// makes between two drops of its connection; 0 never drops it.
	ReconnectEvery int
	Seed           uint64
	// History and IdleUnload configure the authority (collab.Config);
	// the harness is told History.
	History    int
	IdleUnload time.Duration
	// Lag editors of each document fall behind the history after about
	// every LagEvery of their edits; each document takes Breaks breaks,
	// each until the server has unloaded it.
	Lag, LagEvery, Breaks int
	// Burst edits at once, after about every BurstEvery of its edits,
	// each editor makes (0: none).
	Burst, BurstEvery int
	// NoComments makes the editors create and delete no comments.
	NoComments bool
	// Token is the token every editor presents (--token).
	Token string
	// Faults tells the harness that servers may die and come back
	// during the run (--faults 1).
	Faults bool
	// Others tells the harness that writers besides the editors add
	// steps (--others 1).
	Others bool
	// Forwarded gives each editor an address of its own, sent as
	// X-Forwarded-For (--forwarded 1), for servers with --trust-proxy.
	Forwarded bool
	// Commit long-poll editors (the last ones) are in commit mode
	// (--commit N): POST /docs/{id}/commits.
	Commit int
}

// editorsRun is what one run of the harness printed.
type editorsRun struct {
	editors []editorLine
	summary *editorsSummary
	stderr  string
}

// editorsNode returns the node binary, or skips the test when node or
// the harness's npm packages are missing.
func editorsNode(t *testing.T, packages string) string {
	t.Helper()
	skip := func(why string) {
		if os.Getenv("PMA_REQUIRE_NODE") == "1" {
			t.Fatalf("%s (PMA_REQUIRE_NODE=1)", why)
		}
		t.Skip(why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("no node on PATH")
	}
	if _, err := os.Stat(packages); err != nil {
		skip(fmt.Sprintf("npm packages missing (%v): run npm ci in js/", err))
	}
	return node
}

// editorsSeed returns PMA_EDITORS_SEED or a fresh seed.
func editorsSeed(t *testing.T) uint64 {
	if s := os.Getenv("PMA_EDITORS_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil || seed >= 1<<53 {
			t.Fatalf("PMA_EDITORS_SEED=%q: want an integer below 2^53", s)
		}
		return seed
	}
	return uint64(time.Now().UnixNano()) % (1 << 32)
}

// runEditors runs the harness against the authority at url on the
// documents docIDs and parses what it printed. A harness that fails is
// reported as a test error, not a fatal one, so that the caller's checks
// say more.
func runEditors(t *testing.T, node, url string, docIDs []string, cfg editorsConfig) editorsRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	editors, seed := cfg.Editors, cfg.Seed
	args := []string{"js/collab-editors.mjs", "--url", url, "--doc", strings.Join(docIDs, ","),
		"--editors", strconv.Itoa(editors), "--edits", strconv.Itoa(cfg.Edits), "--seed", strconv.FormatUint(seed, 10),
		"--ws", strconv.Itoa(cfg.WS), "--reconnect-every", strconv.Itoa(cfg.ReconnectEvery)}
	if cfg.History > 0 {
		args = append(args, "--history", strconv.Itoa(cfg.History))
	}
	if cfg.Lag > 0 {
		args = append(args, "--lag", strconv.Itoa(cfg.Lag), "--lag-every", strconv.Itoa(cfg.LagEvery))
	}
	if cfg.Breaks > 0 {
		args = append(args, "--breaks", strconv.Itoa(cfg.Breaks))
	}
	if cfg.Burst > 0 {
		args = append(args, "--burst", strconv.Itoa(cfg.Burst), "--burst-every", strconv.Itoa(cfg.BurstEvery))
	}
	if cfg.NoComments {
		args = append(args, "--comments", "0")
	}
	if cfg.Token != "" {
		args = append(args, "--token", cfg.Token)
	}
	if cfg.Faults {
		args = append(args, "--faults", "1")
	}
	if cfg.Others {
		args = append(args, "--others", "1")
	}
	if cfg.Forwarded {
		args = append(args, "--forwarded", "1")
	}
	if cfg.Commit > 0 {
		args = append(args, "--commit", strconv.Itoa(cfg.Commit))
	}
	cmd := exec.CommandContext(ctx, node, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	run := editorsRun{stderr: stderr.String()}
	if err != nil {
		t.Errorf("harness (seed %d): %v\n%s", seed, err, lastLines(run.stderr, 30))
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte(`{"summary":`)) {
			var s struct{ Summary editorsSummary }
			if err := json.Unmarshal(line, &s); err != nil {
				t.Fatalf("summary line: %v: %s", err, clip(string(line)))
			}
			run.summary = &s.Summary
			continue
		}
		var e editorLine
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("editor line: %v: %s", err, clip(string(line)))
		}
		run.editors = append(run.editors, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("harness output: %v", err)
	}
	if run.summary == nil {
		t.Fatalf("harness (seed %d) printed %d editors and no summary\n%s", seed, len(run.editors), lastLines(run.stderr, 30))
	}
	s := run.summary
	if s.Error != nil {
		t.Errorf("harness (seed %d): %s", seed, *s.Error)
	}
	if len(s.Diverged) > 0 {
		t.Errorf("harness (seed %d): editors %s diverged from the server", seed, s.Diverged)
	}
	if len(run.editors) != editors {
		t.Errorf("harness printed %d editors, want %d", len(run.editors), editors)
	}
	return run
}

// check checks the harness's figures: every edit made, steps accepted
// (the server's versions moved on by as many, plus those of the steps in
// doubt it took), every local step accepted, dropped in a rebase, lost in
// a reload or in doubt, and conflicts (with several editors typing at
// once there are always some).
func (r editorsRun) check(t *testing.T, edits int) {
	t.Helper()
	s := r.summary
	if s.Edits != edits {
		t.Errorf("summary: %d edits, want %d", s.Edits, edits)
	}
	if moved := s.ServerVersion - s.InitialVersion; s.StepsAccepted <= 0 || moved < s.StepsAccepted || moved > s.StepsAccepted+s.StepsInDoubt {
		t.Errorf("summary: %d steps accepted, %d in doubt; the server went from version %d to %d",
			s.StepsAccepted, s.StepsInDoubt, s.InitialVersion, s.ServerVersion)
	}
	if s.StepsLocal != s.StepsAccepted+s.StepsDropped+s.StepsLost+s.StepsInDoubt {
		t.Errorf("summary: %d local steps, %d accepted + %d dropped + %d lost in reloads + %d in doubt",
			s.StepsLocal, s.StepsAccepted, s.StepsDropped, s.StepsLost, s.StepsInDoubt)
	}
	// A commit-mode editor's conflicts are its stale commits (rebased on
	// the server, never a 409).
	if s.Editors > 1 && s.Conflicts+s.Commit.Stale == 0 {
		t.Errorf("summary: %d editors and no conflict", s.Editors)
	}
	t.Logf("seed %d: %d editors, %d edits, %d local steps: %d accepted, %d dropped in rebases; "+
		"%d posts (up to %d steps), %d conflicts (409), %d polls (%d aborted), %d rebases, comments %d made %d deleted; "+
		"version %d → %d in %.1f s",
		s.Seed, s.Editors, s.Edits, s.StepsLocal, s.StepsAccepted, s.StepsDropped,
		s.Posts, s.MaxPostSteps, s.Conflicts, s.Polls, s.PollsAborted, s.Rebased, s.CommentsMade, s.CommentsGone,
		s.InitialVersion, s.ServerVersion, float64(s.Ms)/1000)
	if s.SelectionGuards > 0 {
		t.Logf("%d node selections would have crashed prosemirror-state's NodeSelection.map (see guardNodeSelection)", s.SelectionGuards)
	}
}

// checkWS checks the figures of the WebSocket editors: as many as asked,
// steps submitted and acknowledged, connections dropped and each resumed
// at its version (a welcome, never a snapshot), and presence sent,
// received and checked to be in the document.
func (r editorsRun) checkWS(t *testing.T, cfg editorsConfig) {
	t.Helper()
	w := r.summary.WS
	n := 0
	for _, e := range r.editors {
		if e.Transport == "ws" {
			n++
		}
	}
	if w.Editors != cfg.WS || n != cfg.WS {
		t.Errorf("summary: %d WebSocket editors, %d editor lines over WebSocket; want %d", w.Editors, n, cfg.WS)
	}
	if w.Submissions == 0 || w.Acks == 0 {
		t.Errorf("summary: %d WebSocket submissions, %d acks", w.Submissions, w.Acks)
	}
	if cfg.ReconnectEvery > 0 && w.Drops == 0 {
		t.Errorf("summary: no WebSocket connection dropped")
	}
	// A 1006 close is a server that died (only with cfg.Faults; else the
	// harness fails), a 1012 close a server that drains.
	if closes := w.Drops + w.Pauses + w.ServerCloses["4008"] + w.ServerCloses["1006"] + w.ServerCloses["1012"]; w.Reconnects != closes || w.Resumes < closes {
		t.Errorf("summary: %d connections dropped (%d by the harness, %d in pauses, %d by a dying server, %d by a draining one), %d reconnections, %d resumed with a version",
			closes, w.Drops, w.Pauses, w.ServerCloses["1006"], w.ServerCloses["1012"], w.Reconnects, w.Resumes)
	}
	if w.SnapshotsOnResume != 0 || w.StepsLost != 0 {
		t.Errorf("summary: %d resumptions answered with a snapshot, %d unconfirmed steps lost", w.SnapshotsOnResume, w.StepsLost)
	}
	if w.PresenceSent == 0 || w.PresenceReceived == 0 || w.PresenceChecked == 0 {
		t.Errorf("summary: presence %d sent, %d received, %d positions checked", w.PresenceSent, w.PresenceReceived, w.PresenceChecked)
	}
	t.Logf("WebSocket: %d editors, %d submissions, %d acks, %d conflicts; %d messages sent, %d received; "+
		"%d drops, %d pauses, %d reconnections, %d resumed (%d own steps confirmed by the welcome, %d snapshots: history gone), "+
		"server closes %v; presence %d sent, %d received, %d positions checked",
		w.Editors, w.Submissions, w.Acks, w.Conflicts, w.MessagesSent, w.MessagesReceived,
		w.Drops, w.Pauses, w.Reconnects, w.Resumes, w.ConfirmedOnResume, w.HistoryGone, w.ServerCloses,
		w.PresenceSent, w.PresenceReceived, w.PresenceChecked)
}

// checkCommit checks the figures of the commit-mode editors: as many as
// asked, commits made, stale ones among them (rebased on the server) and
// answers dropped as lost, each commit sent again answered as it was (or
// the harness fails). With commit-mode editors only, there must be
// commits answered with dropped steps: the server dropped steps that the
// client kept, and the client followed.
func (r editorsRun) checkCommit(t *testing.T, cfg editorsConfig) {
	t.Helper()
	c := r.summary.Commit
	n := 0
	for _, e := range r.editors {
		if e.Mode == "commit" {
			n++
		}
	}
	if c.Editors != cfg.Commit || n != cfg.Commit {
		t.Errorf("summary: %d commit-mode editors, %d editor lines in commit mode; want %d", c.Editors, n, cfg.Commit)
	}
	if c.Commits == 0 || c.Stale == 0 || c.Resends == 0 {
		t.Errorf("summary: %d commits, %d stale, %d sent again after a lost answer: want some of each", c.Commits, c.Stale, c.Resends)
	}
	if cfg.Commit == cfg.Editors && c.WithDrops == 0 {
		t.Errorf("summary: %d commits, none answered with dropped steps", c.Commits)
	}
	t.Logf("commit mode: %d editors, %d commits, %d stale, %d with dropped steps (%d steps), %d sent again; "+
		"answers before the events %d, after %d; %d own steps checked in events; %d local rebases on answers",
		c.Editors, c.Commits, c.Stale, c.WithDrops, c.StepsDroppedByServer, c.Resends,
		c.AnswersFirst, c.EventsFirst, c.OwnEventsChecked, c.RebasedOnAnswer)
}

// checkPauses checks that the editors fell behind the history and that
// the documents were unloaded, as configured: lags begun, 410s answered
// (each a reload), every break ended by its document's unload.
func (r editorsRun) checkPauses(t *testing.T, cfg editorsConfig) {
	t.Helper()
	s := r.summary
	if cfg.Lag > 0 && (s.Lags == 0 || s.HistoryGone == 0) {
		t.Errorf("summary: %d lags, %d answers 410 (history gone): want some", s.Lags, s.HistoryGone)
	}
	if cfg.Lag > 0 && cfg.WS > 0 && s.WS.HistoryGone == 0 {
		t.Errorf("summary: no WebSocket resumption answered with a snapshot (history gone)")
	}
	for _, d := range s.Docs {
		if d.Breaks != cfg.Breaks || d.Unloads != d.Breaks {
			t.Errorf("summary: document %s took %d breaks, ended by %d unloads; want %d", d.ID, d.Breaks, d.Unloads, cfg.Breaks)
		}
	}
	t.Logf("pauses: %d lags, %d bursts; history gone: %d answers 410 (long poll), %d snapshots on resume (WebSocket); "+
		"%d unconfirmed steps lost in reloads, %d in doubt; %d breaks, %d unloads seen",
		s.Lags, s.Bursts, s.HistoryGone, s.WS.HistoryGone, s.StepsLost, s.StepsInDoubt, s.Breaks, s.UnloadsSeen)
}

// collabDocState is GET /docs/{id}'s answer, the document kept verbatim.
type collabDocState struct {
	Doc            json.RawMessage `json:"doc"`
	Version        int64           `json:"version"`
	Comments       json.RawMessage `json:"comments"`
	CommentVersion int64           `json:"commentVersion"`
}

// collabListEntry is an element of GET /docs's answer.
type collabListEntry struct {
	ID      string `json:"id"`
	Users   int    `json:"users"`
	Version int64  `json:"version"`
}

func getDocState(t *testing.T, url string) collabDocState {
	t.Helper()
	var st collabDocState
	getJSON(t, url, &st)
	return st
}

// getJSON decodes the answer of GET url into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, clip(string(body)))
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, clip(string(body)))
	}
}

// syncBuffer collects the log output of goroutines.
type syncBuffer = testutil.LogBuffer

// collabSchemas is collab.Config.Schemas over the built-in schemas.
func collabSchemas(name string) (*model.Schema, bool) {
	s, err := schemas.Get(name)
	return s, err == nil
}

// loadCounter is a store that counts loads per document: the authority
// loads a document on first use and again after it unloaded it.
type loadCounter struct {
	store.Store
	mu    sync.Mutex
	loads map[string]int
}

func (s *loadCounter) Load(ctx context.Context, id string) (store.Head, error) {
	s.mu.Lock()
	s.loads[id]++
	s.mu.Unlock()
	return s.Store.Load(ctx, id)
}

// count returns the number of loads of the document id.
func (s *loadCounter) count(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads[id]
}

// newEditorsAuthority opens the SQLite store at path and an authority on
// it (through a loadCounter) that snapshots often and prunes nothing,
// with cfg's History and IdleUnload.
func newEditorsAuthority(t *testing.T, path string, logger *slog.Logger, cfg editorsConfig) (*collab.Authority, *sqlite.Store, *loadCounter) {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	counter := &loadCounter{Store: st, loads: map[string]int{}}
	a, err := collab.New(collab.Config{
		Store:         counter,
		Schemas:       collabSchemas,
		DefaultSchema: "basic",
		AutoCreate:    true,
		History:       cfg.History,
		SnapshotEvery: 300,
		KeepSteps:     -1,
		IdleUnload:    cfg.IdleUnload,
		Logger:        logger,
	})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	return a, st, counter
}

func TestCollabEditors(t *testing.T) {
	node := editorsNode(t, "js/node_modules/prosemirror-collab")
	edits := 4000
	if testing.Short() {
		edits = 400
	}
	testEditorsOnSQLite(t, node, []string{"real-editors"}, editorsConfig{Editors: 8, Edits: edits, Seed: editorsSeed(t)})
}

// TestCollabEditorsCommit runs 8 long-poll editors in commit mode
// (POST /docs/{id}/commits, docs/api.md): their stale commits are rebased
// on the server, which drops the steps that no longer apply, and each
// editor moves to the server's document at its answer's version with its
// later steps rebased on top. Now and then an editor drops an answer as
// lost and sends the commit again: the answer must be the same. They
// must converge as in TestCollabEditors.
func TestCollabEditorsCommit(t *testing.T) {
	node := editorsNode(t, "js/node_modules/prosemirror-collab")
	edits := 3000
	if testing.Short() {
		edits = 400
	}
	testEditorsOnSQLite(t, node, []string{"commit-editors"}, editorsConfig{Editors: 8, Commit: 8, Edits: edits, Seed: editorsSeed(t)})
}

// TestCollabEditorsCommitMixed runs 4 classic long-poll editors and 4 in
// commit mode on one document.
func TestCollabEditorsCommitMixed(t *testing.T) {
	node := editorsNode(t, "js/node_modules/prosemirror-collab")
	edits := 2000
	if testing.Short() {
		edits = 400
	}
	testEditorsOnSQLite(t, node, []string{"commit-mixed-editors"}, editorsConfig{Editors: 8, Commit: 4, Edits: edits, Seed: editorsSeed(t)})
}

func TestCollabEditorsMixed(t *testing.T) {
	node := editorsNode(t, "js/node_modules/ws")
	if _, err := os.Stat("../web/src/client.js"); err != nil {
		t.Fatalf("the WebSocket client module: %v", err)
	}
	// About 6 drops per WebSocket editor (at least 1 under -short).
	edits, reconnectEvery := 3000, 60
	if testing.Short() {
		edits, reconnectEvery = 400, 20
	}
	testEditorsOnSQLite(t, node, []string{"mixed-editors"}, editorsConfig{
		Editors: 8, WS: 4, Edits: edits, ReconnectEvery: reconnectEvery, Seed: editorsSeed(t),
	})
}

func TestCollabEditorsDocs(t *testing.T) {
	node := editorsNode(t, "js/node_modules/ws")
	if _, err := os.Stat("../web/src/client.js"); err != nil {
		t.Fatalf("the WebSocket client module: %v", err)
	}
	// 4 editors per document, two over WebSocket; the second and third
	// (one of each kind) lag. A lag waits for History+10 steps of the
	// others. A burst is one submission longer than the history: the
	// document's WebSocket hub resyncs its clients (close 4008, then a
	// snapshot), and the long-poll editors behind it get 410.
	edits, lagEvery, burstEvery := 1500, 25, 120
	if testing.Short() {
		edits, lagEvery, burstEvery = 600, 8, 50
	}
	testEditorsOnSQLite(t, node, []string{"docs-a", "docs-b", "docs-c"}, editorsConfig{
		Editors: 12, WS: 6, Edits: edits, Seed: editorsSeed(t),
		History: 30, IdleUnload: 100 * time.Millisecond, Lag: 2, LagEvery: lagEvery, Breaks: 2,
		Burst: 35, BurstEvery: burstEvery,
	})
}

// testEditorsOnSQLite runs the harness against an in-process server over
// SQLite in a temporary folder, on the documents docIDs (created with
// editorsStartDoc), and checks that for each the editors, the server,
// the replayed step log and a restarted authority agree.
func testEditorsOnSQLite(t *testing.T, node string, docIDs []string, cfg editorsConfig) {
	t.Helper()
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	defer func() {
		if t.Failed() && logs.String() != "" {
			t.Logf("server log:\n%s", lastLines(logs.String(), 50))
		}
	}()
	dbPath := filepath.Join(t.TempDir(), "pmauthority.db")
	a, st, loads := newEditorsAuthority(t, dbPath, logger, cfg)
	start := editorsStart(t)
	ctx := context.Background()
	for _, id := range docIDs {
		if _, err := a.Create(ctx, id, "basic", start); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := server.New(server.Config{Collab: a, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	base, stopServe := serveLoopback(t, srv)
	shutdown := func() {
		if stopServe != nil {
			if err := stopServe(); err != nil {
				t.Errorf("Serve: %v", err)
			}
			stopServe = nil
			if err := a.Close(); err != nil {
				t.Errorf("Authority.Close: %v", err)
			}
			if err := st.Close(); err != nil {
				t.Errorf("store Close: %v", err)
			}
		}
	}
	defer shutdown()

	run := runEditors(t, node, base, docIDs, cfg)
	run.check(t, cfg.Edits)
	if cfg.WS > 0 {
		run.checkWS(t, cfg)
	}
	if cfg.Commit > 0 {
		run.checkCommit(t, cfg)
	}
	if cfg.Lag > 0 || cfg.Breaks > 0 {
		run.checkPauses(t, cfg)
	}
	if len(run.summary.Docs) != len(docIDs) {
		t.Fatalf("summary: %d documents, want %d", len(run.summary.Docs), len(docIDs))
	}
	finals := make([]collabDocState, len(docIDs))
	for i, id := range docIDs {
		// The unloads (before the checks load the document again): each
		// break ended by an unload, after which the document was loaded
		// again.
		if n := loads.count(id); n < 1+cfg.Breaks {
			t.Errorf("document %s: loaded %d times from the store, want at least %d (%d breaks)", id, n, 1+cfg.Breaks, cfg.Breaks)
		}
		finals[i] = checkEditorsDoc(t, base, st, start, id, run, cfg)
	}

	// A new authority over the reopened store serves the same state.
	shutdown()
	a2, st2, _ := newEditorsAuthority(t, dbPath, logger, cfg)
	defer func() {
		if err := a2.Close(); err != nil {
			t.Errorf("Authority.Close after the restart: %v", err)
		}
		st2.Close()
	}()
	for i, id := range docIDs {
		final := finals[i]
		again, err := a2.Get(ctx, id, "restart")
		if err != nil {
			t.Fatal(err)
		}
		if again.Version != final.Version || again.CommentVersion != final.CommentVersion {
			t.Errorf("%s after a restart: version %d, comment version %d; before %d, %d",
				id, again.Version, again.CommentVersion, final.Version, final.CommentVersion)
		}
		if got := again.Doc.AppendJSON(nil); !bytes.Equal(got, final.Doc) {
			t.Errorf("%s after a restart: the document differs: %s", id, firstDifference(got, final.Doc))
		}
		var restarted collabDocState
		if err := json.Unmarshal(again.AppendJSON(nil), &restarted); err != nil {
			t.Fatalf("State.AppendJSON after a restart: %v", err)
		}
		if !bytes.Equal(restarted.Comments, final.Comments) {
			t.Errorf("%s after a restart: the comments are %s, before %s", id, clip(string(restarted.Comments)), clip(string(final.Comments)))
		}
	}
}

// checkEditorsDoc checks the document docID after a run: its editors
// have the server's document and version, which the step log replayed
// from start gives (and the snapshot, the document at its version), and
// the events in the server's history are the stored steps. It returns
// the server's state.
func checkEditorsDoc(t *testing.T, base string, st store.Store, start *model.Node, docID string, run editorsRun, cfg editorsConfig) collabDocState {
	t.Helper()
	ctx := context.Background()
	final := getDocState(t, base+"/docs/"+docID)
	i := slices.IndexFunc(run.summary.Docs, func(d docSummary) bool { return d.ID == docID })
	if i < 0 {
		t.Fatalf("summary: no document %s", docID)
	}
	if d := run.summary.Docs[i]; final.Version != d.ServerVersion {
		t.Errorf("GET /docs/%s: version %d, the harness ended at %d", docID, final.Version, d.ServerVersion)
	}
	byClient := map[string]editorLine{}
	for _, e := range run.editors {
		if e.DocID != docID {
			continue
		}
		byClient[string(e.ClientID)] = e
		if e.Version != final.Version || e.CommentVersion != final.CommentVersion || e.Sendable {
			t.Errorf("editor %d (client %s) of %s: version %d, comment version %d, sendable %t; the server is at %d, %d",
				e.Editor, e.ClientID, docID, e.Version, e.CommentVersion, e.Sendable, final.Version, final.CommentVersion)
		}
		if !bytes.Equal(e.Doc, final.Doc) {
			t.Errorf("editor %d (client %s) of %s: document differs from the server's: %s",
				e.Editor, e.ClientID, docID, firstDifference(e.Doc, final.Doc))
		}
	}
	if len(byClient) < 2 {
		t.Errorf("%d editors of %s, want several", len(byClient), docID)
	}

	// GET /docs lists the document, with its user (every editor is at
	// 127.0.0.1) unless it may have been unloaded since.
	var list []collabListEntry
	getJSON(t, base+"/docs", &list)
	if !slices.ContainsFunc(list, func(d collabListEntry) bool { return d.ID == docID && (d.Users >= 1 || cfg.IdleUnload > 0) }) {
		t.Errorf("GET /docs: %v, without %s and its users", list, docID)
	}

	// The step log, replayed from the start document, gives the server's
	// document, and the snapshot the document at its version.
	head, err := st.Load(ctx, docID)
	if err != nil {
		t.Fatal(err)
	}
	if head.Version != final.Version || head.Schema != "basic" {
		t.Errorf("store: %s at version %d, schema %q; the server is at %d", docID, head.Version, head.Schema, final.Version)
	}
	steps, err := st.Steps(ctx, docID, 0, head.Version)
	if err != nil {
		t.Fatalf("store Steps(%s, 0, %d): %v", docID, head.Version, err)
	}
	if int64(len(steps)) != head.Version {
		t.Fatalf("store: %d steps for version %d of %s", len(steps), head.Version, docID)
	}
	doc := start
	fromClients := map[string]int{}
	snapshotChecked := head.Snapshot.Version == 0
	for i, s := range steps {
		if s.Version != int64(i+1) {
			t.Fatalf("store: step %d of %s has version %d", i+1, docID, s.Version)
		}
		fromClients[string(s.ClientID)]++
		if _, ok := byClient[string(s.ClientID)]; !ok {
			t.Errorf("store: step %d of %s from client %s, which is none of its editors", s.Version, docID, s.ClientID)
		}
		step, err := transform.StepFromJSON(start.Type.Schema, s.JSON)
		if err != nil {
			t.Fatalf("store: step %d of %s %s: %v", s.Version, docID, clip(string(s.JSON)), err)
		}
		if doc, err = step.Apply(doc); err != nil {
			t.Fatalf("store: step %d of %s %s does not apply: %v", s.Version, docID, clip(string(s.JSON)), err)
		}
		if s.Version == head.Snapshot.Version {
			snapshotChecked = true
			if got := doc.AppendJSON(nil); !bytes.Equal(got, head.Snapshot.Doc) {
				t.Errorf("store: the snapshot of %s at version %d differs from the replayed steps: %s",
					docID, s.Version, firstDifference(head.Snapshot.Doc, got))
			}
		}
	}
	if !snapshotChecked {
		t.Errorf("store: snapshot of %s at version %d, beyond the steps", docID, head.Snapshot.Version)
	}
	if got := doc.AppendJSON(nil); !bytes.Equal(got, final.Doc) {
		t.Errorf("store: the step log of %s replayed from version 0 differs from the server's document: %s",
			docID, firstDifference(got, final.Doc))
	}
	if len(fromClients) < 2 {
		t.Errorf("store: steps of %s from %d clients, want several: %v", docID, len(fromClients), fromClients)
	}
	// Each editor's steps are stored: those the server confirmed to it,
	// and some of those in doubt (after a harness that failed, also some
	// that were on their way when it stopped).
	for id, e := range byClient {
		if n := int64(fromClients[id]); run.summary.Error == nil && (n < e.Accepted || n > e.Accepted+e.InDoubt) {
			t.Errorf("store: %d steps of %s from editor %d (client %s), which had %d accepted and %d in doubt",
				n, docID, e.Editor, id, e.Accepted, e.InDoubt)
		}
	}
	if cfg.Commit > 0 && cfg.Commit < cfg.Editors {
		// Both modes edited.
		fromModes := map[string]int{}
		for id, n := range fromClients {
			fromModes[byClient[id].Mode] += n
		}
		if fromModes["commit"] == 0 || fromModes[""] == 0 {
			t.Errorf("store: steps of %s by mode %v, want some from each", docID, fromModes)
		}
	}
	if cfg.WS > 0 && cfg.WS < cfg.Editors {
		// Both transports edited.
		fromTransports := map[string]int{}
		for id, n := range fromClients {
			fromTransports[byClient[id].Transport] += n
		}
		if fromTransports["ws"] == 0 || fromTransports["http"] == 0 {
			t.Errorf("store: steps of %s by transport %v, want some from each", docID, fromTransports)
		}
	}
	t.Logf("store: %s: %d steps from %d clients replayed, snapshot at version %d; document %d bytes",
		docID, len(steps), len(fromClients), head.Snapshot.Version, len(final.Doc))

	// The events in the history kept in memory (since version 0 unless
	// cfg.History is shorter), which the editors saw only in slices, are
	// the stored steps.
	from := 0
	if cfg.History > 0 {
		from = max(0, len(steps)-cfg.History)
	}
	var events struct {
		Version   int64             `json:"version"`
		Steps     []json.RawMessage `json:"steps"`
		ClientIDs []json.RawMessage `json:"clientIDs"`
	}
	getJSON(t, fmt.Sprintf("%s/docs/%s/events?version=%d&commentVersion=%d", base, docID, from, final.CommentVersion), &events)
	kept := steps[from:]
	if events.Version != final.Version || len(events.Steps) != len(kept) || len(events.ClientIDs) != len(kept) {
		t.Errorf("events of %s since version %d: version %d, %d steps, %d client ids; want %d of each",
			docID, from, events.Version, len(events.Steps), len(events.ClientIDs), len(kept))
	} else {
		for i, s := range kept {
			if !bytes.Equal(events.Steps[i], s.JSON) || !bytes.Equal(events.ClientIDs[i], s.ClientID) {
				t.Errorf("events of %s since version %d: step %d is %s from %s, the store has %s from %s", docID, from, s.Version,
					clip(string(events.Steps[i])), events.ClientIDs[i], clip(string(s.JSON)), s.ClientID)
				break
			}
		}
	}
	return final
}

func TestCollabEditorsTwoNodes(t *testing.T) {
	node := editorsNode(t, "js/node_modules/ws")
	if _, err := os.Stat("../web/src/client.js"); err != nil {
		t.Fatalf("the WebSocket client module: %v", err)
	}
	edits, reconnectEvery := 3000, 60
	if testing.Short() {
		edits, reconnectEvery = 400, 20
	}
	cfg := editorsConfig{Editors: 8, WS: 4, Edits: edits, ReconnectEvery: reconnectEvery, Seed: editorsSeed(t)}
	const docID = "two-nodes"

	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	defer func() {
		if t.Failed() && logs.String() != "" {
			t.Logf("server log:\n%s", lastLines(logs.String(), 50))
		}
	}()
	shared := memstore.New()
	defer shared.Close()
	start := editorsStart(t)
	ctx := context.Background()
	auths := make([]*collab.Authority, 2)
	bases := make([]string, 2)
	for i := range auths {
		a, err := collab.New(collab.Config{
			Store:         shared,
			Schemas:       collabSchemas,
			DefaultSchema: "basic",
			AutoCreate:    true,
			SnapshotEvery: 300,
			KeepSteps:     -1,
			Logger:        logger.With("node", i),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := a.Close(); err != nil {
				t.Errorf("Authority.Close of node %d: %v", i, err)
			}
		}()
		auths[i] = a
		srv, err := server.New(server.Config{Collab: a, Logger: logger.With("node", i)})
		if err != nil {
			t.Fatal(err)
		}
		base, stopServe := serveLoopback(t, srv)
		defer func() { // before the authority's Close
			if err := stopServe(); err != nil {
				t.Errorf("Serve of node %d: %v", i, err)
			}
		}()
		bases[i] = base
	}
	if _, err := auths[0].Create(ctx, docID, "basic", start); err != nil {
		t.Fatal(err)
	}

	run := runEditors(t, node, strings.Join(bases, ","), []string{docID}, cfg)
	run.check(t, cfg.Edits)
	run.checkWS(t, cfg)
	// Both nodes served editors of both kinds (editor i uses node i mod 2).
	finals := make([]collabDocState, len(bases))
	for i, base := range bases {
		finals[i] = checkEditorsDoc(t, base, shared, start, docID, run, cfg)
	}
	if !bytes.Equal(finals[0].Doc, finals[1].Doc) || finals[0].Version != finals[1].Version ||
		finals[0].CommentVersion != finals[1].CommentVersion || !bytes.Equal(finals[0].Comments, finals[1].Comments) {
		t.Errorf("the nodes disagree: version %d, comment version %d, comments %s; and %d, %d, %s; documents %s",
			finals[0].Version, finals[0].CommentVersion, clip(string(finals[0].Comments)),
			finals[1].Version, finals[1].CommentVersion, clip(string(finals[1].Comments)), firstDifference(finals[0].Doc, finals[1].Doc))
	}
	for i, a := range auths {
		st, err := a.Get(ctx, docID, "")
		if err != nil {
			t.Fatal(err)
		}
		if st.Version != finals[0].Version || !bytes.Equal(st.DocJSON, finals[0].Doc) {
			t.Errorf("authority %d: version %d, the servers are at %d; documents %s", i, st.Version, finals[0].Version, firstDifference(st.DocJSON, finals[0].Doc))
		}
	}
}

// TestCollabEditorsNodeAuthority runs the harness against the node
// reference authority: a harness that reports divergence there is wrong
// itself.
func TestCollabEditorsNodeAuthority(t *testing.T) {
	node := editorsNode(t, "js/node_modules/prosemirror-collab")
	if _, err := os.Stat("../bench/noderef/node_modules/prosemirror-transform"); err != nil {
		t.Skipf("bench/noderef has no npm packages (%v)", err)
	}
	edits := 1000
	if testing.Short() {
		edits = 200
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "../bench/noderef/authority.mjs", "--port", "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		cmd.Wait()
	}()
	// It prints "listening on PORT" once it listens.
	line, err := bufio.NewReader(out).ReadString('\n')
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("authority.mjs said %q (%v)\n%s", line, err, stderr.String())
	}
	go io.Copy(io.Discard, out)
	run := runEditors(t, node, "http://127.0.0.1:"+port, []string{"harness-check"}, editorsConfig{Editors: 8, Edits: edits, Seed: editorsSeed(t)})
	run.check(t, edits)
}

// firstDifference describes where a and b first differ.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-60)
	return fmt.Sprintf("at byte %d of %d/%d: …%s… vs …%s…", i, len(a), len(b),
		a[from:min(len(a), i+60)], b[from:min(len(b), i+60)])
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// serveLoopback serves srv on a free loopback port and returns its base
// URL and the function that stops it, returning what Serve returned.
func serveLoopback(t *testing.T, srv *server.Server) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), func() error {
		stop()
		return <-served
	}
}

// editorsStart returns editorsStartDoc in the basic schema.
func editorsStart(t *testing.T) *model.Node {
	t.Helper()
	basic, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	start, err := basic.NodeFromJSON([]byte(editorsStartDoc))
	if err != nil {
		t.Fatal(err)
	}
	return start
}
