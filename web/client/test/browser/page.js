// The page of web/test/browser-client.mjs: pmauthority-client's
// createEditor on the document ?doc=ID with the token of #token=… (and
// ?persist=NAME for the persist option, ?warn=0 for warnOnUnload: false),
// recording in window.events what the client reports (onSynced,
// onUnsyncedChanges, onAuthenticationFailed, onStatus, onNotice) and, in
// window.sockets, every WebSocket it opens. While window.blockSockets is
// set, new sockets go to a closed port (the server cannot be reached).

import { createEditor, createComment } from "../../src/index.js"
import { schema } from "../../../src/schema.js"

let events = { synced: 0, unsynced: [], authFailed: [], statuses: [], notices: [] }
let sockets = []
window.events = events
window.sockets = sockets
window.blockSockets = false

class CountingSocket extends WebSocket {
  constructor(url, protocol) {
    super(window.blockSockets ? "ws://127.0.0.1:9/" : url, protocol)
    sockets.push(url)
  }
}

let params = new URLSearchParams(location.search)
let token = new URLSearchParams(location.hash.slice(1)).get("token") || null
let url = new URL("/docs/" + encodeURIComponent(params.get("doc")) + "/ws", location.href)
url.protocol = url.protocol == "https:" ? "wss:" : "ws:"

let { client } = createEditor(document.getElementById("editor"), {
  url: url.href, schema, token, name: "tester", WebSocket: CountingSocket,
  persist: params.get("persist") || undefined, warnOnUnload: params.get("warn") != "0",
  onNotice: n => events.notices.push(n),
  onSynced: () => events.synced++,
  onUnsyncedChanges: n => events.unsynced.push(n),
  onAuthenticationFailed: f => events.authFailed.push(f),
  onStatus: s => {
    events.statuses.push(s)
    document.getElementById("status").textContent = s.status + (s.detail ? ": " + s.detail : "")
  },
})
window.client = client
window.createComment = createComment
