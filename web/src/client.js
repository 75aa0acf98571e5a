// This module re-exports the package web/client's client.js for the
// conformance harness (conformance/js/collab-editors.mjs loads client.js
// and comments.js from web/src/).
export * from "../client/src/client.js"
