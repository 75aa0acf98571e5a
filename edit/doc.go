// Package edit is the edit API's model: edits for backends and agents
// that address a document by what is in it (a block by an attribute or
// by its path of child indices, text found with its context), never by
// raw positions. A Request's targets are found in the document at its
// base version (Prepare); the Plan then makes the edits with the
// Transform API on a later document (MakeSince), after mapping each
// target through the steps in between and refusing the whole request
// when one of them was touched (*StaleError): a slow writer never edits
// text it did not read.
package edit
