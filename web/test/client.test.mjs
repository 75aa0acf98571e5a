// Unit tests of CollabClient (src/client.js) against a scripted fake
// server: what it sends and how it reacts to each server message of
// docs/protocol.md. Run: node --test test/ (npm test).

import { test, afterEach } from "node:test"
import assert from "node:assert/strict"
import { EditorState, NodeSelection, TextSelection } from "prosemirror-state"
import { Mapping, Step } from "prosemirror-transform"
import { CollabClient, guardNodeSelection } from "../client/src/client.js"
import { schema } from "../src/schema.js"
import {
  commentsKey, commentsOf, commentDraft, setCommentDraft, clearCommentDraft, createComment, deleteComment, formatComment, parseComment,
  replyToComment, editComment, resolveComment, reopenComment, deleteReply,
} from "../client/src/comments.js"
import { presenceKey } from "../client/src/presence.js"
import { palette, pickColor } from "../src/identity.js"
import { roleOf, mayEdit, mayComment } from "../src/token.js"
import { validDocID, docIDFromName } from "../src/docid.js"

// FakeSocket stands in for the browser's WebSocket: the test reads what
// the client sent and plays the server.
class FakeSocket {
  static OPEN = 1
  static all = []
  static refuse = false // new sockets fail to connect (1006, never open)
  constructor(url, protocol) {
    this.url = url
    this.protocol = protocol
    this.readyState = 0
    this.sent = []
    this.closedWith = null
    FakeSocket.all.push(this)
    let refuse = FakeSocket.refuse
    setTimeout(() => {
      if (refuse) return this.drop(1006)
      this.readyState = 1
      this.onopen?.()
    }, 0)
  }
  send(data) {
    assert.equal(this.readyState, 1, "send on an open socket")
    this.sent.push(JSON.parse(data))
  }
  close(code) {
    this.readyState = 3
    this.closedWith = code
  }
  // Server side.
  push(msg) { this.onmessage?.({ data: JSON.stringify(msg) }) }
  drop(code, reason = "") {
    this.readyState = 3
    this.onclose?.({ code, reason })
  }
  take(type) {
    let i = this.sent.findIndex(m => m.type == type)
    return i < 0 ? null : this.sent.splice(i, 1)[0]
  }
}
globalThis.WebSocket = FakeSocket

// The browser's window and document events the client listens to:
// online, offline, visibilitychange.
const windowEvents = new EventTarget()
globalThis.addEventListener = windowEvents.addEventListener.bind(windowEvents)
globalThis.removeEventListener = windowEvents.removeEventListener.bind(windowEvents)
globalThis.document = Object.assign(new EventTarget(), { visibilityState: "visible" })

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function until(cond, what, ms = 3000) {
  let end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting for " + what)
    await sleep(5)
  }
}

// nextSocket waits for the client to open a new socket and send hello.
async function nextSocket(after) {
  await until(() => FakeSocket.all.length > after && FakeSocket.all[FakeSocket.all.length - 1].sent.length, "a socket with hello")
  let ws = FakeSocket.all[FakeSocket.all.length - 1]
  return { ws, hello: ws.take("hello") }
}

function docJSON(...paragraphs) {
  return { type: "doc", content: paragraphs.map(t => t ? { type: "paragraph", content: [{ type: "text", text: t }] } : { type: "paragraph" }) }
}

function text(client) {
  return client.state.doc.textBetween(0, client.state.doc.content.size, "|")
}

// insert types text at pos as a local edit.
function insert(client, pos, str) {
  client.dispatch(client.state.tr.insertText(str, pos))
}

let clients = []
afterEach(() => {
  for (let c of clients) c.close()
  clients = []
})

async function start(snapshot = {}, options = {}) {
  let before = FakeSocket.all.length
  let states = [], notices = [], peers = []
  // The tests below are of the classic protocol unless they say
  // mode: "commit" (the commit-mode tests at the end).
  let client = new CollabClient({
    url: "ws://test/docs/x/ws", schema, name: "Me", color: "#123456", clientID: 7, mode: "classic",
    onState: (s, replaced) => states.push(replaced),
    onNotice: n => notices.push(n),
    onPeers: p => peers.push(p),
    ...options,
  })
  clients.push(client)
  let { ws, hello } = await nextSocket(before)
  ws.push({
    type: "snapshot", doc: docJSON("hello"), version: 5, comments: [], commentVersion: 0, users: 1, presence: [],
    ...snapshot,
  })
  return { client, ws, hello, states, notices, peers }
}

test("hello, snapshot, send, confirm, one submission at a time", async () => {
  let { client, ws, hello, states } = await start()
  assert.deepEqual(hello, { type: "hello", version: null, clientID: 7, name: "Me", color: "#123456" })
  assert.equal(ws.protocol, "pmauthority.v1")
  assert.deepEqual(states, [true])
  assert.equal(text(client), "hello")

  insert(client, 6, "!")
  let sub = ws.take("steps")
  assert.equal(sub.version, 5)
  assert.equal(sub.clientID, 7)
  assert.equal(sub.steps.length, 1)
  assert.deepEqual(sub.comment, [])
  insert(client, 1, ">")
  assert.equal(ws.take("steps"), null, "nothing is sent while a submission is in flight")
  assert.equal(client.synced, false)

  // The push of the accepted steps comes before the ack.
  ws.push({ type: "steps", version: 6, steps: sub.steps, clientIDs: [7], commentVersion: 0, comment: [], users: 1 })
  assert.equal(ws.take("steps"), null)
  ws.push({ type: "ack", id: sub.id, version: 6, commentVersion: 0 })
  let second = ws.take("steps")
  assert.equal(second.version, 6)
  assert.equal(second.steps.length, 1)
  ws.push({ type: "steps", version: 7, steps: second.steps, clientIDs: [7], commentVersion: 0, comment: [], users: 1 })
  ws.push({ type: "ack", id: second.id, version: 7, commentVersion: 0 })
  assert.equal(text(client), ">hello!")
  assert.equal(client.synced, true)
  client.close()
})

test("conflict: waits for the pushed steps, then resends rebased", async () => {
  let { client, ws } = await start()
  insert(client, 6, " me")
  let sub = ws.take("steps")
  ws.push({ type: "conflict", id: sub.id, version: 6 })
  assert.equal(ws.take("steps"), null, "no resend before the steps that won arrive")
  // Another client inserted at the start.
  ws.push({
    type: "steps", version: 6, clientIDs: [99], commentVersion: 0, comment: [], users: 2,
    steps: [{ stepType: "replace", from: 1, to: 1, slice: { content: [{ type: "text", text: "oh " }] } }],
  })
  let again = ws.take("steps")
  assert.equal(again.version, 6)
  assert.deepEqual(again.steps, [{ stepType: "replace", from: 9, to: 9, slice: { content: [{ type: "text", text: " me" }] } }])
  assert.equal(text(client), "oh hello me")
  client.close()
})

test("conflict answered after the winning steps were pushed: resends at once", async () => {
  let { client, ws } = await start()
  insert(client, 1, "A")
  let sub = ws.take("steps")
  ws.push({
    type: "steps", version: 6, clientIDs: [99], commentVersion: 0, comment: [], users: 2,
    steps: [{ stepType: "replace", from: 6, to: 6, slice: { content: [{ type: "text", text: "B" }] } }],
  })
  ws.push({ type: "conflict", id: sub.id, version: 6 })
  let again = ws.take("steps")
  assert.equal(again.version, 6)
  assert.equal(text(client), "AhelloB")
  client.close()
})

test("reconnects with its version and resends unconfirmed steps", async () => {
  let { client, ws } = await start({ commentVersion: 3 })
  insert(client, 6, "?")
  ws.take("steps")
  let before = FakeSocket.all.length
  ws.drop(1006)
  let { ws: ws2, hello } = await nextSocket(before)
  assert.equal(hello.version, 5)
  assert.equal(hello.commentVersion, 3)
  assert.equal(ws2.take("steps"), null, "nothing is sent before welcome")
  ws2.push({ type: "welcome", version: 5, commentVersion: 3, steps: [], clientIDs: [], comment: [], users: 1, presence: [] })
  let sub = ws2.take("steps")
  assert.equal(sub.version, 5)
  assert.equal(sub.steps.length, 1)
  client.close()
})

