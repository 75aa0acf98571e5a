// The scratch app of package.mjs: imports pmauthority-client as an
// installed package and checks it against a live server (argv[2]): two
// clients edit one new document, see each other's presence, comment,
// survive a dropped connection with unsaved changes, and send a token.
// Prints PASS at the end; any failure throws.

import assert from "node:assert/strict"
import { CollabClient, createComment, deleteComment, commentsOf, formatComment, parseComment, presenceKey } from "pmauthority-client"
import { Schema } from "prosemirror-model"
import { schema as basic } from "prosemirror-schema-basic"
import { addListNodes } from "prosemirror-schema-list"
import { TextSelection } from "prosemirror-state"

const base = process.argv[2].replace(/\/+$/, "")
const schema = new Schema({ nodes: addListNodes(basic.spec.nodes, "paragraph block*", "block"), marks: basic.spec.marks })
const id = "package-test-" + Date.now().toString(36)
const wsURL = base.replace(/^http/, "ws") + "/docs/" + encodeURIComponent(id) + "/ws"

async function until(cond, what, ms = 15000) {
  let end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting for " + what)
    await new Promise(r => setTimeout(r, 20))
  }
}

async function server() {
  let res = await fetch(`${base}/docs/${encodeURIComponent(id)}`)
  assert.ok(res.ok, `GET /docs/${id}: ${res.status}`)
  return res.json()
}

let tokens = 0
function open(name, color, token, data) {
  let peers = []
  let client = new CollabClient({
    url: wsURL, schema, name, color, token, data,
    onPeers: p => { peers = p.peers },
  })
  return { client, peers: () => peers }
}

const text = c => c.state.doc.textBetween(0, c.state.doc.content.size, "\n")
const dispatch = c => tr => c.dispatch(tr)

let a = open("Ada", "#1a73e8", "static-token")
let b = open("Bea", "#d0342c", () => { tokens++; return Promise.resolve("token-" + tokens) }, { avatar: "/bea.png", role: "reviewer" })
let A = a.client, B = b.client
try {
  await until(() => A.synced && B.synced, "both connected")
  assert.equal(tokens, 1, "the token function is called for the connection")

  // Collab: A types, B receives; both match the server.
  A.dispatch(A.state.tr.insertText("Hello from Ada", 1))
  await until(() => A.synced && text(B) == "Hello from Ada", "B has A's text")
  B.dispatch(B.state.tr.insertText(" and Bea", B.state.doc.content.size - 1))
  await until(() => A.synced && B.synced && text(A) == "Hello from Ada and Bea", "A has B's text")
  assert.deepEqual((await server()).doc, A.state.doc.toJSON())
  console.log("collab ok")

  // Presence: B selects "Ada"; A sees B's name and selection.
  B.dispatch(B.state.tr.setSelection(TextSelection.create(B.state.doc, 12, 15)))
  await until(() => a.peers().some(p => p.name == "Bea" && p.color == "#d0342c"), "A lists Bea")
  assert.deepEqual(a.peers().find(p => p.name == "Bea").data, { avatar: "/bea.png", role: "reviewer" }, "Bea's presence data")
  assert.equal(b.peers().find(p => p.name == "Ada").data, null, "Ada has no presence data")
  await until(() => [...presenceKey.getState(A.state).peers.values()].some(p => p.name == "Bea" && p.anchor == 12 && p.head == 15), "A has Bea's selection")
  console.log("presence ok")

  // Comments: A comments "Hello"; B and the server have it; B deletes it.
  assert.ok(createComment(formatComment("Greeting", "Ada"), { from: 1, to: 6 })(A.state, dispatch(A)))
  await until(() => commentsOf(B.state).length == 1 && A.synced, "B has the comment")
  let [c] = commentsOf(B.state)
  assert.equal(B.state.doc.textBetween(c.from, c.to), "Hello")
  assert.equal(parseComment(c.text).author, "Ada")
  assert.equal((await server()).comments.length, 1)
  assert.ok(deleteComment(c.id)(B.state, dispatch(B)))
  await until(() => commentsOf(A.state).length == 0 && B.synced, "A sees the delete")
  assert.equal((await server()).comments.length, 0)
  console.log("comments ok")

  // Reconnect: B's connection drops; B edits meanwhile; everything arrives.
  B.ws.close()
  await until(() => !B.welcomed, "B notices the drop")
  B.dispatch(B.state.tr.insertText("!", B.state.doc.content.size - 1))
  assert.ok(B.unsaved > 0, "B counts the unsaved change")
  await until(() => B.synced && B.unsaved == 0 && text(A) == "Hello from Ada and Bea!", "B reconnected and sent it", 20000)
  assert.equal(tokens, 2, "the token function is called again for the new connection")
  assert.deepEqual((await server()).doc, B.state.doc.toJSON())
  console.log("reconnect ok")
  console.log("PASS")
} finally {
  A.close()
  B.close()
}
