// Package export renders a document as plain text, Markdown or HTML, each
// the way the ProseMirror JavaScript libraries do (and differential-tested
// against them in conformance/): Text is prosemirror-model's textBetween,
// Markdown is prosemirror-markdown's defaultMarkdownSerializer, and HTML
// is prosemirror-model's DOMSerializer driven by declarative toDOM
// templates in the schema's JSON spec (docs/export.md).
package export