test("welcome carrying its own lost submission confirms it", async () => {
  let { client, ws } = await start()
  insert(client, 6, "?")
  let sub = ws.take("steps")
  let before = FakeSocket.all.length
  ws.drop(1001, "server shutting down")
  let { ws: ws2 } = await nextSocket(before)
  ws2.push({ type: "welcome", version: 6, commentVersion: 0, steps: sub.steps, clientIDs: [7], comment: [], users: 1, presence: [] })
  assert.equal(ws2.take("steps"), null)
  assert.equal(client.synced, true)
  assert.equal(text(client), "hello?")
  client.close()
})

test("4404 (document deleted) stays offline until reconnectNow", async () => {
  let statuses = []
  let { client, ws } = await start({}, { onStatus: s => statuses.push(s) })
  let before = FakeSocket.all.length
  ws.drop(4404, "document deleted")
  assert.deepEqual(statuses.at(-1), { status: "offline", detail: "document deleted", retryIn: 0 })
  assert.equal(client.retryTimer, null, "no attempt scheduled")
  windowEvents.dispatchEvent(new Event("online"))
  assert.equal(FakeSocket.all.length, before, "coming back online does not reconnect")
  client.reconnectNow()
  let { hello } = await nextSocket(before)
  assert.equal(hello.type, "hello")
  client.close()
})

test("1012 (service restart) reconnects at its version and sends its unconfirmed steps again", async () => {
  let statuses = []
  let { client, ws } = await start({}, { onStatus: s => statuses.push(s) })
  insert(client, 6, "?")
  let sub = ws.take("steps")
  let before = FakeSocket.all.length
  ws.drop(1012, "")
  assert.equal(statuses.at(-1).detail, "server restarting")
  let { ws: ws2, hello } = await nextSocket(before)
  assert.equal(hello.version, sub.version)
  ws2.push({ type: "welcome", version: sub.version, commentVersion: 0, steps: [], clientIDs: [], comment: [], users: 1, presence: [] })
  let again = ws2.take("steps")
  assert.equal(again.version, sub.version)
  assert.deepEqual(again.steps, sub.steps)
  assert.equal(text(client), "hello?")
  client.close()
})

test("4400 (version ahead of the server) and a refused step resync from a snapshot", async () => {
  let { client, ws, notices, states } = await start()
  let before = FakeSocket.all.length
  ws.drop(4400, "Invalid version 9")
  let { ws: ws2, hello } = await nextSocket(before)
  assert.equal(hello.version, null)
  ws2.push({ type: "snapshot", doc: docJSON("server"), version: 2, comments: [], commentVersion: 0, users: 1, presence: [] })
  assert.equal(text(client), "server")
  assert.deepEqual(states, [true, true])

  insert(client, 1, "x")
  let sub = ws2.take("steps")
  before = FakeSocket.all.length
  ws2.push({ type: "error", id: sub.id, status: 422, message: "Position 99 out of range", step: 0 })
  assert.match(notices.at(-1), /refused a change: Position 99 out of range \(422\)/)
  assert.equal(ws2.closedWith, 1000)
  let { ws: ws3, hello: hello3 } = await nextSocket(before)
  assert.equal(hello3.version, null)
  ws3.push({ type: "snapshot", doc: docJSON("server"), version: 2, comments: [], commentVersion: 0, users: 1, presence: [] })
  assert.equal(text(client), "server", "the refused local change is dropped")
  assert.equal(client.synced, true)
  client.close()
})

test("a submission refused by a server failure (5xx) is kept and sent again later", async () => {
  let { client, ws, notices } = await start()
  insert(client, 6, "!")
  let sub = ws.take("steps")
  ws.push({ type: "error", id: sub.id, status: 503, message: "storage unavailable: try again later" })
  assert.match(notices.at(-1), /could not save a change: storage unavailable: try again later \(503\); trying again in 1 s/)
  assert.equal(ws.closedWith, null, "the connection stays")
  insert(client, 1, ">")
  assert.equal(ws.take("steps"), null, "nothing is sent during the back-off")
  assert.equal(client.synced, false)
  await until(() => ws.sent.some(m => m.type == "steps"), "the submission sent again", 2000)
  let again = ws.take("steps")
  assert.equal(again.version, 5)
  assert.equal(again.steps.length, 2, "the refused step and the one typed since")
  ws.push({ type: "steps", version: 7, steps: again.steps, clientIDs: [7, 7], commentVersion: 0, comment: [], users: 1 })
  ws.push({ type: "ack", id: again.id, version: 7, commentVersion: 0 })
  assert.equal(text(client), ">hello!")
  assert.equal(client.synced, true)
  client.close()
})

test("a submission over the server's rate (429) is kept and sent again later", async () => {
  let { client, ws, notices, states } = await start()
  insert(client, 6, "!")
  let sub = ws.take("steps")
  ws.push({ type: "error", id: sub.id, status: 429, message: "too many submissions: over --max-submissions" })
  assert.match(notices.at(-1), /could not save a change: .*\(429\); trying again/)
  assert.equal(states.filter(replaced => replaced).length, 1, "no reload from a snapshot")
  await until(() => ws.sent.some(m => m.type == "steps"), "the submission sent again", 2000)
  let again = ws.take("steps")
  assert.deepEqual(again.steps, sub.steps)
  assert.equal(text(client), "hello!")
})

test("a gap in the pushed versions resyncs", async () => {
  let { client, ws } = await start()
  let before = FakeSocket.all.length
  ws.push({
    type: "steps", version: 8, clientIDs: [99], commentVersion: 0, comment: [], users: 1,
    steps: [{ stepType: "replace", from: 1, to: 1, slice: { content: [{ type: "text", text: "z" }] } }],
  })
  let { hello } = await nextSocket(before)
  assert.equal(hello.version, null)
  client.close()
})

test("presence: sent at the confirmed version, others' mapped into the local document", async () => {
  let { client, ws, peers } = await start()
  await until(() => ws.sent.some(m => m.type == "presence"), "initial presence")
  ws.sent = []
  // A local unconfirmed insertion before the cursor: the cursor is sent
  // mapped back over it.
  let tr = client.state.tr.insertText("abc", 1)
  client.dispatch(tr.setSelection(TextSelection.create(tr.doc, 7)))
  await until(() => ws.sent.some(m => m.type == "presence"), "presence after the edit")
  let p = ws.take("presence")
  assert.deepEqual({ version: p.version, anchor: p.anchor, head: p.head }, { version: 5, anchor: 4, head: 4 })

  // Another client's selection at version 5 covering "hel" (1..4) lands
  // after the local "abc" (4..7).
  ws.push({ type: "presence", version: 5, clients: [{ clientID: 99, name: "Bob", color: "#00ff00", anchor: 1, head: 4 }], left: [] })
  let peer = presenceKey.getState(client.state).peers.get("99")
  assert.deepEqual([peer.anchor, peer.head], [4, 7])
  assert.equal(client.state.doc.textBetween(peer.anchor, peer.head), "hel")
  assert.deepEqual(peers.at(-1).peers, [{ clientID: 99, name: "Bob", color: "#00ff00", data: null }])
  let decos = presenceKey.getState(client.state).decos.find()
  assert.equal(decos.length, 2, "a selection range and a caret")

  // A presence of a version not reached yet waits for its steps.
  ws.push({ type: "presence", version: 6, clients: [{ clientID: 98, name: "Eve", color: "#0000ff", anchor: 2, head: 2 }], left: [99] })
  assert.equal(presenceKey.getState(client.state).peers.has("99"), false, "left")
  assert.equal(presenceKey.getState(client.state).peers.has("98"), false, "pending")
  ws.push({
    type: "steps", version: 6, clientIDs: [98], commentVersion: 0, comment: [], users: 2,
    steps: [{ stepType: "replace", from: 1, to: 1, slice: { content: [{ type: "text", text: "E" }] } }],
  })
  let eve = presenceKey.getState(client.state).peers.get("98")
  assert.equal(text(client), "Eabchello")
  assert.deepEqual([eve.anchor, eve.head], [5, 5], "after E, then over the local abc")

  // Disconnection forgets the peers.
  ws.drop(1006)
  assert.equal(presenceKey.getState(client.state).peers.size, 0)
  client.close()
})

