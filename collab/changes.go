package collab

import (
	"context"
	"errors"
	"fmt"

	"github.com/pmauthority/pmauthority/changeset"
	"github.com/pmauthority/pmauthority/transform"
)

// changeMem is the memory a change of the answer holds besides its
// spans, spanMem that of a span besides its data, and mapMem that of a
// step's map.
const (
	changeMem = 96
	spanMem   = 32
	mapMem    = 64
)

// Changes returns the changes between versions from and to of the
// document id, with the author of each step (as the step log records
// it, "" for none) as their data: what prosemirror-changeset's
// ChangeSet.create(docAt(from)).addSteps(docAt(to), maps, authors).changes
// gives for the maps of steps from+1 … to, through
// simplifyChanges(changes, docAt(to)) when simplify is set.
//
// It fails as DocAt does: with ErrInvalidVersion for a negative version
// or one ahead of the document's, ErrHistoryGone when the document at
// from or the steps after it are pruned, and ErrNotFound for an unknown
// document; with ErrInvalidRequest when from is after to, and a
// *LimitError when to-from is over Limits.MaxChangesSteps or the diffs
// would take more than Limits.MaxChangesDiff (its Value is then the
// limit + 1: the work stops there). The memory it
// holds (the document at from, the steps, the document they make, the
// diff, the changes) is reserved in r, which the caller releases once
// done with the changes; an error matching ErrOverloaded when that does
// not fit.
func (a *Authority) Changes(ctx context.Context, id string, from, to int64, simplify bool, r *Reservation) ([]changeset.Change[string], error) {
	switch {
	case a.isClosed():
		return nil, ErrClosed
	case from < 0:
		return nil, &versionError{version: from}
	case to < 0:
		return nil, &versionError{version: to}
	case from > to:
		return nil, invalidf("from %d is after to %d", from, to)
	}
	head, _, err := a.head(ctx, id)
	if err != nil {
		return nil, err
	}
	if to > head.Version {
		return nil, &versionError{version: to}
	}
	if to-from > int64(a.cfg.MaxChangesSteps) {
		return nil, &LimitError{What: "steps between from and to (Limits.MaxChangesSteps)",
			Limit: a.cfg.MaxChangesSteps, Value: int(to - from)}
	}
	entry := r.Size()
	doc, err := a.DocAtReserved(ctx, id, from, r)
	if err != nil {
		return nil, err
	}
	start := doc
	// held is what stays reserved while the changes are computed: the
	// document at from, and the maps and authors of the steps.
	held, authorBytes := r.Size(), int64(0)
	maps := make([]*transform.StepMap, 0, to-from)
	authors := make([]string, 0, to-from)
	// The steps are read page by page; a page's JSON is let go once
	// replayed, its maps and authors kept.
	for v := from; v < to; {
		page, err := a.StepLog(ctx, id, v, int(to-v), 0, r)
		if err != nil {
			return nil, err
		}
		if len(page.Steps) == 0 {
			return nil, fmt.Errorf("collab: %q: no steps after %d (version %d): %w", id, v, page.Version, ErrHistoryGone)
		}
		recs := make([]StepRecord, len(page.Steps))
		if doc, err = a.replaySteps(doc, page.Steps, recs, nil); err != nil {
			return nil, fmt.Errorf("collab: changes of %q: %w", id, err)
		}
		for i, s := range page.Steps {
			maps = append(maps, recs[i].Map)
			authors = append(authors, s.Author)
			held += mapMem + int64(len(s.Author))
			authorBytes += int64(len(s.Author))
		}
		v += int64(len(page.Steps))
		if err := r.Resize(held + doc.MemSize()); err != nil {
			return nil, err
		}
	}
	// One diff at a time runs while AddSteps minimises the changes.
	diffMem := changeset.DiffMemory(start.Content.Size(), doc.Content.Size())
	if err := r.Resize(held + doc.MemSize() + diffMem); err != nil {
		return nil, err
	}
	set, err := changeset.Create(start, changeset.Options[string]{MaxDiffWork: a.cfg.MaxChangesDiff}).AddSteps(doc, maps, authors)
	if errors.Is(err, changeset.ErrTooMuchWork) {
		return nil, &LimitError{What: "token comparisons of the diffs (Limits.MaxChangesDiff)",
			Limit: int(a.cfg.MaxChangesDiff), Value: int(a.cfg.MaxChangesDiff) + 1}
	}
	if err != nil {
		return nil, fmt.Errorf("collab: changes of %q from %d to %d: %w", id, from, to, err)
	}
	changes := set.Changes()
	if simplify {
		if changes, err = changeset.SimplifyChanges(changes, doc); err != nil {
			return nil, fmt.Errorf("collab: changes of %q from %d to %d: %w", id, from, to, err)
		}
	}
	// What stays: the changes, whose data are the steps' authors.
	mem := authorBytes
	for _, ch := range changes {
		mem += changeMem + spanMem*int64(len(ch.Deleted)+len(ch.Inserted))
	}
	if err := r.Resize(entry + mem); err != nil {
		return nil, err
	}
	return changes, nil
}
