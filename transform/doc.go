// Package transform is a Go port of prosemirror-transform: the steps that
// change a ProseMirror document (replace, mark and attribute steps), the
// step maps and mappings that carry positions across those changes, and the
// Transform API that builds steps. Its concepts and names follow the JS
// library, so that code written against prosemirror-transform reads the
// same in Go.
//
// A [Transform] starts from a document and records the steps its methods
// make (Replace, ReplaceRange, DeleteRange, Split, Join, Lift, Wrap,
// SetBlockType, AddMark, RemoveMark …), the documents between them and
// their Mapping. The helpers [LiftTarget], [FindWrapping], [CanSplit],
// [CanJoin], [JoinPoint], [InsertPoint] and [DropPoint] find the arguments
// that make those methods valid, and [ReplaceStepFor] fits a slice into a
// range as Transform.Replace does. Where prosemirror-transform throws, the
// methods return an error with the JavaScript message; they never panic.
//
// [Op] is a method call in JSON ({"op": "split", "args": [12]}), the form
// that the command line and the HTTP API take; [ApplyOps] runs a list of
// them. The conformance package checks the steps and documents they make
// against the real prosemirror-transform on random documents and ops.
package transform
