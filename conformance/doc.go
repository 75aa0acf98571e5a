// Package conformance holds pmauthority's differential tests against the
// real ProseMirror libraries. The generators in js/ run prosemirror-model
// and prosemirror-transform (pinned npm versions) on random documents and
// steps and record every answer in JSONL corpora; the Go tests here replay
// those corpora against the model and transform packages and require every
// recorded field to come out the same. A small corpus is committed under
// testdata/; CI generates fresh ones with a new seed on every run and
// passes them in through PMA_MODEL_CORPUS and PMA_STEP_CORPUS. The package
// has no non-test code.
package conformance
