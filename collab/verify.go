package collab

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/transform"
)

// VerifyOptions configures Verify.
type VerifyOptions struct {
	// Schemas looks up a document's schema by the name it was created
	// with, as Config.Schemas does.
	Schemas func(name string) (*model.Schema, bool)
	// MaxProblems bounds the problems that Verified.Problems holds for a
	// document (default 20); Verified.Count counts them all.
	MaxProblems int
}

// defaultMaxProblems is VerifyOptions.MaxProblems's default.
const defaultMaxProblems = 20

// Problem is something wrong with a stored document.
type Problem struct {
	// Doc is the document's id.
	Doc string
	// Version is the version concerned (of a step, a snapshot or a
	// comment entry), or -1 for the document as a whole.
	Version int64
	// What says what is wrong.
	What string
}

// String returns the problem as `doc "id" version V: what`.
func (p Problem) String() string {
	if p.Version < 0 {
		return fmt.Sprintf("doc %q: %s", p.Doc, p.What)
	}
	return fmt.Sprintf("doc %q version %d: %s", p.Doc, p.Version, p.What)
}

// Verified is what Verify checked of one document, and what it found.
type Verified struct {
	// ID and Version are the document's id and latest version.
	ID      string
	Version int64
	// Steps is the number of step rows read, and Replayed those of them
	// applied to a snapshot.
	Steps, Replayed int64
	// Snapshots is the number of valid snapshots, and Compared those of
	// them compared with the replay of the steps before them.
	Snapshots, Compared int
	// Comments is the number of comments at Version.
	Comments int
	// Problems are the first problems found, in the order of their
	// versions; Count is the number of all of them.
	Problems []Problem
	Count    int
}

// OK reports whether Verify found nothing wrong.
func (v *Verified) OK() bool { return v.Count == 0 }

// problem records a problem at version.
func (v *Verified) problem(limit int, version int64, format string, args ...any) {
	v.Count++
	if len(v.Problems) < limit {
		v.Problems = append(v.Problems, Problem{Doc: v.ID, Version: version, What: fmt.Sprintf(format, args...)})
	}
}

// Verify checks the stored document id as a load would rebuild it, and
// more. Each kept snapshot must be a document of its schema, stored as its
// canonical JSON (what Node.toJSON gives: snapshots are written so); the
// step rows must follow on from the oldest kept up to the document's
// version, and each must decode with the schema; from the oldest kept
// snapshot on, every step must apply in order, and a later snapshot must
// equal the document that the steps before it make (compared as canonical
// JSON); the comments (their base and the entries after it) must decode,
// fit the document at their version and replay through the steps. The
// backends keep every snapshot from the oldest kept version on (see
// store.Scanner), so the replay starts at the oldest kept step; the steps
// before the oldest snapshot (only in a store that an older pmauthority
// pruned short of a snapshot) are only decoded. Checkpoints' documents
// are not checked.
//
// Verify reads the document in one state of the store when the store is
// a store.Scanner (the backends of this module are), otherwise with Load
// and Steps a chunk at a time, the latest snapshot only. It holds one step
// row, the kept snapshots' documents and the step maps after the
// comments' version, never the whole log. What is wrong with the data is
// reported in Verified.Problems; the error is for a document that cannot
// be read at all (store.ErrNotFound, a failed read, the context's end).
func Verify(ctx context.Context, st store.Store, id string, opts VerifyOptions) (Verified, error) {
	if opts.MaxProblems <= 0 {
		opts.MaxProblems = defaultMaxProblems
	}
	for try := 0; ; try++ {
		v, err := verifyOnce(ctx, st, id, opts)
		// A snapshot saved meanwhile (by a server using the store) may
		// have folded the comment entries that the scan's head named.
		if errors.Is(err, store.ErrCompacted) && try < 3 {
			continue
		}
		return v, err
	}
}

func verifyOnce(ctx context.Context, st store.Store, id string, opts VerifyOptions) (Verified, error) {
	c := verifier{v: Verified{ID: id}, opts: opts}
	scan := scanReads(st)
	if sc, ok := st.(store.Scanner); ok {
		scan = sc.Scan
	}
	err := scan(ctx, id, c.checkSteps)
	if err == nil {
		err = c.checkComments(ctx, st)
	}
	slices.SortStableFunc(c.v.Problems, func(a, b Problem) int { return cmp.Compare(a.Version, b.Version) })
	return c.v, err
}

// scanChunk is how many steps scanReads reads at a time.
const scanChunk = 1000

// scanReads returns store.Scanner.Scan for st, which is not one: Load,
// then Steps a chunk at a time, without older snapshots. On a store that
// a server is writing to, the steps may be pruned meanwhile
// (store.ErrCompacted: Verify tries again).
func scanReads(st store.Store) func(context.Context, string, func(store.Head, []store.Snapshot, iter.Seq2[store.Step, error]) error) error {
	return func(ctx context.Context, id string, fn func(store.Head, []store.Snapshot, iter.Seq2[store.Step, error]) error) error {
		head, err := st.Load(ctx, id)
		if err != nil {
			return err
		}
		return fn(head, nil, func(yield func(store.Step, error) bool) {
			for from := head.Oldest; from < head.Version; from += scanChunk {
				steps, err := st.Steps(ctx, id, from, min(from+scanChunk, head.Version))
				if err != nil {
					yield(store.Step{}, err)
					return
				}
				for _, s := range steps {
					if !yield(s, nil) {
						return
					}
				}
			}
		})
	}
}