test("comments: sent with the steps, echo not duplicated, remote delete", async () => {
  let { client, ws } = await start({ comments: [{ from: 1, to: 3, text: "old", id: 1 }], commentVersion: 4 })
  assert.equal(commentsKey.getState(client.state).decos.find().length, 1)
  client.dispatch(client.state.tr.setMeta(commentsKey, { type: "add", from: 2, to: 5, id: 42, text: "note" }))
  let sub = ws.take("steps")
  assert.deepEqual(sub.comment, [{ type: "create", id: 42, text: "note", from: 2, to: 5 }])
  assert.deepEqual(sub.steps, [])
  ws.push({ type: "steps", version: 5, steps: [], clientIDs: [], commentVersion: 5, comment: [{ type: "create", id: 42, text: "note", from: 2, to: 5 }], users: 1 })
  ws.push({ type: "ack", id: sub.id, version: 5, commentVersion: 5 })
  let state = commentsKey.getState(client.state)
  assert.equal(state.decos.find().length, 2)
  assert.equal(state.version, 5)
  assert.deepEqual(state.unsentEvents(), [])
  assert.equal(client.synced, true)

  ws.push({ type: "steps", version: 5, steps: [], clientIDs: [], commentVersion: 6, comment: [{ type: "delete", id: 1 }], users: 1 })
  assert.deepEqual(commentsKey.getState(client.state).decos.find().map(d => d.spec.comment.id), [42])

  // A local delete is sent as a delete event.
  client.dispatch(client.state.tr.setMeta(commentsKey, { type: "delete", id: 42 }))
  assert.deepEqual(ws.take("steps").comment, [{ type: "delete", id: 42 }])
  client.close()
})

test("threads: operations sent as comment events, shown at once, replaced by the server's state", async () => {
  let root = { from: 1, to: 6, text: "hello?", id: 1, author: "alice", time: "2026-01-01T00:00:00Z" }
  let { client, ws } = await start({ comments: [root], commentVersion: 1, threadVersion: 4 })
  assert.equal(commentsKey.getState(client.state).threadVersion, 4)
  let [c] = commentsOf(client.state)
  assert.deepEqual(c, { ...root, resolved: false, edited: null, replies: [] })

  // A reply and a resolve: in the plugin's state before the server has them.
  assert.equal(replyToComment(1, " hi ", { author: "Me" })(client.state, client.dispatch.bind(client)), true)
  let sub = ws.take("steps")
  assert.equal(sub.comment.length, 1)
  let reply = sub.comment[0]
  assert.equal(reply.type, "reply")
  assert.equal(reply.thread, 1)
  assert.equal(reply.text, "hi")
  assert.deepEqual(commentsOf(client.state)[0].replies, [{ id: reply.id, text: "hi", author: "Me", time: null, edited: null }])
  resolveComment(1)(client.state, client.dispatch.bind(client))
  assert.equal(commentsOf(client.state)[0].resolved, true)
  assert.equal(ws.take("steps"), null, "one submission at a time")
  assert.equal(resolveComment(1)(client.state), false, "resolved already")

  // The server's state of the thread (a push of another's edit at the
  // same time) keeps the unsent resolve on top.
  let withReply = { ...root, replies: [{ id: reply.id, text: "hi", author: "me@example", time: "2026-01-01T00:00:01Z" }] }
  ws.push({ type: "steps", version: 5, steps: [], clientIDs: [], commentVersion: 1, comment: [], threads: [withReply], threadVersion: 5, users: 1 })
  ws.push({ type: "ack", id: sub.id, version: 5, commentVersion: 1 })
  assert.equal(commentsKey.getState(client.state).threadVersion, 5)
  c = commentsOf(client.state)[0]
  assert.equal(c.resolved, true)
  assert.equal(c.replies[0].author, "me@example")
  let sub2 = ws.take("steps")
  assert.deepEqual(sub2.comment, [{ type: "resolve", id: 1 }])
  ws.push({ type: "steps", version: 5, steps: [], clientIDs: [], commentVersion: 1, comment: [], threads: [{ ...withReply, resolved: true }], threadVersion: 6, users: 1 })
  ws.push({ type: "ack", id: sub2.id, version: 5, commentVersion: 1 })
  assert.deepEqual(commentsKey.getState(client.state).unsentEvents(), [])
  assert.equal(client.synced, true)
  assert.ok(commentsKey.getState(client.state).decos.find()[0].type.attrs.class.includes("pma-comment-resolved"))

  // Edit, reopen, delete a reply: sent in one submission.
  editComment(reply.id, "hi there")(client.state, client.dispatch.bind(client))
  let sub3 = ws.take("steps")
  reopenComment(1)(client.state, client.dispatch.bind(client))
  deleteReply(reply.id)(client.state, client.dispatch.bind(client))
  assert.deepEqual(sub3.comment, [{ type: "edit", id: reply.id, text: "hi there" }])
  ws.push({ type: "ack", id: sub3.id, version: 5, commentVersion: 1 })
  assert.deepEqual(ws.take("steps").comment, [{ type: "reopen", id: 1 }, { type: "deleteReply", id: reply.id }])
  c = commentsOf(client.state)[0]
  assert.equal(c.resolved, false)
  assert.deepEqual(c.replies, [])
  assert.equal(deleteReply(1)(client.state), false, "a comment is no reply")

  // A thread pushed with a new range maps as a create would; a reply
  // never sent is forgotten with its deletion.
  replyToComment(1, "unsent")(client.state, client.dispatch.bind(client))
  let unsentReply = commentsOf(client.state)[0].replies[0]
  deleteReply(unsentReply.id)(client.state, client.dispatch.bind(client))
  assert.equal(commentsKey.getState(client.state).unsentEvents().some(e => e.id == unsentReply.id), false)

  // A reconnection says the thread version it has.
  let before = FakeSocket.all.length
  ws.drop(1006)
  let { hello } = await nextSocket(before)
  assert.equal(hello.commentVersion, 1)
  assert.equal(hello.threadVersion, 6)
  client.close()
})

test("a remote comment is placed over local unconfirmed text", async () => {
  let { client, ws } = await start()
  insert(client, 1, "ab") // "abhello", unconfirmed
  ws.take("steps")
  ws.push({ type: "steps", version: 5, steps: [], clientIDs: [], commentVersion: 1, comment: [{ type: "create", id: 9, text: "t", from: 1, to: 6 }], users: 2 })
  let [d] = commentsKey.getState(client.state).decos.find()
  assert.equal(client.state.doc.textBetween(d.from, d.to), "hello")
  client.close()
})

test("stored marks (Mod-b before typing) survive remote steps", async () => {
  let { client, ws } = await start()
  let strong = schema.marks.strong.create()
  client.dispatch(client.state.tr.setSelection(TextSelection.create(client.state.doc, 6)).setStoredMarks([strong]))
  ws.push({
    type: "steps", version: 6, clientIDs: [99], commentVersion: 0, comment: [], users: 2,
    steps: [{ stepType: "replace", from: 1, to: 1, slice: { content: [{ type: "text", text: "X" }] } }],
  })
  assert.deepEqual(client.state.storedMarks, [strong])
  assert.equal(client.state.selection.head, 7)
})

test("flush runs before a server message, and what it dispatches is kept", async () => {
  let pendingMotion = null
  let { client, ws } = await start({}, {
    flush: () => {
      if (!pendingMotion) return
      let pos = pendingMotion
      pendingMotion = null
      client.dispatch(client.state.tr.setSelection(TextSelection.create(client.state.doc, pos)))
    },
  })
  client.dispatch(client.state.tr.setSelection(TextSelection.create(client.state.doc, 1)))
  pendingMotion = 6 // the user pressed End; the view has not read it yet
  ws.push({
    type: "steps", version: 6, clientIDs: [99], commentVersion: 0, comment: [], users: 2,
    steps: [{ stepType: "replace", from: 1, to: 1, slice: { content: [{ type: "text", text: "X" }] } }],
  })
  assert.equal(text(client), "Xhello")
  assert.equal(client.state.selection.head, 7, "the motion to the end, mapped over the remote X")
})

