package collab_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "modernc.org/sqlite" // the old layout is written with the driver itself

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

// metaRecorder records the metadata of every Append and AppendIf.
type metaRecorder struct {
	*memstore.Store
	mu    sync.Mutex
	metas [][]byte
}

func (s *metaRecorder) Append(ctx context.Context, id string, base int64, steps []store.Step, meta []byte) error {
	s.record(meta)
	return s.Store.Append(ctx, id, base, steps, meta)
}

func (s *metaRecorder) AppendIf(ctx context.Context, id string, base int64, steps []store.Step, metaSeq int64, meta []byte) error {
	s.record(meta)
	return s.Store.AppendIf(ctx, id, base, steps, metaSeq, meta)
}

func (s *metaRecorder) record(meta []byte) {
	s.mu.Lock()
	s.metas = append(s.metas, bytes.Clone(meta))
	s.mu.Unlock()
}

func (s *metaRecorder) last() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.metas[len(s.metas)-1]
}

// TestKeystrokeWritesNoComments checks that a step moving every comment
// writes nothing of them to the store, and that a comment create writes
// that comment alone.
func TestKeystrokeWritesNoComments(t *testing.T) {
	rec := &metaRecorder{Store: memstore.New()}
	a := newAuthority(t, rec, collab.Config{})
	r := mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, strings.Repeat("x", 400)))})
	var events []collab.CommentEvent
	for i := range 200 {
		events = append(events, collab.CommentEvent{Type: collab.CommentCreate, ID: int64(i + 1), From: 2 + 2*i, To: 3 + 2*i, Text: strings.Repeat("c", 100)})
	}
	r = mustSubmit(t, a, "d", collab.Submission{Version: r.Version, Comments: events})
	r = mustSubmit(t, a, "d", collab.Submission{Version: r.Version, Steps: steps(insert(1, "a"))})
	if m := rec.last(); m != nil {
		t.Errorf("a keystroke moving 200 comments wrote %d bytes of metadata, want none", len(m))
	}
	if got := mustGet(t, a, "d").Comments[0]; got.From != 3 || got.To != 4 {
		t.Errorf("the first comment is at %d-%d, want 3-4", got.From, got.To)
	}
	mustSubmit(t, a, "d", collab.Submission{Version: r.Version, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 999, From: 1, To: 2, Text: "new"}}})
	if m := rec.last(); len(m) == 0 || len(m) > 200 {
		t.Errorf("a comment create wrote %d bytes of metadata, want the one comment: %s", len(m), m)
	}
	mustSubmit(t, a, "d", collab.Submission{Version: r.Version, Comments: []collab.CommentEvent{{Type: collab.CommentDelete, ID: 5}}})
	if m := rec.last(); len(m) == 0 || len(m) > 100 {
		t.Errorf("a comment delete wrote %d bytes of metadata: %s", len(m), m)
	}
}

// TestCommentsReload makes random steps and comment events, with
// frequent snapshots and pruning, and checks after each round that an
// Authority loading the document from the store has exactly the comments,
// comment version and comment events of the one that made them.
func TestCommentsReload(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) store.Store
	}{
		{"memstore", func(t *testing.T) store.Store { return memstore.New() }},
		{"sqlite", func(t *testing.T) store.Store {
			st, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"), sqlite.Options{Sync: sqlite.SyncNormal})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.open(t)
			cfg := collab.Config{SnapshotEvery: 7, KeepSteps: 3, History: 20, IdleUnload: -1}
			a := newAuthority(t, st, cfg)
			rng := rand.New(rand.NewPCG(1, 2))
			ctx := context.Background()
			nextID, accepted := int64(1), 0
			texts := []string{"", "a", "ü€😀", "line\nbreak \"quoted\" \x01", strings.Repeat("long ", 30)}
			for round := range 60 {
				s := mustGet(t, a, "d")
				size := s.Doc.Content.Size() // a paragraph: text at 1 … size-1
				sub := collab.Submission{Version: s.Version, ClientID: collab.ClientID("1")}
				if rng.IntN(3) > 0 {
					for range 1 + rng.IntN(3) {
						switch textLen := size - 2; {
						case textLen > 4 && rng.IntN(3) == 0:
							from := 1 + rng.IntN(textLen)
							to := from + 1 + rng.IntN(min(4, textLen-from+1))
							sub.Steps = append(sub.Steps, del(from, min(to, textLen+1)))
							size -= min(to, textLen+1) - from
						default:
							n := 1 + rng.IntN(5)
							sub.Steps = append(sub.Steps, insert(1+rng.IntN(textLen+1), strings.Repeat("x", n)))
							size += n
						}
					}
				}
				for range rng.IntN(4) {
					if len(s.Comments) > 0 && rng.IntN(3) == 0 {
						sub.Comments = append(sub.Comments, collab.CommentEvent{Type: collab.CommentDelete, ID: s.Comments[rng.IntN(len(s.Comments))].ID})
						continue
					}
					if rng.IntN(8) == 0 {
						sub.Comments = append(sub.Comments, collab.CommentEvent{Type: collab.CommentDelete, ID: 12345}) // unknown
						continue
					}
					from := rng.IntN(size)
					to := from + 1 + rng.IntN(size-from)
					sub.Comments = append(sub.Comments, collab.CommentEvent{Type: collab.CommentCreate, ID: nextID, From: from, To: to, Text: texts[rng.IntN(len(texts))]})
					nextID++
				}
				_, err := a.Submit(ctx, "d", "", sub)
				if err != nil && !errors.Is(err, collab.ErrInvalidRequest) {
					t.Fatalf("round %d: %v", round, err)
				}
				if err == nil {
					accepted++
				}
				if round%5 == 4 {
					a.WaitBackground()
					b := newAuthority(t, st, cfg)
					sameComments(t, fmt.Sprint("round ", round), a, b)
					b.Close()
				}
			}
			// The rounds went through snapshots, pruning and comment
			// entries after the base.
			h, err := st.Load(ctx, "d")
			if err != nil {
				t.Fatal(err)
			}
			s := mustGet(t, a, "d")
			if accepted < 40 || len(s.Comments) < 3 || h.Oldest == 0 || h.MetaBase == 0 || h.MetaVersion == 0 {
				t.Errorf("%d submissions accepted, %d comments; the store's head %+v: too little tested", accepted, len(s.Comments), h)
			}
		})
	}
}

