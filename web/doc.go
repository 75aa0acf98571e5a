// Package web serves the demo pages of pmauthority, embedded into the
// binary: a list of the documents and a ProseMirror editor that
// collaborates live over the WebSocket protocol (docs/protocol.md), with
// remote cursors and comments.
//
// The pages are written in src/ (JavaScript, bundled with esbuild by
// `npm run build`) and the bundle in dist/ is committed, so that the
// binary builds without node; check-dist.sh (run by TestDistUpToDate)
// fails when dist/ is not a fresh build of src/.
//
// Routes of Handler (GET and HEAD only):
//
//	/               the list of documents, with a form that opens a new one
//	/edit/{id}      the editor of document id
//	/assets/{file}  the bundles (hashed names, cached as immutable) and
//	                the licenses of the bundled packages
//
// The pages refer to their assets, to the collab API and to the WebSocket
// by URLs relative to themselves, so they work unchanged when the server
// is mounted under a prefix with http.StripPrefix (the list page's path
// must then end with a slash, as http.ServeMux's redirect ensures).
package web