test("setIdentity reconnects with the new name and colour, at the current version", async () => {
  let { client, ws } = await start()
  let before = FakeSocket.all.length
  client.setIdentity("New Name", "#abcdef")
  assert.equal(ws.closedWith, 1000)
  let { hello } = await nextSocket(before)
  assert.deepEqual(hello, { type: "hello", version: 5, commentVersion: 0, threadVersion: 0, clientID: 7, name: "New Name", color: "#abcdef" })
})

test("presence data: sent in hello, given with the peers; setPresenceData reconnects", async () => {
  let { client, ws, hello, peers } = await start({
    presence: [{ clientID: 9, name: "Bea", color: "#d0342c", data: { role: "reviewer" }, anchor: null, head: null }, { clientID: 8, name: "Cy", color: null, anchor: null, head: null }],
  }, { data: { avatar: "/me.png" } })
  assert.deepEqual(hello.data, { avatar: "/me.png" })
  assert.deepEqual(peers.at(-1).peers.map(p => p.data), [{ role: "reviewer" }, null])
  client.setPresenceData({ avatar: "/me.png" })
  assert.equal(ws.closedWith, null, "the same data does not reconnect")
  client.setPresenceData({ avatar: "/new.png" })
  assert.equal(ws.closedWith, 1000)
  let next = await nextSocket(FakeSocket.all.indexOf(ws) + 1)
  assert.deepEqual(next.hello.data, { avatar: "/new.png" })
  assert.equal(next.hello.version, 5)
})

test("a long name is cut to 64 UTF-16 units without splitting an emoji", async () => {
  let before = FakeSocket.all.length
  let client = new CollabClient({ url: "ws://test/docs/x/ws", schema, name: "a".repeat(63) + "😀", clientID: 3 })
  clients.push(client)
  let { hello } = await nextSocket(before)
  assert.equal(hello.name, "a".repeat(63))
  assert.equal(hello.color, undefined, "no colour sent when none is valid")
})

test("many unconfirmed steps go in parts of 500, comments with the last part", async () => {
  let { client, ws } = await start()
  let before = FakeSocket.all.length
  ws.drop(1006) // offline while typing
  for (let i = 0; i < 1200; i++) insert(client, 1, "x")
  client.dispatch(client.state.tr.setMeta(commentsKey, { type: "add", from: 1, to: 3, id: 5, text: "c" }))
  let { ws: ws2 } = await nextSocket(before)
  ws2.push({ type: "welcome", version: 5, commentVersion: 0, steps: [], clientIDs: [], comment: [], users: 1, presence: [] })
  let version = 5
  for (let want of [500, 500, 200]) {
    let sub = ws2.take("steps")
    assert.equal(sub.version, version)
    assert.equal(sub.steps.length, want)
    assert.deepEqual(sub.comment, want == 200 ? [{ type: "create", id: 5, text: "c", from: 1, to: 3 }] : [])
    version += want
    ws2.push({ type: "steps", version, steps: sub.steps, clientIDs: sub.steps.map(() => 7), commentVersion: want == 200 ? 1 : 0, comment: [], users: 1 })
    ws2.push({ type: "ack", id: sub.id, version, commentVersion: 0 })
  }
  assert.equal(client.synced, true)
  assert.equal(text(client), "x".repeat(1200) + "hello")
})

test("the WebSocket option gives the class sockets are made with", async () => {
  class OtherSocket extends FakeSocket {}
  let { ws, hello } = await start({}, { WebSocket: OtherSocket })
  assert.ok(ws instanceof OtherSocket, "the socket is an OtherSocket")
  assert.equal(hello.type, "hello")
})

test("guardNodeSelection keeps a node selection that would crash prosemirror-state from crashing it", () => {
  // An image selected at 1; a transaction that deletes it and, with the
  // deletion mirrored as collab's rebases mirror steps, splits the
  // paragraph where the image was: the mapping recovers the anchor into
  // the split, where no node follows, without saying it was deleted.
  let doc = schema.nodeFromJSON({ type: "doc", content: [{ type: "paragraph", content: [
    { type: "image", attrs: { src: "x.png" } }, { type: "text", text: "ab" }] }] })
  let state = EditorState.create({ doc, selection: NodeSelection.create(doc, 1) })
  let mirrored = () => {
    let tr = state.tr.delete(1, 2).split(1)
    tr.mapping.setMirror(0, 1)
    return tr
  }
  assert.throws(() => state.apply(mirrored()), TypeError, "prosemirror-state's NodeSelection.map crashes here")
  let guarded = state.apply(guardNodeSelection(state, mirrored()))
  assert.ok(guarded.selection instanceof TextSelection)
  assert.equal(guarded.selection.from, 1)
  // A selection that maps to a node stays a node selection.
  let plain = state.tr.insertText("c", 4)
  assert.equal(guardNodeSelection(state, plain).selectionSet, false)
  assert.ok(state.apply(plain).selection instanceof NodeSelection)
})

test("unsaved counts unconfirmed steps and unsent comment events", async () => {
  let { client, ws } = await start()
  assert.equal(client.unsaved, 0)
  ws.drop(1006)
  insert(client, 6, "ab")
  insert(client, 1, "c")
  assert.equal(client.unsaved, 2)
  client.dispatch(client.state.tr.setMeta(commentsKey, { type: "add", from: 1, to: 3, id: 9, text: "x" }))
  assert.equal(client.unsaved, 3)
  let { ws: ws2 } = await nextSocket(FakeSocket.all.indexOf(ws) + 1)
  ws2.push({ type: "welcome", version: 5, commentVersion: 0, steps: [], clientIDs: [], comment: [], users: 1, presence: [] })
  let sub = ws2.take("steps")
  ws2.push({ type: "steps", version: 7, steps: sub.steps, clientIDs: [7, 7], commentVersion: 1, comment: sub.comment, users: 1 })
  ws2.push({ type: "ack", id: sub.id, version: 7, commentVersion: 1 })
  assert.equal(client.unsaved, 0)
  assert.equal(client.synced, true)
})

test("online, and the tab becoming visible, reconnect at once; hidden does not", async () => {
  let statuses = []
  let { client, ws } = await start({}, { onStatus: s => statuses.push(s) })
  ws.drop(1006)
  let waiting = statuses.at(-1)
  assert.equal(waiting.status, "offline")
  assert.ok(waiting.retryIn > 0 && client.retryTimer, "a retry is scheduled")
  let n = FakeSocket.all.length
  windowEvents.dispatchEvent(new Event("online"))
  assert.equal(FakeSocket.all.length, n + 1, "online connects without waiting for the retry")
  // Connecting already: a second event does not start another attempt.
  windowEvents.dispatchEvent(new Event("online"))
  assert.equal(FakeSocket.all.length, n + 1)
  FakeSocket.all.at(-1).drop(1006)
  document.visibilityState = "hidden"
  document.dispatchEvent(new Event("visibilitychange"))
  assert.equal(FakeSocket.all.length, n + 1, "a hidden tab waits for its retry")
  document.visibilityState = "visible"
  document.dispatchEvent(new Event("visibilitychange"))
  assert.equal(FakeSocket.all.length, n + 2, "a tab shown again connects at once")
  client.close()
  windowEvents.dispatchEvent(new Event("online"))
  assert.equal(FakeSocket.all.length, n + 2, "a closed client stays closed")
})

