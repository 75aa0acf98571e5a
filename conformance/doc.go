// Package conformance holds pmauthority's differential tests against the
// real ProseMirror libraries. The generators in js/ run prosemirror-model,
// prosemirror-transform, prosemirror-markdown, prosemirror-collab and
// prosemirror-changeset (pinned npm versions) on random documents, steps,
// Transform method calls, concurrent histories and editing histories and
// record every answer in JSONL corpora; the Go tests here replay those
// corpora against the model, transform, export, collab and changeset
// packages and require every recorded field to come out the same. A small
// corpus is committed under testdata/; CI generates fresh ones with a new
// seed on every run and passes them in through PMA_MODEL_CORPUS,
// PMA_STEP_CORPUS, PMA_EXPORT_CORPUS, PMA_REBASE_CORPUS,
// PMA_TRANSFORM_CORPUS, PMA_IMPORT_CORPUS and PMA_CHANGESET_CORPUS. The
// package has no non-test code.
package conformance