// sameComments fails the test unless a and b have the same document,
// comments and comment events, byte for byte.
func sameComments(t *testing.T, what string, a, b *collab.Authority) {
	t.Helper()
	ctx := context.Background()
	sa, sb := mustGet(t, a, "d"), mustGet(t, b, "d")
	if !bytes.Equal(sa.DocJSON, sb.DocJSON) || sa.Version != sb.Version || sa.CommentVersion != sb.CommentVersion ||
		!bytes.Equal(commentsJSON(sa.Comments), commentsJSON(sb.Comments)) {
		t.Fatalf("%s: reloaded state differs:\n%d %d %s\n%d %d %s", what, sa.Version, sa.CommentVersion, commentsJSON(sa.Comments),
			sb.Version, sb.CommentVersion, commentsJSON(sb.Comments))
	}
	for since := max(0, sa.CommentVersion-30); since <= sa.CommentVersion; since++ {
		ea, errA := a.Events(ctx, "d", "", sa.Version, since)
		eb, errB := b.Events(ctx, "d", "", sa.Version, since)
		if (errA == nil) != (errB == nil) || fmt.Sprint(ea.Comment) != fmt.Sprint(eb.Comment) {
			t.Fatalf("%s: events after comment version %d differ:\n%v %v\n%v %v", what, since, ea.Comment, errA, eb.Comment, errB)
		}
	}
}

func commentsJSON(comments []collab.Comment) []byte {
	var buf []byte
	for _, c := range comments {
		buf = c.AppendJSON(buf)
	}
	return buf
}