test("back-off: at most 10 s while the server is unreachable, 3 s while it answers", async () => {
  let statuses = []
  let { client, ws } = await start({}, { onStatus: s => statuses.push(s) })
  // Unreachable: every attempt fails before it opens.
  FakeSocket.refuse = true
  try {
    ws.drop(1006)
    for (let i = 0; i < 8; i++) {
      let n = FakeSocket.all.length
      windowEvents.dispatchEvent(new Event("online"))
      await until(() => FakeSocket.all.length == n + 1 && FakeSocket.all.at(-1).readyState == 3, "a refused attempt")
    }
  } finally {
    FakeSocket.refuse = false
  }
  let unreachable = statuses.filter(s => s.status == "offline").map(s => s.retryIn)
  assert.ok(Math.max(...unreachable) <= 10000, `delays ${unreachable}`)
  assert.ok(unreachable.at(-1) >= 5000, `the delay grew to the cap: ${unreachable}`)
  // Answering: the connection opens, then the server closes it (a
  // document that is unavailable for now, 1011).
  statuses.length = 0
  for (let i = 0; i < 8; i++) {
    let n = FakeSocket.all.length
    windowEvents.dispatchEvent(new Event("online"))
    let { ws } = await nextSocket(n)
    ws.drop(1011, "document unavailable")
  }
  let answering = statuses.filter(s => s.status == "offline").map(s => s.retryIn)
  assert.equal(answering.length, 8)
  assert.ok(Math.max(...answering) <= 3000 && answering.at(-1) >= 1500, `delays ${answering}`)
  client.close()
})

test("going offline: a connection that answers the ping is kept, a silent one dropped", async () => {
  let statuses = []
  let { client, ws } = await start({}, { onStatus: s => statuses.push(s) })
  windowEvents.dispatchEvent(new Event("offline"))
  let ping = ws.take("ping")
  assert.ok(ping, "a ping is sent at once")
  ws.push({ type: "pong" })
  await sleep(4200)
  assert.equal(client.welcomed, true, "a connection that answered stays")
  windowEvents.dispatchEvent(new Event("offline"))
  assert.ok(ws.take("ping"))
  await until(() => !client.welcomed, "the silent connection given up", 6000)
  assert.equal(statuses.at(-1).status, "offline")
  assert.equal(statuses.at(-1).detail, "the network is down")
  assert.equal(ws.closedWith, 1000)
  client.close()
})

test("pickColor: the first ten people on a document get ten colours", () => {
  for (let trial = 0; trial < 200; trial++) {
    // Ten tabs, each starting with a random palette colour (some joining
    // together), each adjusting to the others it sees until none changes.
    let people = Array.from({ length: 10 }, (_, i) => ({ clientID: 1000 + ((i * 7919 + trial) % 9973), color: palette[Math.floor(Math.random() * palette.length)] }))
    let rounds = 0
    for (let changed = true; changed; rounds++) {
      assert.ok(rounds < 20, "the colours settle")
      changed = false
      for (let p of people) {
        let color = pickColor(p.clientID, p.color, people.filter(o => o != p))
        if (color != p.color) { p.color = color; changed = true }
      }
    }
    assert.equal(new Set(people.map(p => p.color)).size, 10, JSON.stringify(people))
  }
  // One of two holders keeps a colour: the smaller client id.
  assert.equal(pickColor(5, palette[0], [{ clientID: 9, color: palette[0] }]), palette[0])
  assert.equal(pickColor(9, palette[0], [{ clientID: 5, color: palette[0] }]), palette[1])
  // An eleventh person keeps the colour it has.
  let all = palette.map((color, i) => ({ clientID: i, color }))
  assert.equal(pickColor(99, palette[3], all), palette[3])
})

test("formatComment and parseComment carry the author and time in the text", () => {
  let t = new Date("2026-12-01T22:50:12.345Z")
  let text = formatComment("Is it red?\nReally?", "  Ana  María, Jr. ", t)
  assert.equal(text, "Is it red?\nReally?\n\u2014 Ana María, Jr., 2026-12-01T22:50:12Z")
  let parsed = parseComment(text)
  assert.equal(parsed.body, "Is it red?\nReally?")
  assert.equal(parsed.author, "Ana María, Jr.")
  assert.equal(parsed.time.toISOString(), "2026-12-01T22:50:12.000Z")
  // A comment from another client (the ProseMirror demo's) is all body.
  assert.deepEqual(parseComment("plain text"), { body: "plain text", author: null, time: null })
  assert.equal(formatComment("x", ""), "x")
})

test("comment commands: draft mapped through edits, create from the draft, delete", async () => {
  let { client, ws } = await start({ doc: docJSON("hello world") })
  let state = () => client.state, dispatch = tr => client.dispatch(tr)
  assert.equal(createComment("  ")(state(), dispatch), false, "empty text")
  assert.equal(setCommentDraft()(state(), dispatch), false, "empty selection")
  assert.ok(setCommentDraft({ from: 7, to: 12 })(state(), dispatch))
  insert(client, 1, ">> ")
  assert.deepEqual(commentDraft(state()), { from: 10, to: 15 })
  ws.take("steps")
  assert.ok(createComment("on world")(state(), dispatch))
  assert.equal(commentDraft(state()), null, "creating ends the draft")
  let [c] = commentsOf(state())
  assert.equal(state().doc.textBetween(c.from, c.to), "world")
  assert.equal(c.text, "on world")
  assert.ok(setCommentDraft({ from: 1, to: 3 })(state(), dispatch))
  assert.ok(clearCommentDraft(state(), dispatch))
  assert.equal(commentDraft(state()), null)
  assert.ok(deleteComment(c.id)(state(), dispatch))
  assert.deepEqual(commentsOf(state()), [])
  assert.equal(deleteComment(c.id)(state(), dispatch), false, "unknown id")
})

test("token: sent in hello, a function called before every connection", async () => {
  let calls = 0
  let { client, ws, hello } = await start({}, { token: async () => "t" + ++calls })
  assert.equal(hello.token, "t1")
  ws.drop(1006)
  let { hello: again } = await nextSocket(FakeSocket.all.indexOf(ws) + 1)
  assert.equal(again.token, "t2")
  assert.equal(again.version, 5, "resumes at its version")
  client.setToken("fixed")
  client.reconnectNow()
  let { hello: third } = await nextSocket(FakeSocket.all.length - 1)
  assert.equal(third.token, "fixed")
  client.close()
  // A token function that fails gives the attempt up, to be retried.
  let statuses = []
  let failing = await (async () => {
    let before = FakeSocket.all.length
    let c = new CollabClient({ url: "ws://test/docs/x/ws", schema, token: () => { throw new Error("signed out") }, onStatus: s => statuses.push(s) })
    clients.push(c)
    await until(() => FakeSocket.all.length > before && statuses.some(s => s.status == "offline"), "the attempt given up")
    return c
  })()
  assert.equal(statuses.at(-1).detail, "no token: signed out")
  assert.equal(FakeSocket.all.at(-1).sent.length, 0, "no hello without a token")
  failing.close()
})

test("roleOf reads the token's docs claim as the server does", () => {
  let part = obj => Buffer.from(JSON.stringify(obj)).toString("base64url")
  let token = part({ alg: "HS256" }) + "." + part({ sub: "a", docs: { "team-a.*": "edit", "team-a.secret": "read", handbook: "read", "hand*": "comment" } }) + ".sig"
  assert.equal(roleOf(token, "team-a.notes"), "edit")
  assert.equal(roleOf(token, "team-a.secret"), "edit")
  assert.equal(roleOf(token, "handbook"), "comment")
  assert.equal(roleOf(token, "other"), "")
  assert.equal(roleOf("garbage", "x"), "")
  assert.equal(mayEdit("edit") && mayEdit("admin") && !mayEdit("comment") && !mayEdit("read") && !mayEdit(""), true)
  assert.equal(mayComment("comment") && mayComment("edit") && !mayComment("read") && !mayComment(""), true)
})

// jwt returns an unsigned token with the claims (the client only reads
// exp; the server verifies).
function jwt(claims) {
  let part = obj => Buffer.from(JSON.stringify(obj)).toString("base64url")
  return part({ alg: "HS256" }) + "." + part(claims) + ".sig"
}

