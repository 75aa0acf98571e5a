// Package export renders a document as plain text, Markdown or HTML, each
// the way the ProseMirror JavaScript libraries do (and differential-tested
// against them in conformance/): Text is prosemirror-model's textBetween,
// Markdown is prosemirror-markdown's defaultMarkdownSerializer, and HTML
// is prosemirror-model's DOMSerializer driven by declarative toDOM
// templates in the schema's JSON spec (docs/export.md).
//
// ParseMarkdown reads Markdown the other way, into a document of a schema,
// as prosemirror-markdown's defaultMarkdownParser does (markdown-it's
// commonmark preset): goldmark parses, and the mapping follows
// markdown-it where the two read a text differently.
package export
