// This module re-exports the package web/client's presence.js for the
// conformance harness (conformance/js/collab-editors.mjs loads client.js
// and comments.js from web/src/).
export * from "../client/src/presence.js"