test("token: a function's JWT is refreshed in band before its exp", async () => {
  let calls = 0
  // exp in 0.4 s: the refresh comes at half the remaining life.
  let token = () => jwt({ sub: "a", n: ++calls, exp: (Date.now() + 400) / 1000 })
  let { client, ws, hello, notices } = await start({}, { token })
  assert.equal(JSON.parse(atob(hello.token.split(".")[1])).n, 1)
  await until(() => ws.sent.some(m => m.type == "token"), "the first refresh")
  let refresh = ws.take("token")
  assert.equal(JSON.parse(atob(refresh.token.split(".")[1])).n, 2, "a fresh token from the function")
  assert.equal(typeof refresh.id, "number")
  ws.push({ type: "token", id: refresh.id })
  assert.equal(client.sentToken, refresh.token, "the connection's token")
  // The accepted token expires later: its own refresh follows.
  await until(() => ws.sent.some(m => m.type == "token"), "the second refresh")
  let second = ws.take("token")
  ws.push({ type: "error", id: second.id, status: 401, message: "invalid token: expired" })
  assert.equal(client.sentToken, refresh.token, "a refused token is not the connection's")
  assert.match(notices.at(-1), /refused the new token: invalid token: expired \(401\)/)
  assert.equal(client.refreshTimer, null, "no refresh planned after a refusal")
  assert.ok(client.welcomed, "the connection goes on")
})

test("token: setToken sends it in band; refreshToken resolves with the answer", async () => {
  let { client, ws } = await start({}, { token: "opaque" })
  assert.equal(client.refreshTimer, null, "no refresh of a string token")
  let taken = client.setToken("newer")
  let msg = ws.take("token")
  assert.equal(msg.token, "newer")
  ws.push({ type: "token", id: msg.id })
  assert.equal(await taken, true)
  // Refused: false, and the connection keeps its token.
  let refused = client.refreshToken()
  let again = ws.take("token")
  ws.push({ type: "error", id: again.id, status: 403, message: "the token is for another principal" })
  assert.equal(await refused, false)
  // A connection lost before the answer: false; the next hello has the token.
  let pending = client.refreshToken()
  assert.ok(ws.take("token"))
  ws.drop(1006)
  assert.equal(await pending, false)
  let { ws: ws2, hello } = await nextSocket(FakeSocket.all.indexOf(ws) + 1)
  assert.equal(hello.token, "newer")
  assert.equal(await client.refreshToken(), false, "not welcomed yet")
  assert.equal(ws2.sent.filter(m => m.type == "token").length, 0, "no token message before the welcome")
})

test("token: expiry (401, then close 4401) reconnects with the function's fresh token", async () => {
  let calls = 0, statuses = []
  let { ws, notices } = await start({}, { token: () => "t" + ++calls, onStatus: s => statuses.push(s) })
  let before = notices.length
  ws.push({ type: "error", status: 401, message: "token expired" })
  ws.drop(4401, "")
  assert.equal(notices.length, before, "no notice: the status says it")
  let offline = statuses.at(-1)
  assert.equal(offline.status, "offline")
  assert.equal(offline.detail, "token expired")
  assert.ok(offline.retryIn <= 500, "the server answered: a short back-off, not " + offline.retryIn)
  let { hello } = await nextSocket(FakeSocket.all.indexOf(ws) + 1)
  assert.equal(hello.token, "t2")
})

test("token: a refused hello (401 or 403, then 1008) stops retrying until setToken", async () => {
  for (let status of [401, 403]) {
    let failures = [], statuses = [], notices = []
    let before = FakeSocket.all.length
    let client = new CollabClient({
      url: "ws://test/docs/x/ws", schema, clientID: 7, token: "bad",
      onAuthenticationFailed: f => failures.push(f), onStatus: s => statuses.push(s), onNotice: n => notices.push(n),
    })
    clients.push(client)
    let { ws, hello } = await nextSocket(before)
    assert.equal(hello.token, "bad")
    ws.push({ type: "error", status, message: "invalid token" })
    ws.drop(1008, "")
    assert.deepEqual(failures, [{ status, reason: "invalid token" }])
    assert.deepEqual(statuses.at(-1), { status: "offline", detail: "authentication failed: invalid token", retryIn: 0 })
    assert.equal(client.retryTimer, null, "no attempt is scheduled")
    assert.deepEqual(notices, [])
    // Neither online nor a visible tab retries it.
    windowEvents.dispatchEvent(new Event("online"))
    globalThis.document.dispatchEvent(new Event("visibilitychange"))
    await sleep(20)
    assert.equal(FakeSocket.all.length, before + 1, "a retry without a new token")
    // A new token connects at once.
    assert.equal(await client.setToken("good"), false, "nothing went in band")
    let next = await nextSocket(before + 1)
    assert.equal(next.hello.token, "good")
    next.ws.push({ type: "snapshot", doc: docJSON("hello"), version: 5, comments: [], commentVersion: 0, users: 1, presence: [] })
    assert.ok(client.synced)
  }
})

test("token: a string token that expires (4401) stops; a function's is asked again", async () => {
  let failures = []
  let { ws, client } = await start({}, { token: "t", onAuthenticationFailed: f => failures.push(f) })
  ws.push({ type: "error", status: 401, message: "token expired" })
  ws.drop(4401, "token expired")
  assert.deepEqual(failures, [{ status: 401, reason: "token expired" }])
  assert.equal(client.retryTimer, null)
})

test("onSynced after the snapshot and when the last change is confirmed; onUnsyncedChanges", async () => {
  let synced = 0, unsynced = []
  let { client, ws } = await start({}, { onSynced: () => synced++, onUnsyncedChanges: n => unsynced.push(n) })
  assert.equal(synced, 1, "after the snapshot")
  assert.equal(client.hasUnsyncedChanges, false)
  insert(client, 6, "!")
  insert(client, 7, "?")
  assert.equal(client.hasUnsyncedChanges, true)
  assert.deepEqual(unsynced, [1, 2])
  let sub = ws.take("steps")
  ws.push({ type: "steps", version: 6, steps: sub.steps, clientIDs: [7], commentVersion: 0, comment: [], users: 1 })
  ws.push({ type: "ack", id: sub.id, version: 6, commentVersion: 0 })
  assert.equal(synced, 1, "not while the second step is unconfirmed")
  let second = ws.take("steps")
  ws.push({ type: "steps", version: 7, steps: second.steps, clientIDs: [7], commentVersion: 0, comment: [], users: 1 })
  ws.push({ type: "ack", id: second.id, version: 7, commentVersion: 0 })
  assert.equal(synced, 2, "the last change confirmed")
  assert.deepEqual(unsynced, [1, 2, 1, 0])
  assert.equal(client.hasUnsyncedChanges, false)
  // A reconnection's welcome syncs it again.
  ws.drop(1006)
  let next = await nextSocket(FakeSocket.all.indexOf(ws) + 1)
  next.ws.push({ type: "welcome", version: 7, commentVersion: 0, steps: [], clientIDs: [], comment: [], users: 1, presence: [] })
  assert.equal(synced, 3)
})

test("beforeunload warns while there are unsaved changes, unless warnOnUnload is false", async () => {
  let unload = () => {
    let e = new Event("beforeunload", { cancelable: true })
    windowEvents.dispatchEvent(e)
    return e.defaultPrevented
  }
  let { client, ws } = await start()
  assert.equal(unload(), false, "nothing unsaved")
  insert(client, 6, "!")
  assert.equal(unload(), true, "an unconfirmed step")
  let sub = ws.take("steps")
  ws.push({ type: "steps", version: 6, steps: sub.steps, clientIDs: [7], commentVersion: 0, comment: [], users: 1 })
  ws.push({ type: "ack", id: sub.id, version: 6, commentVersion: 0 })
  assert.equal(unload(), false, "confirmed")
  insert(client, 6, "!")
  client.close()
  assert.equal(unload(), false, "closed")

  let quiet = await start({}, { warnOnUnload: false })
  insert(quiet.client, 6, "!")
  assert.equal(unload(), false, "warnOnUnload: false")
})

test("document names are ids as typed, as the server accepts them", () => {
  for (let id of ["My notes", "Café crème", "😀 plans", "team-a/notes", "a..b", "é".repeat(256)])
    assert.ok(validDocID(id), id)
  for (let id of ["", ".", "..", "a\u0000b", "a\nb", "a\u0085b", "\ud800x", "é".repeat(257)])
    assert.ok(!validDocID(id), JSON.stringify(id))
  assert.equal(docIDFromName("  My notes "), "My notes")
  assert.equal(docIDFromName("   "), null)
})

// ---------------------------------------------------------------------------
// Commit mode (docs/protocol.md, "Commit mode").

