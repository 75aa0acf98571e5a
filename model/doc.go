// Package model is a Go implementation of prosemirror-model 1.25: schemas
// loaded from JSON specs, content expressions compiled to automata
// (ContentMatch), immutable document nodes, fragments, marks and slices,
// resolved positions, the replace algorithm, and JSON in and out that is
// byte-identical to JSON.stringify(node.toJSON()) of the JavaScript library.
//
// Positions and text lengths count UTF-16 code units, as in JavaScript.
// Text is stored in Go strings; text cut in the middle of a surrogate pair
// (which JavaScript allows) is kept as WTF-8 so that nothing is lost.
//
// Everything that can fail on input (JSON, positions, attribute values)
// returns an error; nothing in this package panics on bad input.
package model
