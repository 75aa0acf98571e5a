// Package suggest reverts and applies the suggestions of
// @handlewithcare/prosemirror-suggest-changes 0.1.8 in a document: text and
// blocks marked as inserted (the insertion mark), marked as deleted (the
// deletion mark), and nodes whose attributes, marks or type were changed
// (the modification mark, which records the previous value). Any schema
// with marks of those three names works; the built-in "suggest" schema
// (package schemas) is basic with them.
//
// [Revert] and [Apply] are that package's revertSuggestions and
// applySuggestions commands: the same steps, made with package transform,
// and the same document, byte for byte (the conformance package checks it
// against the JavaScript on random suggestion-laden documents). Reverting
// drops inserted content, keeps deleted content without its mark and
// restores modified attributes; applying drops deleted content and keeps
// the rest without the marks. Modifications are undone as the JavaScript
// undoes them, quirks included: a previous node mark is added to the node
// at position 0, and a mark modification without a previous mark is an
// error. One JavaScript crash is not reproduced: reverting an insertion
// (or applying a deletion) that ends the document makes the JavaScript
// read a character past the end and throw a TypeError; here there is no
// such character.
//
// [RevertID] and [ApplyID] do the same for the suggestion of one id: its
// insertions, deletions and modifications, and nothing else. They differ
// from the package's revertSuggestion and applySuggestion there, which
// also revert or apply the modifications of every other id, and do
// nothing for an id that has only modifications.
package suggest