// TestCommentsOldLayout opens a SQLite file laid out as before comments
// were stored as entries (layout 2: the whole comment set in docs.meta,
// referring to the latest version) and checks that the document has the
// same comments, that they move on with new steps and survive a reload.
func TestCommentsOldLayout(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	doc := paragraph("hello world")
	meta := `{"comments":[{"from":2,"to":5,"text":"ello","id":7},{"from":7,"to":12,"text":"world \"w\"","id":8}],` +
		`"commentVersion":3,"events":[{"type":"create","id":7},{"type":"create","id":9},{"type":"create","id":8}]}`
	for _, q := range []string{
		`CREATE TABLE docs (id TEXT PRIMARY KEY, schema TEXT NOT NULL, version INTEGER NOT NULL, oldest INTEGER NOT NULL,
			meta BLOB, created INTEGER NOT NULL, updated INTEGER NOT NULL)`,
		`CREATE TABLE steps (doc_id TEXT NOT NULL, version INTEGER NOT NULL, json BLOB, client_id BLOB, time INTEGER NOT NULL,
			PRIMARY KEY (doc_id, version)) WITHOUT ROWID`,
		`CREATE TABLE snapshots (doc_id TEXT NOT NULL, version INTEGER NOT NULL, doc BLOB, time INTEGER NOT NULL,
			PRIMARY KEY (doc_id, version))`,
		`CREATE TABLE log (seq INTEGER PRIMARY KEY, doc_id TEXT NOT NULL, version INTEGER NOT NULL, json BLOB,
			client_id BLOB, time INTEGER NOT NULL)`,
		// Snapshot at 0 ("hello"), then one step inserting " world", the
		// comments at version 1.
		`INSERT INTO docs VALUES ('d', 'basic', 1, 0, CAST('` + meta + `' AS BLOB), 1, 1)`,
		`INSERT INTO snapshots VALUES ('d', 0, CAST('` + paragraph("hello") + `' AS BLOB), 1)`,
		`INSERT INTO steps VALUES ('d', 1, CAST('` + string(insert(6, " world")) + `' AS BLOB), CAST('1' AS BLOB), 1)`,
		"PRAGMA application_id = 1886216565",
		"PRAGMA user_version = 2",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := newAuthority(t, st, collab.Config{})
	s := mustGet(t, a, "d")
	want := []collab.Comment{{From: 2, To: 5, Text: "ello", ID: 7}, {From: 7, To: 12, Text: `world "w"`, ID: 8}}
	if string(s.DocJSON) != doc || s.CommentVersion != 3 || !equalComments(s.Comments, want) {
		t.Fatalf("old layout: %s, comment version %d, comments %+v", s.DocJSON, s.CommentVersion, s.Comments)
	}
	ev, err := a.Events(ctx, "d", "", 1, 0)
	if err != nil || fmt.Sprint(ev.Comment) != fmt.Sprint([]collab.CommentEvent{
		{Type: "create", ID: 7, From: 2, To: 5, Text: "ello"}, {Type: "create", ID: 8, From: 7, To: 12, Text: `world "w"`}}) {
		t.Fatalf("old layout: events %+v, %v", ev.Comment, err)
	}
	mustSubmit(t, a, "d", collab.Submission{Version: 1, Steps: steps(insert(1, ">"))})
	a.Close()
	b := newAuthority(t, st, collab.Config{})
	want = []collab.Comment{{From: 3, To: 6, Text: "ello", ID: 7}, {From: 8, To: 13, Text: `world "w"`, ID: 8}}
	if s := mustGet(t, b, "d"); s.Version != 2 || !equalComments(s.Comments, want) {
		t.Fatalf("after a step and a reload: version %d, comments %+v", s.Version, s.Comments)
	}
}

// TestMaxCommentBytes checks the cap on a document's comments: a create
// beyond it is refused with a *LimitError naming the flag and changes
// nothing; a delete makes room again.
func TestMaxCommentBytes(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{Limits: collab.Limits{MaxCommentBytes: 1000}})
	r := mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello"))})
	text := strings.Repeat("t", 300) // 302 bytes as JSON, 494 with the overhead
	create := func(id int64) collab.Submission {
		return collab.Submission{Version: r.Version, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: id, From: 1, To: 3, Text: text}}}
	}
	mustSubmit(t, a, "d", create(1))
	mustSubmit(t, a, "d", create(2))
	before := mustGet(t, a, "d")
	_, err := a.Submit(ctx, "d", "", create(3))
	var le *collab.LimitError
	if !errors.As(err, &le) || le.Limit != 1000 || le.Value != 3*494 || !strings.Contains(err.Error(), "Limits.MaxCommentBytes") {
		t.Fatalf("a create over the cap: %v, want a *LimitError naming Limits.MaxCommentBytes", err)
	}
	if after := mustGet(t, a, "d"); after.CommentVersion != before.CommentVersion || len(after.Comments) != 2 {
		t.Errorf("the refused create changed the comments: %+v", after)
	}
	// Escaped characters count as their JSON.
	esc := collab.Submission{Version: r.Version, Comments: []collab.CommentEvent{{Type: collab.CommentCreate, ID: 4, From: 1, To: 3, Text: strings.Repeat("\x01", 11)}}}
	if _, err := a.Submit(ctx, "d", "", esc); !errors.As(err, &le) {
		t.Errorf("a create of 11 control characters (68 bytes as JSON, 148 with the overhead) over the cap: %v", err)
	}
	mustSubmit(t, a, "d", collab.Submission{Version: r.Version, Comments: []collab.CommentEvent{{Type: collab.CommentDelete, ID: 1}}})
	mustSubmit(t, a, "d", create(3))
}

// TestCommentsBaseBeforeSnapshot loads a document whose comment base is
// older than its snapshot (a snapshot saved without comments, as another
// writer's may be): the comments are mapped through the steps before the
// snapshot too.
func TestCommentsBaseBeforeSnapshot(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	a := newAuthority(t, mem, collab.Config{})
	r := mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "hello world"))})
	r = mustSubmit(t, a, "d", collab.Submission{Version: r.Version, Steps: steps(insert(1, ">>")), Comments: []collab.CommentEvent{
		{Type: collab.CommentCreate, ID: 1, From: 3, To: 8, Text: "hello"}, {Type: collab.CommentCreate, ID: 2, From: 9, To: 14, Text: "world"}}})
	r = mustSubmit(t, a, "d", collab.Submission{Version: r.Version, Steps: steps(del(1, 3), insert(4, "--"))})
	s := mustGet(t, a, "d")
	if err := mem.SaveSnapshot(ctx, "d", store.Snapshot{Version: s.Version, Doc: s.DocJSON}, -1); err != nil {
		t.Fatal(err)
	}
	mustSubmit(t, a, "d", collab.Submission{Version: r.Version, Steps: steps(insert(1, "!"))})
	if h, err := mem.Load(ctx, "d"); err != nil || h.MetaVersion != 0 || h.Snapshot.Version != 4 || h.Version != 5 {
		t.Fatalf("head %+v, %v: want the comment base at 0, the snapshot at 4", h, err)
	}
	b := newAuthority(t, mem, collab.Config{})
	sameComments(t, "base before the snapshot", a, b)
	if got := mustGet(t, b, "d").Comments; len(got) != 2 || got[0].From != 2 || got[1].From != 10 {
		t.Errorf("comments %+v", got)
	}
}