// rebaseCommit rebases the steps of a commit made at docAtV over the
// steps applied since (since), onto doc, as the server does (docs/api.md,
// "Commit mode"): each step mapped through the inverses of the commit's
// earlier steps, the steps since, and the commit's steps already rebased
// (mirrored). It returns the kept steps and the dropped indexes.
function rebaseCommit(docAtV, steps, since, doc) {
  let docs = [docAtV]
  for (let s of steps) docs.push(s.apply(docs.at(-1)).doc)
  let mapping = new Mapping(), k = steps.length
  for (let i = k - 1; i >= 0; i--) mapping.appendMap(steps[i].invert(docs[i]).getMap())
  for (let s of since) mapping.appendMap(s.getMap())
  let kept = [], dropped = []
  for (let i = 0; i < k; i++) {
    let mapped = steps[i].map(mapping.slice(k - i))
    let result = mapped && mapped.apply(doc)
    if (!mapped || result.failed) {
      dropped.push(i)
      continue
    }
    doc = result.doc
    kept.push(mapped)
    mapping.appendMap(mapped.getMap(), k - 1 - i)
  }
  return { kept, dropped, doc }
}

// CommitServer plays a pmauthority server with the sockets opened after
// it: hello (snapshot or welcome), classic steps, commits (rebased by
// rebaseCommit, answered again as they were when sent again under their
// ref), the pushes of new steps before each answer. loseAnswerOf: the
// next commit of that client id is applied, its steps pushed, and the
// connection lost before its answer.
class CommitServer {
  constructor(doc, version = 0) {
    this.base = version
    this.docs = [schema.nodeFromJSON(doc)]
    this.steps = [] // {step, clientID}, versions base+1 …
    this.first = FakeSocket.all.length
    this.conns = new Map() // FakeSocket → {joined, sentTo, commit}
    this.answers = new Map() // ref → the committed fields
    this.commits = [] // every commit message taken
    this.answered = [] // and its answer
    this.loseAnswerOf = null
  }
  get version() { return this.base + this.steps.length }
  get doc() { return this.docs.at(-1) }
  text() { return this.doc.textBetween(0, this.doc.content.size, "|") }

  // settle serves the sockets until nothing happens for a while.
  async settle() {
    for (let quiet = 0; quiet < 5;) {
      await sleep(5)
      quiet = this.pump() ? 0 : quiet + 1
    }
  }

  pump() {
    let busy = false
    for (let ws of FakeSocket.all.slice(this.first)) {
      if (ws.readyState != 1) continue
      if (!this.conns.has(ws)) this.conns.set(ws, { joined: false, sentTo: 0, commit: false })
      let conn = this.conns.get(ws)
      let msg
      while (ws.readyState == 1 && (msg = ws.sent.shift())) {
        busy = true
        this.handle(ws, conn, msg)
      }
    }
    return busy
  }

  handle(ws, conn, msg) {
    switch (msg.type) {
      case "hello":
        conn.joined = true
        conn.commit = msg.mode == "commit"
        if (msg.version == null) {
          ws.push({ type: "snapshot", doc: this.doc.toJSON(), version: this.version, comments: [], commentVersion: 0, users: 1, presence: [] })
        } else {
          let from = msg.version - this.base
          ws.push({
            type: "welcome", version: this.version, commentVersion: 0, comment: [], users: 1, presence: [],
            steps: this.steps.slice(from).map(s => s.step.toJSON()), clientIDs: this.steps.slice(from).map(s => s.clientID),
          })
        }
        conn.sentTo = this.version
        break
      case "steps":
        if (conn.commit) return ws.push({ type: "error", id: msg.id, status: 400, message: "steps in commit mode" })
        if (msg.version != this.version) return ws.push({ type: "conflict", id: msg.id, version: this.version })
        for (let json of msg.steps) this.apply(Step.fromJSON(schema, json), msg.clientID)
        this.relay()
        ws.push({ type: "ack", id: msg.id, version: this.version, commentVersion: 0 })
        break
      case "commit": {
        if (!conn.commit) return ws.push({ type: "error", id: msg.id, status: 400, message: "commit in classic mode" })
        this.commits.push(msg)
        let answer = this.answers.get(msg.ref)
        if (!answer) {
          let V = msg.version - this.base
          let steps = msg.steps.map(j => Step.fromJSON(schema, j))
          let { kept, dropped } = rebaseCommit(this.docs[V], steps, this.steps.slice(V).map(s => s.step), this.doc)
          let from = this.version
          for (let step of kept) this.apply(step, msg.clientID)
          answer = { from, version: this.version, steps: kept.map(s => s.toJSON()), dropped, commentVersion: 0 }
          if (kept.length) this.answers.set(msg.ref, answer)
        }
        this.answered.push(answer)
        this.relay()
        if (this.loseAnswerOf === msg.clientID) {
          this.loseAnswerOf = null
          ws.drop(1006)
          return
        }
        ws.push({ type: "committed", id: msg.id, ...answer })
        break
      }
    }
  }

  apply(step, clientID) {
    let result = step.apply(this.doc)
    assert.equal(result.failed, null, "a step the server applies")
    this.docs.push(result.doc)
    this.steps.push({ step, clientID })
  }

  relay() {
    for (let [ws, conn] of this.conns) {
      if (!conn.joined || ws.readyState != 1 || conn.sentTo == this.version) continue
      let from = conn.sentTo - this.base
      ws.push({
        type: "steps", version: this.version, commentVersion: 0, comment: [], users: 1,
        steps: this.steps.slice(from).map(s => s.step.toJSON()), clientIDs: this.steps.slice(from).map(s => s.clientID),
      })
      conn.sentTo = this.version
    }
  }
}

// serveUntil serves until cond holds.
async function serveUntil(server, cond, what) {
  await until(() => {
    server.pump()
    return cond()
  }, what)
  await server.settle()
}

// onServer starts a client of server: its hello and the snapshot.
async function onServer(server, options = {}) {
  let notices = []
  let client = new CollabClient({ url: "ws://test/docs/x/ws", schema, onNotice: n => notices.push(n), ...options })
  clients.push(client)
  client.notices = notices
  await serveUntil(server, () => client.state, "the snapshot")
  return client
}

test("commit mode is the default: mode in hello, one commit at a time, its pushed steps replaced by the answer's", async () => {
  let before = FakeSocket.all.length
  let client = new CollabClient({ url: "ws://test/docs/x/ws", schema, clientID: 7 })
  clients.push(client)
  let { ws, hello } = await nextSocket(before)
  assert.deepEqual(hello, { type: "hello", version: null, clientID: 7, name: "", mode: "commit" })
  ws.push({ type: "snapshot", doc: docJSON("hello"), version: 5, comments: [], commentVersion: 0, users: 1, presence: [] })
  insert(client, 6, "!")
  let c = ws.take("commit")
  assert.equal(c.version, 5)
  assert.equal(c.clientID, 7)
  assert.equal(typeof c.ref, "string")
  assert.deepEqual(c.comment, [])
  assert.deepEqual(c.steps, [{ stepType: "replace", from: 6, to: 6, slice: { content: [{ type: "text", text: "!" }] } }])
  assert.equal(ws.take("steps"), null, "no steps messages in commit mode")
  insert(client, 1, ">")
  assert.equal(ws.take("commit"), null, "nothing is sent while a commit is in flight")
  // Others' steps and the commit's own, pushed before the answer, wait for it.
  let other = { stepType: "replace", from: 1, to: 1, slice: { content: [{ type: "text", text: "oh " }] } }
  let rebased = { stepType: "replace", from: 9, to: 9, slice: { content: [{ type: "text", text: "!" }] } }
  ws.push({ type: "steps", version: 6, steps: [other], clientIDs: [99], commentVersion: 0, comment: [], users: 2 })
  ws.push({ type: "steps", version: 7, steps: [rebased], clientIDs: [7], commentVersion: 0, comment: [], users: 2 })
  assert.equal(text(client), ">hello!")
  assert.equal(client.synced, false)
  ws.push({ type: "committed", id: c.id, from: 6, version: 7, steps: [rebased], dropped: [], commentVersion: 0 })
  // ">" mapped over the others' "oh " as prosemirror-collab maps it.
  assert.equal(text(client), "oh >hello!")
  let next = ws.take("commit")
  assert.equal(next.version, 7)
  assert.notEqual(next.ref, c.ref)
  assert.deepEqual(next.steps, [{ stepType: "replace", from: 4, to: 4, slice: { content: [{ type: "text", text: ">" }] } }])
  ws.push({ type: "steps", version: 8, steps: next.steps, clientIDs: [7], commentVersion: 0, comment: [], users: 2 })
  ws.push({ type: "committed", id: next.id, from: 7, version: 8, steps: next.steps, dropped: [], commentVersion: 0 })
  assert.equal(text(client), "oh >hello!")
  assert.equal(client.synced, true)
})

