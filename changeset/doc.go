// Package changeset is a Go port of prosemirror-changeset 2.4: it
// condenses a series of editing steps into the ranges of the old
// document that were deleted and the ranges of the new one that were
// inserted, each part carrying the data (an author, say) of the step that
// made it.
//
// [Create] starts a [ChangeSet] at a document; [ChangeSet.AddSteps] adds
// the step maps that lead to a later document with one datum per step,
// and [ChangeSet.Changes] returns the replaced ranges as [Change] values
// whose JSON is that of the JS library's changes. [SimplifyChanges]
// widens changes that mix insertions and deletions inside a word to the
// whole words, for presentation. The conformance package replays random
// histories recorded from the real prosemirror-changeset against it.
//
// Not ported: custom token encoders (tokens are compared as the JS
// default encoder compares them), ChangeSet.map and changedRange.
//
// # Files
//
//   - change.go: Span, Change, Merge and the JSON of a change
//   - changeset.go: ChangeSet, Create, AddSteps
//   - diff.go: the document's tokens and the Myers diff that minimises changes
//   - simplify.go: SimplifyChanges
package changeset
