// This module re-exports the package web/client's client.js for the
// conformance harness (conformance/js/collab-editors.mjs loads client.js
// and comments.js from web/src/). The harness's WebSocket editors check
// the classic protocol (steps, ack, conflict) message by message, so its
// CollabClient defaults to mode "classic"; the package's default (and the
// demo page's, which imports the package's module) is "commit".
import { CollabClient as PackageClient } from "../client/src/client.js"

export * from "../client/src/client.js"

export class CollabClient extends PackageClient {
  constructor(options) {
    super({ mode: "classic", ...options })
  }
}