// verifier is the state of one Verify.
type verifier struct {
	v      Verified
	opts   VerifyOptions
	head   store.Head
	schema *model.Schema
	// snaps are the kept snapshots, oldest first (the latest last), and
	// nodes their documents (nil for one that is not valid); reached is
	// the number of them that the replay has passed.
	snaps   []store.Snapshot
	nodes   []*model.Node
	reached int
	// node is the document at version at, a snapshot with the steps
	// after it applied; nil while there is none (before the first
	// snapshot, after a step that failed or is missing).
	node *model.Node
	at   int64
	// metaSize is the content size of the document at the comments'
	// version, -1 when unknown; maps are the maps of the steps after
	// it, and mapsOK tells whether all of them decoded.
	metaSize int
	maps     []*transform.StepMap
	mapsOK   bool
}

func (c *verifier) problem(version int64, format string, args ...any) {
	c.v.problem(c.opts.MaxProblems, version, format, args...)
}

// checkSteps checks the head, the snapshots and the steps.
func (c *verifier) checkSteps(head store.Head, older []store.Snapshot, steps iter.Seq2[store.Step, error]) error {
	c.head, c.v.Version = head, head.Version
	c.metaSize, c.mapsOK = -1, true
	snap := head.Snapshot.Version
	if head.Oldest < 0 || head.Oldest > snap || snap > head.Version {
		c.problem(snap, "snapshot version outside the kept steps: want 0 ≤ oldest %d ≤ snapshot %d ≤ version %d", head.Oldest, snap, head.Version)
	}
	if head.MetaVersion < head.Oldest || head.MetaVersion > head.Version {
		c.problem(head.MetaVersion, "the comments refer to version %d, outside [%d, %d]", head.MetaVersion, head.Oldest, head.Version)
		c.mapsOK = false
	}
	if head.MetaBase < 0 || head.MetaBase > head.MetaSeq {
		c.problem(-1, "comment base folds in entry %d, want 0 to %d", head.MetaBase, head.MetaSeq)
	}
	for i, o := range older {
		if o.Version < head.Oldest || o.Version >= snap || i > 0 && o.Version <= older[i-1].Version {
			c.problem(o.Version, "an older snapshot out of order (oldest %d, latest snapshot %d)", head.Oldest, snap)
		}
	}
	c.snaps = append(slices.Clone(older), head.Snapshot)
	c.nodes = make([]*model.Node, len(c.snaps))
	if c.opts.Schemas != nil {
		c.schema, _ = c.opts.Schemas(head.Schema)
	}
	if c.schema == nil {
		c.problem(-1, "unknown schema %q: only the versions of the steps are checked", head.Schema)
	} else {
		for i, s := range c.snaps {
			c.nodes[i] = c.checkSnapshot(s)
		}
	}
	c.reach(head.Oldest)
	next := head.Oldest + 1 // the version due
	for row, err := range steps {
		if err != nil {
			return err
		}
		c.v.Steps++
		switch {
		case row.Version < next:
			c.problem(row.Version, "a second row for step %d", row.Version)
			continue
		case row.Version > head.Version:
			c.problem(row.Version, "a step after the document's version %d", head.Version)
			continue
		case row.Version > next:
			c.missing(next, row.Version-1)
		}
		next = row.Version + 1
		if c.schema != nil {
			c.reach(row.Version - 1)
			c.checkStep(row)
		}
	}
	if next <= head.Version {
		c.missing(next, head.Version)
	}
	c.reach(head.Version)
	return nil
}

// checkSnapshot returns the document of snap, after checking that snap
// is its canonical JSON, or nil.
func (c *verifier) checkSnapshot(snap store.Snapshot) *model.Node {
	node, err := c.schema.NodeFromJSON(snap.Doc)
	if err != nil {
		c.problem(snap.Version, "snapshot: not a document of schema %q: %v", c.head.Schema, err)
		return nil
	}
	if canon := node.AppendJSON(nil); !bytes.Equal(canon, snap.Doc) {
		i := firstDiff(canon, snap.Doc)
		c.problem(snap.Version, "snapshot: not the canonical JSON of the document it holds (at byte %d: %s, canonical %s)",
			i, excerpt(snap.Doc, i), excerpt(canon, i))
		return nil
	}
	c.v.Snapshots++
	return node
}