test("commit mode: clients converge with each other and with a classic one", async () => {
  let server = new CommitServer(docJSON("one two three"))
  let a = await onServer(server, { clientID: 1 })
  let b = await onServer(server, { clientID: 2 })
  let c = await onServer(server, { clientID: 3, mode: "classic" })
  await server.settle()
  for (let round = 0; round < 6; round++) {
    // Each types somewhere, several times, before the server answers.
    for (let [i, client] of [a, b, c].entries()) {
      let size = client.state.doc.content.size
      insert(client, 1 + (round * 7 + i * 3) % (size - 1), "abc"[i])
      if (round % 2) client.dispatch(client.state.tr.delete(2, 4))
      insert(client, 1, String(round))
    }
    await server.settle()
  }
  await serveUntil(server, () => a.synced && b.synced && c.synced, "all synced")
  for (let client of [a, b, c]) {
    assert.equal(text(client), server.text())
    assert.equal(client.synced, true)
  }
  assert.ok(server.commits.some(m => m.version < server.version), "some commits were stale")
  assert.ok(server.commits.every(m => m.clientID != 3), "the classic client sends no commits")
})

test("commit mode: a step the server dropped is gone here too, later ones mapped", async () => {
  let server = new CommitServer(docJSON("hello world"))
  let first = await onServer(server, { clientID: 99 })
  let client = await onServer(server, { clientID: 7 })
  await server.settle()
  // Both delete overlapping ranges; first's commit reaches the server first.
  first.dispatch(first.state.tr.delete(2, 10)) // "hld"
  client.dispatch(client.state.tr.delete(3, 8)) // "heorld"
  assert.equal(FakeSocket.all.indexOf(first.ws) < FakeSocket.all.indexOf(client.ws), true)
  // Typed while the commit is in flight.
  insert(client, 7, "X") // "heorldX"
  server.pump() // first's commit applied; the second's rebased: dropped
  await serveUntil(server, () => client.synced && first.synced, "synced")
  let i = server.commits.findIndex(m => m.clientID == 7)
  assert.deepEqual(server.commits[i].steps, [{ stepType: "replace", from: 3, to: 8 }])
  let { version, ...answer } = server.answered[i]
  assert.deepEqual(answer, { from: 1, steps: [], dropped: [0], commentVersion: 0 })
  assert.equal(server.commits.filter(m => m.clientID == 7).length, 2)
  assert.equal(server.text(), "hldX")
  assert.equal(text(client), server.text())
  assert.equal(text(first), server.text())
  assert.equal(client.synced, true)
})

test("commit mode: a commit whose answer was lost is sent again after the reconnection, nothing applied twice", async () => {
  let server = new CommitServer(docJSON("hello"))
  let other = await onServer(server, { clientID: 99 })
  let client = await onServer(server, { clientID: 7 })
  await server.settle()
  insert(client, 6, " world")
  insert(other, 1, ">")
  server.loseAnswerOf = 7
  let before = FakeSocket.all.length
  server.pump() // applied, pushed, and the connection lost before the answer
  assert.equal(client.synced, false)
  await serveUntil(server, () => FakeSocket.all.length > before && client.synced, "the commit's answer")
  let mine = server.commits.filter(m => m.clientID == 7)
  assert.equal(mine.length, 2, "sent again")
  assert.deepEqual({ ...mine[1], id: 0 }, { ...mine[0], id: 0 }, "the same commit: ref, version, steps")
  assert.equal(server.steps.filter(s => s.clientID == 7).length, 1, "applied once")
  assert.equal(text(client), server.text())
  assert.equal(text(other), server.text())
  assert.equal(server.text(), ">hello world")
  // The commit never arrived: sent again after the reconnection, and applied.
  insert(client, 1, "!")
  before = FakeSocket.all.length
  client.ws.drop(1006) // before the server read it
  await serveUntil(server, () => FakeSocket.all.length > before && client.synced, "the commit's answer")
  assert.equal(text(client), server.text())
  assert.equal(server.text(), "!>hello world")
  assert.equal(client.notices.length, 0, client.notices.join("; "))
})

test("commit mode: a commit refused by a server failure (503) is sent again under its ref", async () => {
  let { client, ws } = await start({}, { mode: "commit" })
  insert(client, 6, "!")
  let c = ws.take("commit")
  ws.push({ type: "error", id: c.id, status: 503, message: "store failed" })
  assert.equal(ws.take("commit"), null)
  await until(() => ws.sent.some(m => m.type == "commit"), "the resend", 3000)
  let again = ws.take("commit")
  assert.notEqual(again.id, c.id)
  assert.deepEqual({ ...again, id: 0 }, { ...c, id: 0 })
  ws.push({ type: "steps", version: 6, steps: c.steps, clientIDs: [7], commentVersion: 0, comment: [], users: 1 })
  ws.push({ type: "committed", id: again.id, from: 5, version: 6, steps: c.steps, dropped: [], commentVersion: 0 })
  assert.equal(client.synced, true)
  assert.equal(text(client), "hello!")
})

test("commit mode: comment events go in commits; others' comments pushed meanwhile are placed over the answer", async () => {
  let { client, ws } = await start({}, { mode: "commit" })
  client.dispatch(client.state.tr.setMeta(commentsKey, { type: "add", from: 1, to: 6, id: 42, text: "mine" }))
  let c = ws.take("commit")
  assert.deepEqual(c.steps, [])
  assert.deepEqual(c.comment, [{ type: "create", id: 42, text: "mine", from: 1, to: 6 }])
  ws.push({ type: "steps", version: 5, steps: [], clientIDs: [], commentVersion: 1, comment: c.comment, users: 1 })
  ws.push({ type: "committed", id: c.id, from: 5, version: 5, steps: [], dropped: [], commentVersion: 1 })
  assert.deepEqual(commentsKey.getState(client.state).unsentEvents(), [])
  assert.equal(commentsKey.getState(client.state).version, 1)
  assert.equal(client.synced, true)

  insert(client, 1, "ab")
  let c2 = ws.take("commit")
  // Another client's step and comment (in the server's document at 6), then ours.
  ws.push({
    type: "steps", version: 6, clientIDs: [99], commentVersion: 2, users: 2,
    steps: [{ stepType: "replace", from: 6, to: 6, slice: { content: [{ type: "text", text: "X" }] } }],
    comment: [{ type: "create", id: 9, text: "theirs", from: 1, to: 6 }],
  })
  ws.push({ type: "steps", version: 7, steps: c2.steps, clientIDs: [7], commentVersion: 2, comment: [], users: 2 })
  ws.push({ type: "committed", id: c2.id, from: 6, version: 7, steps: c2.steps, dropped: [], commentVersion: 2 })
  assert.equal(text(client), "abhelloX")
  let theirs = commentsKey.getState(client.state).find(9)
  assert.equal(client.state.doc.textBetween(theirs.from, theirs.to), "hello")
  assert.equal(commentsKey.getState(client.state).version, 2)
  assert.equal(client.synced, true)
})

test("web/src/client.js, the conformance harness's, defaults to classic", async () => {
  let { CollabClient: HarnessClient } = await import("../src/client.js")
  let before = FakeSocket.all.length
  let client = new HarnessClient({ url: "ws://test/docs/x/ws", schema, clientID: 7 })
  clients.push(client)
  let { hello } = await nextSocket(before)
  assert.equal(client.mode, "classic")
  assert.equal("mode" in hello, false, "the hello of clients before commit mode")
})
