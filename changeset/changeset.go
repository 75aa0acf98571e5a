package changeset

import (
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/transform"
)

// ChangeSet tracks the changes to a document from a given point in the
// past. It condenses step maps down to a flat sequence of replacements,
// and simplifies replacements that partially undo themselves by
// comparing their content. A ChangeSet is immutable.
type ChangeSet[D comparable] struct {
	doc     *model.Node
	combine Combine[D]
	changes []Change[D]
}

// Options configures Create. The zero value is prosemirror-changeset's
// default.
type Options[D comparable] struct {
	// Combine compares and combines the data of adjacent spans; nil
	// merges spans whose data are equal (==) and keeps the others apart.
	Combine Combine[D]
	// Changes are the changes the set starts with, for a set stored as
	// its start document and changes.
	Changes []Change[D]
}

// Create returns a change set that tracks changes from doc.
//
// Document tokens are compared as prosemirror-changeset's default
// encoder compares them: nodes by type, text by character, marks and
// attributes ignored.
func Create[D comparable](doc *model.Node, opts Options[D]) *ChangeSet[D] {
	combine := opts.Combine
	if combine == nil {
		combine = sameData[D]
	}
	return &ChangeSet[D]{doc: doc, combine: combine, changes: opts.Changes}
}

// StartDoc returns the document the set tracks changes from.
func (s *ChangeSet[D]) StartDoc() *model.Node { return s.doc }

// Changes returns the replaced ranges, in document order. The slice must
// not be modified.
func (s *ChangeSet[D]) Changes() []Change[D] { return s.changes }

// AddSteps returns the set with the changes of maps (the step maps that
// turned the set's current document into newDoc) added, data[i] being
// the data of maps[i] (the zero value where data is short). The set
// itself is not changed. It fails with ErrInconsistent where maps and
// newDoc are not those of the set's history (and where
// prosemirror-changeset then throws).
//
// Changes touched by the new steps are minimised by diffing their old
// and new content. Since the boundaries of the changed ranges affect
// which tokens match, adding steps in several calls may give another
// result than adding them all at once.
func (s *ChangeSet[D]) AddSteps(newDoc *model.Node, maps []*transform.StepMap, data []D) (set *ChangeSet[D], err error) {
	defer recoverInconsistent(&err)
	// The step maps tell which parts of the document were replaced, and
	// by how much new content. Each range becomes a Change; these are
	// merged into the changes of the new steps, which are merged with the
	// set's changes.
	var stepChanges []Change[D]
	for i, m := range maps {
		var d D
		if i < len(data) {
			d = data[i]
		}
		// off carries the size change of the map's previous range only,
		// as prosemirror-changeset does.
		off := 0
		m.ForEach(func(fromA, toA, fromB, toB int) {
			ch := Change[D]{FromA: fromA + off, ToA: toA + off, FromB: fromB, ToB: toB}
			if fromA != toA {
				ch.Deleted = []Span[D]{{toA - fromA, d}}
			}
			if fromB != toB {
				ch.Inserted = []Span[D]{{toB - fromB, d}}
			}
			stepChanges = append(stepChanges, ch)
			off = (toB - fromB) - (toA - fromA)
		})
	}
	if len(stepChanges) == 0 {
		return s, nil
	}

	newChanges := s.mergeAll(stepChanges)
	changes := mergeChanges(s.changes, newChanges, s.combine)
	updated := changes
	copied := false

	// Minimise the changes that touch newly changed ranges.
	for i := 0; i < len(updated); i++ {
		change := updated[i]
		if change.FromA == change.ToA || change.FromB == change.ToB || !touches(newChanges, change) {
			continue
		}
		diff := computeDiff(s.doc.Content, newDoc.Content, change)
		// Fast path: when they are completely different, leave the change.
		// (prosemirror-changeset compares the diff's absolute fromB with 0.)
		if len(diff) == 1 && diff[0].FromB == 0 && diff[0].ToB == change.ToB-change.FromB {
			continue
		}
		if !copied {
			updated = append([]Change[D](nil), changes...)
			copied = true
		}
		if len(diff) == 1 {
			updated[i] = diff[0]
			continue
		}
		updated = append(updated[:i], append(diff, updated[i+1:]...)...)
		i += len(diff) - 1
	}
	return &ChangeSet[D]{doc: s.doc, combine: s.combine, changes: updated}, nil
}

// touches tells whether one of changes overlaps change in the new
// document.
func touches[D comparable](changes []Change[D], change Change[D]) bool {
	for _, r := range changes {
		if r.ToB > change.FromB && r.FromB < change.ToB {
			return true
		}
	}
	return false
}

// mergeAll merges the changes of consecutive step maps, divide and
// conquer.
func (s *ChangeSet[D]) mergeAll(ranges []Change[D]) []Change[D] {
	if len(ranges) == 1 {
		return ranges[:1:1]
	}
	mid := len(ranges) >> 1
	return mergeChanges(s.mergeAll(ranges[:mid]), s.mergeAll(ranges[mid:]), s.combine)
}