// reach passes the snapshots up to version v, where the replay is (when
// c.node is not nil): one at v is compared with the replay, and the
// replay goes on from it, as a load would.
func (c *verifier) reach(v int64) {
	for ; c.reached < len(c.snaps) && c.snaps[c.reached].Version <= v; c.reached++ {
		snap, node := c.snaps[c.reached], c.nodes[c.reached]
		if snap.Version < v {
			continue // passed in a gap of the steps
		}
		if c.node != nil && c.at == v {
			c.v.Compared++
			if canon := c.node.AppendJSON(nil); !bytes.Equal(canon, snap.Doc) {
				i := firstDiff(snap.Doc, canon)
				c.problem(v, "snapshot: not the document that the steps before it make (at byte %d: %s, the replay has %s)",
					i, excerpt(snap.Doc, i), excerpt(canon, i))
			}
		}
		if node != nil {
			c.node, c.at = node, v
		}
	}
	if c.node != nil && c.at == v && v == c.head.MetaVersion {
		c.metaSize = c.node.Content.Size()
	}
}

// missing records that the steps from to to are missing.
func (c *verifier) missing(from, to int64) {
	if from == to {
		c.problem(from, "step missing")
	} else {
		c.problem(from, "steps %d to %d missing", from, to)
	}
	c.mapsOK = c.mapsOK && to <= c.head.MetaVersion
	c.node = nil // nothing to replay the later steps on
}

// checkStep applies the step row to the replay when it is at the version
// before, and decodes it otherwise.
func (c *verifier) checkStep(row store.Step) {
	var step transform.Step
	if c.node != nil && c.at == row.Version-1 {
		node, err := apply.Steps(c.node, 1, func(int) []byte { return row.JSON }, apply.StepOptions{},
			func(_ int, s transform.Step, _, _ *model.Node) error {
				step = s
				return nil
			})
		var se *apply.StepError
		if errors.As(err, &se) && se.Err != nil {
			err = se.Err
		}
		if err != nil {
			c.problem(row.Version, "step does not apply: %v (%s)", err, excerpt(row.JSON, 0))
			c.node = nil
		} else {
			c.node, c.at = node, row.Version
			c.v.Replayed++
		}
	} else {
		var err error
		if step, err = transform.StepFromJSON(c.schema, row.JSON); err != nil {
			c.problem(row.Version, "step does not decode: %v (%s)", err, excerpt(row.JSON, 0))
		}
	}
	if row.Version > c.head.MetaVersion {
		if step == nil {
			c.mapsOK = false
		} else if c.mapsOK {
			c.maps = append(c.maps, step.GetMap())
		}
	}
}

// checkComments checks the comment base and replays the entries after it
// through the steps' maps.
func (c *verifier) checkComments(ctx context.Context, st store.Store) error {
	head := c.head
	comments, err := decodeMeta(head.Meta)
	if err != nil {
		c.problem(head.MetaVersion, "comment base: %v", err)
		return nil
	}
	if c.metaSize >= 0 {
		for i, sp := range comments.spans {
			if sp.from < 0 || sp.from >= sp.to || sp.to > c.metaSize {
				c.problem(head.MetaVersion, "comment %d: range %d-%d is not a non-empty range of the document (size %d)",
					comments.notes[i].id, sp.from, sp.to, c.metaSize)
			}
		}
	}
	var entries []store.MetaEntry
	if head.MetaSeq > head.MetaBase {
		if entries, err = st.MetaEntries(ctx, c.v.ID, head.MetaBase, head.MetaSeq); err != nil {
			if errors.Is(err, store.ErrCompacted) || ctx.Err() != nil {
				return err
			}
			c.problem(-1, "comment entries %d to %d: %v", head.MetaBase+1, head.MetaSeq, err)
			return nil
		}
	}
	for i, e := range entries {
		if want := head.MetaBase + int64(i) + 1; e.Seq != want {
			c.problem(e.Version, "comment entry %d where %d was due", e.Seq, want)
			return nil
		}
	}
	if int64(len(entries)) != head.MetaSeq-head.MetaBase {
		c.problem(-1, "comment entries %d to %d missing", head.MetaBase+int64(len(entries))+1, head.MetaSeq)
		return nil
	}
	if !c.mapsOK || int64(len(c.maps)) != head.Version-head.MetaVersion {
		// A step after the comments' version is missing or does not
		// decode (reported): the comments cannot be mapped through it.
		return nil
	}
	comments, err = comments.replay(head.MetaVersion, c.maps, entries)
	if err != nil {
		c.problem(-1, "comments: %v", err)
		return nil
	}
	list := comments.list()
	c.v.Comments = len(list)
	if c.node != nil && c.at == head.Version {
		size := c.node.Content.Size()
		for _, cm := range list {
			if cm.From < 0 || cm.To > size {
				c.problem(head.Version, "comment %d: range %d-%d is outside the document (size %d)", cm.ID, cm.From, cm.To, size)
			}
		}
	}
	return nil
}

// firstDiff returns the index of the first byte where a and b differ.
func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// excerpt returns up to 60 bytes of data from about i, for a message.
func excerpt(data []byte, i int) string {
	from := max(0, i-20)
	to := min(len(data), from+60)
	s := string(data[from:to])
	if from > 0 {
		s = "…" + s
	}
	if to < len(data) {
		s += "…"
	}
	return fmt.Sprintf("%q", s)
}
