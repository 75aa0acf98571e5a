// Package transform is a Go port of prosemirror-transform: the steps that
// change a ProseMirror document (replace, mark and attribute steps), the
// step maps and mappings that carry positions across those changes, and the
// helpers that build steps. Its concepts and names follow the JS library, so
// that code written against prosemirror-transform reads the same in Go.
package transform
