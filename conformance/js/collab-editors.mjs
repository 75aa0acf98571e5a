// Real editors against a running collab authority: K editors, each an
// EditorState with the real prosemirror-collab plugin, edit one document
// (or several: --doc a,b,c shares the editors out among them) at once
// through the real commands (prosemirror-commands,
// prosemirror-schema-list). Long-poll editors talk to the authority the
// way the ProseMirror website's collab demo client does: GET /docs/{id}
// to load, POST /docs/{id}/events with sendableSteps, long-poll GET
// /docs/{id}/events (aborted on every local edit), receiveTransaction for
// what comes back, poll-then-resend after a 409. WebSocket editors (--ws
// N of the K) are the demo page's own client, web/src/client.js, over
// GET /docs/{id}/ws (docs/protocol.md): they also send their selection
// (presence), and now and then the harness drops their connection, after
// which they must resume at their version.
//
// Against a server that keeps only --history N steps, --lag L editors of
// each document (after its first) fall behind now and then, after about
// every --lag-every of their edits: they stop editing and talking to the
// server until their document is more than N steps ahead of them, then
// go on as the demo client does when the history is gone: a long-poll
// editor gets 410 and reloads the document (its unsent steps are lost),
// a WebSocket editor resumes and gets a snapshot. With --breaks B, all
// the editors of each document pause B times together until GET /docs
// shows the document unloaded (no users), then resume: the server
// reloads it from its store. With --burst N, every editor makes N edits
// at once (no gap between them) after about every --burst-every of its
// edits: they go in one submission, longer than the history when N is
// larger than it. The server may then close WebSocket clients with 4008
// to resync them; a submission unanswered when its connection closed
// and replaced by a snapshot is in doubt (accepted or not).
//
// Usage:
//   node collab-editors.mjs --url http://127.0.0.1:8080[,URL…] [--doc ID[,ID…]] [--editors 8]
//        [--edits 2000] [--seed N] [--max-delay 20] [--edit-gap 30]
//        [--comments 0.03] [--drain-timeout 60]
//        [--ws 0] [--reconnect-every 50] [--client ../../web/src/client.js]
//        [--history 0] [--lag 0] [--lag-every 15] [--breaks 0] [--burst 0] [--burst-every 60]
//        [--token JWT]   (every editor presents it: Authorization header, hello token)
//        [--faults 0]    (1: servers may be killed and restarted during the run)
//        [--others 0]    (1: writers besides the editors add steps, e.g. restores
//                         and server-side edits, whose client is present)
//        [--forwarded 0] (1: each editor sends X-Forwarded-For: an address of its own, so
//                         that a server with --trust-proxy counts it as a user of its own)
//        [--commit 0]    (N: the last N long-poll editors are in commit mode, see CommitEditor)
//
// Commit-mode editors (--commit N) send their steps with POST
// /docs/{id}/commits, one commit at a time under a ref of their own: a
// stale commit is rebased on the server, never a 409. They long-poll the
// events as the others do, and move to the server's document at each
// answer's version (see CommitEditor); now and then they drop an answer
// as lost and send the commit again, which must be answered the same.
// Their totals are in summary.commit, and their lines have "mode":
// "commit".
//
// With several URLs (servers sharing one store), editor i talks to URL
// i mod their number; the drain waits until every server is at the
// editors' versions, and a break until no server counts a user. The first
// URL's state is the server's state in the output.
//
// After --edits local edits in total the editors stop editing and drain:
// they keep syncing until nothing is sendable and every editor is at the
// server's version and comment version. Then stdout gets one line per
// editor, {"editor", "docID", "clientID", "transport", "version",
// "commentVersion", "sendable", "accepted", "inDoubt", "doc"}, and a
// last line {"summary": {…}}; progress goes to stderr. The exit status
// is 1 when anything went wrong: an HTTP status the demo client would
// not expect, a WebSocket message that breaks the protocol, an exception
// (a received step that does not apply …), a drain that does not
// finish, or an editor whose document differs from the server's (those
// are listed in summary.diverged, never dropped).
//
// Network delays (up to --max-delay ms) apply to every request and
// answer of the long-poll editors and to every message a WebSocket
// editor sends or receives (in order, as over TCP). A WebSocket editor
// drops its connection after every --reconnect-every of its edits or so
// (0: never), half the time abruptly.
//
// With --faults 1 a server may die and come back (kill -9, restart on
// its address): a long-poll request that fails on the network is tried
// again after 100 ms (a POST is resent at its version: when the lost
// one was committed it answers 409, and the poll that follows brings the
// editor's own steps, which confirm them), and a WebSocket connection
// that closes abnormally (1006) after its welcome is counted as a server
// close (serverCloses["1006"]) and resumed by the client's back-off;
// connection attempts that fail before a welcome are counted in
// ws.failedConnects. A server's store may fail too (a database
// restarted, its connections terminated): a long-poll request answered
// 503 must carry a Retry-After and is tried again after it (a POST at
// its version, as after a network error), counted in unavailable; a
// WebSocket error 503 is counted in ws.unavailable (the client keeps the
// submission's steps and sends them again after its back-off, and its
// notice of it in ws.unavailableNotices), and a hello refused so (close
// 1011 before a welcome) in ws.failedConnects. Comments are not made
// safe to resend (run with --comments 0), nor is the reload after a 410
// tried again. A server that drains (SIGTERM) closes its WebSockets with
// 1012 (service restart), counted in serverCloses["1012"] and resumed
// like the others (with or without --faults), and answers its waiting
// polls {}.
//
// Each editor's line also has "maxUsers", the largest user count it was
// told while editing (by the events answers and the document of a
// long-poll editor, the pushes of a WebSocket editor), and a WebSocket
// editor's "presenceFrom", the client ids whose selection it was sent.
//
// The seed fixes each editor's choices given what it sees; the timing of
// the network decides what it sees, so a run is reproducible only in
// distribution, not step for step.

import { EditorState, TextSelection, NodeSelection, Selection, PluginKey } from "prosemirror-state"
import { Step } from "prosemirror-transform"
import { collab, receiveTransaction, sendableSteps, getVersion } from "prosemirror-collab"
import {
  chainCommands, deleteSelection, joinBackward, joinForward, selectNodeBackward, selectNodeForward,
  splitBlock, splitBlockKeepMarks, toggleMark, wrapIn, lift, setBlockType, joinUp, joinDown,
  createParagraphNear, liftEmptyBlock, exitCode, newlineInCode, selectParentNode,
} from "prosemirror-commands"
import { wrapInList, liftListItem, sinkListItem, splitListItem } from "prosemirror-schema-list"
import { register } from "node:module"
import { fileURLToPath, pathToFileURL } from "node:url"
import { loadSchema } from "./schemas.mjs"

// ---------------------------------------------------------------------------
// Flags

function parseFlags(argv) {
  let flags = {
    url: "", doc: "editors", editors: 8, edits: 2000, seed: null,
    maxDelay: 20, editGap: 30, comments: 0.03, drainTimeout: 60,
    ws: 0, reconnectEvery: 50, client: fileURLToPath(new URL("../../web/src/client.js", import.meta.url)),
    history: 0, lag: 0, lagEvery: 15, breaks: 0, burst: 0, burstEvery: 60, token: "", faults: 0, others: 0,
    forwarded: 0, commit: 0,
  }
  let names = {
    "--url": "url", "--doc": "doc", "--editors": "editors", "--edits": "edits", "--seed": "seed",
    "--max-delay": "maxDelay", "--edit-gap": "editGap", "--comments": "comments", "--drain-timeout": "drainTimeout",
    "--ws": "ws", "--reconnect-every": "reconnectEvery", "--client": "client",
    "--history": "history", "--lag": "lag", "--lag-every": "lagEvery", "--breaks": "breaks",
    "--burst": "burst", "--burst-every": "burstEvery", "--token": "token", "--faults": "faults",
    "--others": "others", "--forwarded": "forwarded", "--commit": "commit",
  }
  for (let i = 0; i < argv.length; i++) {
    let name = names[argv[i]]
    if (!name || i + 1 >= argv.length) usage(`unknown flag or missing value: ${argv[i]}`)
    let value = argv[++i]
    if (name == "url" || name == "doc" || name == "client" || name == "token") flags[name] = value
    else {
      let n = Number(value)
      if (!Number.isFinite(n) || n < 0) usage(`${argv[i - 1]} wants a non-negative number, not ${value}`)
      flags[name] = n
    }
  }
  if (!flags.url) usage("--url is required")
  flags.urls = flags.url.split(",").map(u => u.replace(/\/+$/, ""))
  if (flags.urls.some(u => !u)) usage("--url wants non-empty URLs")
  flags.url = flags.urls[0]
  if (flags.seed == null) flags.seed = Math.floor(Math.random() * 2 ** 32)
  if (!Number.isInteger(flags.editors) || flags.editors < 1) usage("--editors wants an integer ≥ 1")
  if (!Number.isInteger(flags.ws) || flags.ws > flags.editors) usage("--ws wants an integer from 0 to --editors")
  if (!Number.isInteger(flags.commit) || flags.commit > flags.editors - flags.ws) usage("--commit wants an integer from 0 to --editors minus --ws")
  if (flags.commit && (flags.lag || flags.faults)) usage("--commit does not go with --lag or --faults")
  flags.docs = flags.doc.split(",")
  if (flags.docs.some(d => !d) || new Set(flags.docs).size != flags.docs.length) usage("--doc wants distinct non-empty ids")
  if (flags.docs.length > flags.editors) usage("--editors wants at least one editor per document")
  if (flags.lag && !flags.history) usage("--lag needs --history")
  if (flags.lag && flags.lag >= Math.ceil(flags.editors / flags.docs.length)) usage("--lag wants fewer editors than each document has")
  return flags
}

function usage(msg) {
  process.stderr.write(`collab-editors: ${msg}\n` +
    "usage: node collab-editors.mjs --url URL[,URL…] [--doc ID] [--editors K] [--edits N] [--seed N]\n" +
    "       [--max-delay MS] [--edit-gap MS] [--comments P] [--drain-timeout S]\n" +
    "       [--ws N] [--reconnect-every EDITS] [--client PATH] [--token JWT]\n" +
    "       [--history N] [--lag L] [--lag-every EDITS] [--breaks B] [--burst EDITS] [--burst-every EDITS]\n" +
    "       [--commit N]\n")
  process.exit(2)
}

// ---------------------------------------------------------------------------
// Seeded randomness

// Rand is mulberry32 over a 32-bit state mixed from (seed, stream).
class Rand {
  constructor(seed, stream) {
    let h = (seed >>> 0) ^ Math.imul(stream + 1, 0x9e3779b9) ^ Math.imul(Math.floor(seed / 2 ** 32), 0x85ebca6b)
    h = Math.imul(h ^ (h >>> 16), 0x7feb352d)
    this.s = (h ^ (h >>> 15)) >>> 0
  }
  next() {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  int(n) { return Math.floor(this.next() * n) }   // [0, n)
  chance(p) { return this.next() < p }
  pick(arr) { return arr[this.int(arr.length)] }
  // weighted picks from [[weight, value], …].
  weighted(list) {
    let total = 0
    for (let [w] of list) total += w
    let r = this.next() * total
    for (let [w, v] of list) if ((r -= w) < 0) return v
    return list[list.length - 1][1]
  }
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

// ---------------------------------------------------------------------------
// HTTP

// HTTPError is an answer with a status the caller did not expect.
class HTTPError extends Error {
  constructor(method, url, status, body) {
    super(`${method} ${url}: HTTP ${status}: ${body.slice(0, 300)}`)
    this.status = status
    this.body = body
  }
}

// authToken is the --token every editor presents: as the Authorization
// header of its requests, in the hello of its WebSocket.
let authToken = ""

// tokenName returns the presence name the server shows for a token's
// principal: its "name" claim, else its "sub", cut to 64 UTF-16 units
// between characters ("" without a token).
function tokenName(token) {
  if (!token) return ""
  let claims = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString())
  let name = claims.name || claims.sub, out = ""
  for (let ch of name) {
    if (out.length + ch.length > 64) break
    out += ch
  }
  return out
}

// request sends one request and returns {status, text}; network failures
// and aborts throw. An editor's request has its address as
// X-Forwarded-For with --forwarded.
async function request(method, url, body, signal, editor) {
  let init = { method, signal, headers: {} }
  if (body != null) {
    init.body = body
    init.headers["Content-Type"] = "application/json"
  }
  if (authToken) init.headers.Authorization = "Bearer " + authToken
  if (editor && editor.h.flags.forwarded) init.headers["X-Forwarded-For"] = editor.address
  let resp = await fetch(url, init)
  let text = await resp.text()
  return { status: resp.status, text, retryAfter: resp.headers.get("Retry-After") }
}

// unavailable handles a 503 answer with --faults (the server's store is
// down or its connection failed: the server asks to try again later):
// it counts it and returns the Retry-After in milliseconds, and fails
// on a 503 without a Retry-After of whole seconds. It returns -1 for
// any other answer, or without --faults.
function unavailable(h, method, url, { status, text, retryAfter }) {
  if (!h.flags.faults || status != 503) return -1
  stats.unavailable++
  if (!/^[0-9]+$/.test(retryAfter || ""))
    throw new Error(`${method} ${url}: HTTP 503 with Retry-After ${JSON.stringify(retryAfter)}: ${text.slice(0, 300)}`)
  return Number(retryAfter) * 1000
}

// isNetError tells whether e is fetch's failure to reach the server or
// to read its whole answer (undici's "fetch failed", "terminated").
function isNetError(e) {
  return e instanceof TypeError && (e.message == "fetch failed" || e.message == "terminated")
}

function parseJSON(what, text) {
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new Error(`${what}: answer is not JSON (${e.message}): ${text.slice(0, 300)}`)
  }
}

// ---------------------------------------------------------------------------
// Edits

// Typed text: ASCII words, Latin-1 and CJK letters, emoji (surrogate
// pairs, a ZWJ sequence, a skin-tone modifier), so that UTF-16 positions
// matter.
const pieces = [
  "a", "b", "x", "the ", "edit", " ", " ", "collab ", "é", "ß", "ñ", "Ω", "中文", "日本",
  "😀", "👍🏽", "👩‍💻", "🚀", "\u00a0", "Ø", "—", "ž",
]

function randomText(rng) {
  let n = 1 + rng.int(4), s = ""
  for (let i = 0; i < n; i++) s += rng.pick(pieces)
  return s
}

// randomSelection returns a valid selection in doc: a cursor, a short or
// long text range (possibly across blocks), or a node selection.
function randomSelection(doc, rng) {
  let size = doc.content.size
  let a = rng.int(size + 1)
  let kind = rng.next()
  if (kind < 0.45) return Selection.near(doc.resolve(a), rng.chance(0.5) ? 1 : -1)
  if (kind < 0.9) {
    // Mostly short ranges; now and then up to a quarter of the document
    // (more would leave nothing to edit).
    let span = rng.chance(0.97) ? rng.int(12) : rng.int(Math.floor(size / 4) + 1)
    let b = Math.max(0, Math.min(size, a + (rng.chance(0.5) ? span : -span)))
    return TextSelection.between(doc.resolve(a), doc.resolve(b))
  }
  // A node selection on a random selectable node, else a cursor.
  let $pos = doc.resolve(a)
  let after = $pos.nodeAfter
  if (after && NodeSelection.isSelectable(after)) return NodeSelection.create(doc, a)
  return Selection.near($pos)
}

// blockEdgeSelection puts the cursor at the start or end of a random
// textblock (where joinBackward/joinForward have something to do).
function blockEdgeSelection(doc, rng, atEnd) {
  let blocks = []
  doc.descendants((node, pos) => {
    if (node.isTextblock) blocks.push(atEnd ? pos + 1 + node.content.size : pos + 1)
  })
  if (!blocks.length) return null
  return TextSelection.create(doc, rng.pick(blocks))
}

// run returns the transaction cmd dispatches on state, or null.
function run(cmd, state) {
  let result = null
  cmd(state, tr => { result = tr })
  return result
}

const backspace = chainCommands(deleteSelection, joinBackward, selectNodeBackward)
const del = chainCommands(deleteSelection, joinForward, selectNodeForward)
const enter = chainCommands(newlineInCode, createParagraphNear, liftEmptyBlock, splitBlock)

// makeOps returns the edit operations: [weight, name, fn(state, rng) →
// {selection, cmd} or {selection, tr}] where selection (optional) is set
// first.
function makeOps(schema) {
  let n = schema.nodes, m = schema.marks
  let mark = rng => {
    let type = rng.pick([m.strong, m.em, m.code, m.link])
    let attrs = type == m.link ? { href: "https://example.com/" + rng.int(100), title: rng.chance(0.3) ? "t" : null } : null
    return toggleMark(type, attrs)
  }
  return [
    [30, "type", (s, rng) => ({ selection: randomSelection(s.doc, rng), tr: st => st.tr.insertText(randomText(rng)) })],
    [8, "delete-range", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: deleteSelection })],
    [5, "backspace", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: backspace })],
    [3, "delete", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: del })],
    [7, "splitBlock", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: rng.chance(0.5) ? splitBlock : splitBlockKeepMarks })],
    [4, "enter", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: enter })],
    [3, "splitListItem", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: splitListItem(n.list_item) })],
    [4, "joinBackward", (s, rng) => ({ selection: blockEdgeSelection(s.doc, rng, false), cmd: joinBackward })],
    [4, "joinForward", (s, rng) => ({ selection: blockEdgeSelection(s.doc, rng, true), cmd: joinForward })],
    [1, "joinUp", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: rng.chance(0.5) ? joinUp : joinDown })],
    [10, "toggleMark", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: mark(rng) })],
    [3, "wrapInList", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: wrapInList(rng.chance(0.5) ? n.bullet_list : n.ordered_list) })],
    [2, "wrapIn", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: wrapIn(n.blockquote) })],
    [2, "lift", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: lift })],
    [2, "liftListItem", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: liftListItem(n.list_item) })],
    [2, "sinkListItem", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: sinkListItem(n.list_item) })],
    [1, "exitCode", (s, rng) => ({ selection: randomSelection(s.doc, rng), cmd: exitCode })],
    [4, "setBlockType", (s, rng) => {
      let type = rng.pick([n.heading, n.code_block, n.paragraph])
      return { selection: randomSelection(s.doc, rng), cmd: setBlockType(type, type == n.heading ? { level: 1 + rng.int(3) } : null) }
    }],
    [2, "hard_break", (s, rng) => ({ selection: randomSelection(s.doc, rng), tr: st => st.tr.replaceSelectionWith(n.hard_break.create()) })],
    [1, "horizontal_rule", (s, rng) => ({ selection: randomSelection(s.doc, rng), tr: st => st.tr.replaceSelectionWith(n.horizontal_rule.create()) })],
    [2, "image", (s, rng) => ({
      selection: randomSelection(s.doc, rng),
      tr: st => st.tr.replaceSelectionWith(n.image.create({ src: `img/${rng.int(1000)}.png`, alt: rng.chance(0.5) ? "pic 😀" : null })),
    })],
    [1, "selectParent-delete", (s, rng) => ({
      selection: randomSelection(s.doc, rng),
      tr: st => { let t = run(selectParentNode, st); return t && st.apply(t).tr.deleteSelection() },
    })],
    [2, "setNodeAttribute", (s, rng) => {
      // An attr step: heading level, list order or image alt.
      let targets = []
      s.doc.descendants((node, pos) => {
        if (node.type == n.heading || node.type == n.ordered_list || node.type == n.image) targets.push(pos)
      })
      if (!targets.length) return null
      let pos = rng.pick(targets), node = s.doc.nodeAt(pos)
      return {
        tr: st => node.type == n.heading ? st.tr.setNodeAttribute(pos, "level", 1 + rng.int(6))
          : node.type == n.ordered_list ? st.tr.setNodeAttribute(pos, "order", rng.int(20))
            : st.tr.setNodeAttribute(pos, "alt", rng.chance(0.5) ? "alt " + randomText(rng) : null),
      }
    }],
    [1, "imageMark", (s, rng) => {
      // addNodeMark/removeNodeMark steps on an inline image.
      let images = []
      s.doc.descendants((node, pos) => { if (node.type == n.image) images.push(pos) })
      if (!images.length) return null
      let pos = rng.pick(images), node = s.doc.nodeAt(pos)
      let type = rng.pick([m.em, m.strong, m.link])
      let has = type.isInSet(node.marks)
      if (!s.doc.resolve(pos).parent.type.allowsMarkType(type)) return null
      return {
        tr: st => has ? st.tr.removeNodeMark(pos, type)
          : st.tr.addNodeMark(pos, type.create(type == m.link ? { href: "https://example.org/" + rng.int(9) } : null)),
      }
    }],
  ]
}

// ---------------------------------------------------------------------------
// Editors

// unconfirmed is the number of state's steps not yet confirmed by the
// authority.
function unconfirmed(state) {
  let sendable = sendableSteps(state)
  return sendable ? sendable.steps.length : 0
}

// guardNodeSelection works around a crash of prosemirror-state 1.4.4:
// NodeSelection.map builds a NodeSelection at the mapped position unless
// the mapping says the node was deleted, and throws (TypeError: Cannot
// read properties of null (reading 'nodeSize')) when no node is there.
// It crashed 2 of 25 looped CI runs in session 4, mapping a poll
// editor's node selection through a receiveTransaction rebase. For the
// transactions of receiveTransaction (whose selection is mapped from the
// start), when that would happen, tr gets what NodeSelection.map gives a
// deleted node: Selection.near. Counted in stats.selectionGuards.
function guardNodeSelection(state, tr) {
  let sel = state.selection
  if (!(sel instanceof NodeSelection) || !tr.docChanged || tr.selectionSet) return tr
  let { deleted, pos } = tr.mapping.mapResult(sel.anchor)
  let $pos = tr.doc.resolve(pos)
  if (!deleted && !$pos.nodeAfter) {
    stats.selectionGuards++
    tr.setSelection(Selection.near($pos))
  }
  return tr
}

// stats are the run's totals (the summary line).
const stats = {
  edits: 0, stepsLocal: 0, stepsSent: 0, maxPostSteps: 0, stepsAccepted: 0, posts: 0, conflicts: 0, polls: 0, pollsAborted: 0,
  stepsReceived: 0, stepsDropped: 0, rebased: 0, netErrors: 0, confirmedByEvents: 0,
  // With --faults: answers 503 (with Retry-After) to long-poll requests,
  // each tried again after its Retry-After.
  unavailable: 0, commandsThrew: 0, commentsCreated: 0, commentsDeleted: 0, commentEventsReceived: 0,
  // Falling behind (--lag): lags begun, 410 answers to polls (each a
  // reload), unconfirmed steps lost in reloads and in snapshots on resume,
  // and steps in doubt: those of a submission still unanswered when its
  // connection closed, then replaced by a snapshot (the server may or may
  // not have accepted them).
  lags: 0, historyGone: 0, stepsLostInReloads: 0, stepsInDoubt: 0,
  // Breaks (--breaks): taken, and ended by the document's unload.
  breaks: 0, unloadsSeen: 0,
  bursts: 0,
  selectionGuards: 0, // see guardNodeSelection
  opCounts: {},
}

// lagMargin is how many steps beyond the server's history a lagging
// editor waits for before it resumes.
const lagMargin = 10

// Editor is what every editor does, whatever its transport: random local
// edits and comments through the real commands. A transport's subclass
// keeps `state` and implements select, localEdit, commentIDs, addComment
// and deleteComment.
//
// An editor pauses (holds its requests and edits) while its document is
// on a break or while it lags: until its document is far enough ahead.
class Editor {
  constructor(h, group, index, clientID) {
    this.h = h
    this.group = group
    this.index = index
    this.clientID = clientID
    this.base = h.flags.urls[index % h.flags.urls.length] // the server it talks to
    this.rng = new Rand(h.flags.seed, index)
    this.netRng = new Rand(h.flags.seed, 1000 + index)
    this.stopped = false
    this.accepted = 0 // own steps the server confirmed
    this.inDoubt = 0 // own steps whose fate is unknown (stats.stepsInDoubt)
    // The --lag editors after the first of each document lag (the first
    // never does: someone moves the document on).
    let pos = group.editors.length
    this.lagger = pos >= 1 && pos <= h.flags.lag
    this.lagIn = this.lagger ? this.nextLag() : Infinity
    this.lagging = false
    this.burstIn = h.flags.burst ? this.nextBurst() : Infinity
    this.burstLeft = 0 // edits left in the current burst
    this.address = `10.${(index >> 8) & 255}.${index & 255}.7` // with --forwarded
    this.maxUsers = 0 // the largest user count told while editing
    group.editors.push(this)
  }

  // sawUsers notes a user count the server told.
  sawUsers(n) { if (this.h.editsLeft()) this.maxUsers = Math.max(this.maxUsers, n) }

  netDelay() { return this.netRng.next() * this.h.flags.maxDelay }
  delay() { return sleep(this.netDelay()) }

  // nextLag returns how many more edits until the editor lags.
  nextLag() { return Math.max(1, Math.round(this.h.flags.lagEvery / 2 + this.netRng.next() * this.h.flags.lagEvery)) }
  // nextBurst returns how many more edits until the editor's next burst.
  nextBurst() { return Math.max(1, Math.round(this.h.flags.burstEvery / 2 + this.netRng.next() * this.h.flags.burstEvery)) }

  // paused tells whether the editor holds its requests and edits: while
  // its document is on a break, and while it lags, until its document is
  // more than the server's history ahead of it (or the edits are done).
  paused() {
    if (this.stopped) return false
    if (this.lagging && (!this.h.editsLeft() ||
      this.group.version() >= getVersion(this.state) + this.h.flags.history + lagMargin)) this.lagging = false
    return this.group.onBreak || this.lagging
  }

  // gate waits until the editor is not paused.
  async gate() {
    while (this.paused()) await sleep(10)
  }

  async editLoop() {
    let ops = this.h.ops
    while (this.h.editsLeft() && !this.stopped) {
      if (this.burstLeft > 0) this.burstLeft--
      else await sleep(this.rng.next() * 2 * this.h.flags.editGap)
      await this.gate()
      if (!this.h.editsLeft() || this.stopped) break
      if (--this.burstIn <= 0) {
        this.burstIn = this.nextBurst()
        this.burstLeft = this.h.flags.burst
        stats.bursts++
      }
      if (--this.lagIn <= 0) {
        this.lagIn = this.nextLag()
        this.lagging = true
        stats.lags++
        this.hold()
        continue
      }
      if (this.rng.chance(this.h.flags.comments)) {
        if (this.commentEdit()) this.h.countEdit(this, "comment")
        continue
      }
      for (let attempt = 0; attempt < 20; attempt++) {
        let [, name, fn] = this.rng.weighted(ops.map(op => [op[0], op]))
        let plan, st = this.state, tr
        try {
          plan = fn(st, this.rng)
          if (!plan) continue
          if (plan.selection) st = st.apply(st.tr.setSelection(plan.selection))
          tr = plan.cmd ? run(plan.cmd, st) : plan.tr(st)
        } catch (e) {
          // A command that throws on some selection (joinDown can) is the
          // command's business, not the authority's: count it, go on.
          stats.commandsThrew++
          if (stats.commandsThrew <= 3) this.h.log(`editor ${this.index}: ${name} threw (ignored): ${e.message}`)
          continue
        }
        if (!tr || !tr.docChanged) continue
        // The selection change and the edit, as one local transaction
        // each (the selection one changes no document).
        if (plan.selection) this.select(plan.selection)
        stats.stepsLocal += tr.steps.length
        this.localEdit(tr)
        this.h.countEdit(this, name)
        break
      }
    }
  }

  // commentEdit creates a comment on a random range or deletes a known
  // one (the demo's comment plugin: unsent events go with the next
  // submission).
  commentEdit() {
    let ids = this.commentIDs()
    if (ids.length && this.rng.chance(0.4)) {
      let id = ids[this.rng.int(ids.length)]
      this.deleteComment(id)
      stats.commentsDeleted++
    } else {
      let size = this.state.doc.content.size
      let from = this.rng.int(size), to = Math.min(size, from + 1 + this.rng.int(20))
      let id = Math.floor(this.rng.next() * 0xffffffff)
      this.addComment({ id, from, to, text: "note " + randomText(this.rng) })
      stats.commentsCreated++
    }
    return true
  }
}

// PollEditor is a long-poll client: the demo's EditorConnection without a
// view.
class PollEditor extends Editor {
  constructor(h, group, index, clientID) {
    super(h, group, index, clientID)
    this.transport = "http"
    this.state = null
    this.comm = "start" // "poll" | "send" | "stopped"
    this.pollCtl = null
    this.commentVersion = 0
    this.unsentComments = [] // {type, id, from, to, text} in the current doc's positions
    this.comments = new Map() // id → {from, to}: what this editor believes exists
  }

  url(path = "") { return `${this.base}/docs/${encodeURIComponent(this.group.id)}${path}` }

  async start() {
    await this.load()
    this.poll()
    this.editLoop().catch(e => this.h.fail(e, this))
  }

  // load loads the document into a new state, as the demo client starts
  // (and restarts): what the old state had unconfirmed is lost, and so
  // are the comment events not sent.
  async load() {
    await this.delay()
    await this.gate()
    let answer = await request("GET", this.url(), null, null, this)
    let { status, text } = answer
    let wait = unavailable(this.h, "GET", this.url(), answer)
    if (wait >= 0) {
      await sleep(wait)
      return this.load()
    }
    if (status != 200) throw new HTTPError("GET", this.url(), status, text)
    let data = parseJSON("GET /docs/{id}", text)
    this.sawUsers(data.users)
    await this.delay()
    if (this.state) stats.stepsLostInReloads += unconfirmed(this.state)
    this.state = EditorState.create({
      doc: this.h.schema.nodeFromJSON(data.doc),
      plugins: [collab({ version: data.version, clientID: this.clientID })],
    })
    this.commentVersion = data.commentVersion
    this.unsentComments = []
    this.comments = new Map()
    for (let c of data.comments) this.comments.set(c.id, { from: c.from, to: c.to })
  }

  // hold makes a waiting poll stop (and wait at the gate).
  hold() {
    if (this.comm != "poll") return
    this.pollCtl.abort()
    this.poll()
  }

  // apply moves the state on by tr, keeping unsent comment positions and
  // known comments in the new document's coordinates.
  apply(tr) {
    this.state = this.state.apply(tr)
    if (!tr.docChanged) return
    let map = (list, isMap) => {
      for (let [key, c] of isMap ? list : list.entries()) {
        if (c.from == null) continue
        c.from = tr.mapping.map(c.from, 1)
        c.to = tr.mapping.map(c.to, -1)
        if (c.from >= c.to) isMap ? list.delete(key) : (c.dead = true)
      }
    }
    map(this.comments, true)
    map(this.unsentComments, false)
  }

  sendable() {
    let steps = sendableSteps(this.state)
    let comments = this.unsentComments.filter(c => !c.dead).map(c => c.type == "create"
      ? { type: "create", id: c.id, text: c.text, from: c.from, to: c.to }
      : { type: "delete", id: c.id })
    if (steps || comments.length) return { steps, comments, sent: this.unsentComments.length }
    return null
  }

  // afterRequest is the demo's requestDone: send what is pending, else poll.
  afterRequest() {
    if (this.comm == "stopped") return
    let sendable = this.sendable()
    if (sendable) this.send(sendable)
    else this.poll()
  }

  poll() {
    this.comm = "poll"
    let ctl = this.pollCtl = new AbortController()
    this.doPoll(ctl).catch(e => {
      if (ctl.signal.aborted) { stats.pollsAborted++; return }
      if (this.h.flags.faults && isNetError(e)) {
        stats.netErrors++
        sleep(100).then(() => { if (this.comm == "poll" && this.pollCtl == ctl) this.poll() })
        return
      }
      this.h.fail(e, this)
    })
  }

  async doPoll(ctl) {
    await this.delay()
    await this.gate()
    if (ctl.signal.aborted) return
    let version = getVersion(this.state), commentVersion = this.commentVersion
    let url = this.url(`/events?version=${version}&commentVersion=${commentVersion}`)
    stats.polls++
    let answer = await request("GET", url, null, ctl.signal, this)
    let { status, text } = answer
    await this.delay()
    // A local edit aborted this poll after its answer came: the demo drops
    // the answer (the send path took over); reading it again costs nothing.
    if (ctl.signal.aborted) { stats.pollsAborted++; return }
    let wait = unavailable(this.h, "GET", url, answer)
    if (wait >= 0) {
      sleep(wait).then(() => { if (this.comm == "poll" && this.pollCtl == ctl) this.poll() })
      return
    }
    if (status == 410) {
      // Too far behind: as the demo client, start over from the server's
      // document.
      stats.historyGone++
      this.comm = "start"
      await this.load()
      this.afterRequest()
      return
    }
    if (status != 200) throw new HTTPError("GET", url, status, text)
    let data = parseJSON("GET events", text)
    if (data.steps && (data.steps.length || data.comment.length)) {
      this.receive(version, commentVersion, data)
      this.afterRequest()
    } else {
      if (data.steps) this.checkEvents(version, commentVersion, data)
      this.poll()
    }
  }

  // checkEvents checks an events answer against the contract (DESIGN.md,
  // HTTP API item 2).
  checkEvents(version, commentVersion, data) {
    let bad = msg => { throw new Error(`events answer for version ${version}, commentVersion ${commentVersion}: ${msg}: ${JSON.stringify(data).slice(0, 500)}`) }
    for (let key of ["steps", "clientIDs", "comment"]) if (!Array.isArray(data[key])) bad(`${key} is not a list`)
    if (data.version != version + data.steps.length) bad("version is not the asked version + number of steps")
    if (data.clientIDs.length != data.steps.length) bad("not one client id per step")
    if (!(data.commentVersion >= commentVersion)) bad("commentVersion went back")
    if (typeof data.users != "number") bad("users is not a number")
    this.sawUsers(data.users)
  }

  receive(version, commentVersion, data) {
    this.checkEvents(version, commentVersion, data)
    // This editor's own steps come back only in POST answers: it never
    // polls while a POST is out. With --faults, a POST whose answer was
    // lost may have been committed: its steps come back here and confirm
    // the editor's first unconfirmed ones.
    let own = data.clientIDs.filter(id => id == this.clientID).length
    if (own && !this.h.flags.faults)
      throw new Error(`events answer for version ${version} holds this editor's own steps: ${JSON.stringify(data.clientIDs)}`)
    let steps = data.steps.map(j => Step.fromJSON(this.h.schema, j))
    let before = unconfirmed(this.state)
    if (own > before)
      throw new Error(`events answer for version ${version} holds ${own} of this editor's steps, ${before} unconfirmed`)
    let tr = guardNodeSelection(this.state, receiveTransaction(this.state, steps, data.clientIDs))
    stats.stepsReceived += steps.length - own
    stats.stepsAccepted += own
    stats.confirmedByEvents += own
    this.accepted += own
    if (before > own && tr.docChanged) stats.rebased++
    this.apply(tr)
    // Rebasing drops the unconfirmed steps that no longer apply (typing
    // into text another editor deleted …).
    stats.stepsDropped += before - own - unconfirmed(this.state)
    // Comment events refer to the server's document at data.version: this
    // editor's document when it has no unconfirmed steps left on top.
    let serverDoc = sendableSteps(this.state) ? null : this.state.doc
    for (let ev of data.comment) {
      stats.commentEventsReceived++
      if (ev.type == "delete") { this.comments.delete(ev.id); continue }
      if (ev.type != "create") throw new Error(`unknown comment event ${JSON.stringify(ev)}`)
      if (!(Number.isInteger(ev.from) && Number.isInteger(ev.to) && ev.from >= 0 && ev.from < ev.to))
        throw new Error(`comment event with a bad range: ${JSON.stringify(ev)}`)
      if (serverDoc && ev.to > serverDoc.content.size)
        throw new Error(`comment event beyond the document (size ${serverDoc.content.size}): ${JSON.stringify(ev)}`)
      if (!this.comments.has(ev.id)) this.comments.set(ev.id, { from: ev.from, to: ev.to })
    }
    this.commentVersion = data.commentVersion
  }

  send(sendable) {
    this.comm = "send"
    this.doSend(sendable).catch(e => {
      if (this.h.flags.faults && isNetError(e) && this.comm == "send") {
        // Sent or not: send again at the same version.
        stats.netErrors++
        this.comm = "retry"
        sleep(100).then(() => this.afterRequest())
        return
      }
      this.h.fail(e, this)
    })
  }

  async doSend({ steps, comments, sent }) {
    // Nothing changes the state while the editor waits (no edits, no
    // polls): what was sendable still is.
    await this.gate()
    if (this.comm == "stopped") return
    let version = getVersion(this.state)
    let body = JSON.stringify({
      version,
      steps: steps ? steps.steps.map(s => s.toJSON()) : [],
      clientID: steps ? steps.clientID : 0,
      comment: comments,
    })
    let n = steps ? steps.steps.length : 0
    await this.delay()
    stats.posts++
    stats.stepsSent += n
    stats.maxPostSteps = Math.max(stats.maxPostSteps, n)
    let url = this.url("/events")
    let answer = await request("POST", url, body, null, this)
    let { status, text } = answer
    await this.delay()
    if (this.comm == "stopped") return
    let wait = unavailable(this.h, "POST", url, answer)
    if (wait >= 0) {
      // Taken or not (a commit whose answer was lost): send again at the
      // same version after the Retry-After, as after a network error.
      this.comm = "retry"
      sleep(wait).then(() => this.afterRequest())
      return
    }
    if (status == 409) {
      // The document moved on: poll for the changes, then try again.
      stats.conflicts++
      this.poll()
      return
    }
    if (status != 200) throw new HTTPError("POST", url, status, text)
    let data = parseJSON("POST events", text)
    if (data.version != version + n)
      throw new Error(`POST at version ${version} with ${n} steps answered version ${data.version}`)
    stats.stepsAccepted += n
    this.accepted += n
    let before = unconfirmed(this.state)
    let tr = steps ? guardNodeSelection(this.state, receiveTransaction(this.state, steps.steps, new Array(n).fill(steps.clientID))) : this.state.tr
    this.apply(tr)
    if (unconfirmed(this.state) != before - n)
      throw new Error(`confirming ${n} steps left ${unconfirmed(this.state)} of ${before} unconfirmed`)
    this.unsentComments.splice(0, sent)
    this.commentVersion = data.commentVersion
    this.afterRequest()
  }

  // localEdit applies tr (a local edit) and, as the demo does, aborts a
  // running poll to send at once.
  localEdit(tr) {
    this.apply(tr)
    if (this.comm == "poll") {
      let sendable = this.sendable()
      if (sendable) {
        this.pollCtl.abort()
        this.send(sendable)
      }
    }
  }

  select(selection) { this.apply(this.state.tr.setSelection(selection)) }

  commentIDs() { return [...this.comments.keys()] }

  addComment({ id, from, to, text }) {
    this.comments.set(id, { from, to })
    this.unsentComments.push({ type: "create", id, from, to, text })
    this.commentsChanged()
  }

  deleteComment(id) {
    this.comments.delete(id)
    this.unsentComments.push({ type: "delete", id })
    this.commentsChanged()
  }

  commentsChanged() {
    if (this.comm == "poll") {
      this.pollCtl.abort()
      this.send(this.sendable())
    }
  }

  // quiet tells whether the editor has nothing to send and waits for news.
  quiet() { return this.comm == "poll" && !this.paused() && !this.sendable() }
  describe() { return this.comm }

  stop() {
    this.stopped = true
    this.comm = "stopped"
    if (this.pollCtl) this.pollCtl.abort()
  }
}

// ---------------------------------------------------------------------------
// Commit-mode editors

// commitStats are the commit-mode editors' totals (summary.commit). Their
// steps also count in stats (stepsSent, stepsAccepted, stepsDropped …).
const commitStats = {
  editors: 0, commits: 0,
  // stale: commits made at a version behind the server's (answered with
  // from > version: rebased on the server); withDrops: commits answered
  // with a non-empty dropped, stepsDroppedByServer their dropped steps.
  stale: 0, withDrops: 0, stepsDroppedByServer: 0,
  // resends: answers dropped on purpose (a lost answer) and the commit
  // sent again under its ref; each second answer must equal the first.
  resends: 0,
  // answersFirst/eventsFirst: commits whose answer came before / after
  // the events up to its from; ownEventsChecked: the commit's own steps
  // that came back in events and were checked against the answer.
  answersFirst: 0, eventsFirst: 0, ownEventsChecked: 0,
  // Local rebases: of the unconfirmed steps made while a commit was out
  // (on the server's answer), and of those over others' steps.
  rebasedOnAnswer: 0,
}

// collabPlugin returns the collab plugin of state (prosemirror-collab
// exports neither its key nor its state class).
function collabPlugin(state) {
  let plugin = state.plugins.find(p => p.spec.historyPreserveItems && p.spec.config && "clientID" in p.spec.config)
  if (!plugin) throw new Error("no collab plugin")
  return plugin
}

// sameAnswer tells whether two commit answers say the same: from,
// version, steps and dropped (docs/api.md, Commit mode).
function sameAnswer(a, b) {
  let pick = x => JSON.stringify([x.from, x.version, x.steps, x.dropped])
  return pick(a) == pick(b)
}

// CommitEditor is a long-poll client in commit mode: it sends its steps
// with POST /docs/{id}/commits, at most one commit at a time, each under
// a ref of its own, and never gets a 409: a stale commit is rebased by
// the server. It long-polls events all along; while a commit is out, the
// events' steps are buffered. Once the commit's answer {from F, version
// W, steps S, dropped} is in and the events up to F are too (whichever
// came first), one transaction moves the state to the server's document
// at W with the steps made since the commit rebased on top: the inverses
// of all unconfirmed steps, the others' steps up to F, S, then the later
// unconfirmed steps mapped (with mirrors, as prosemirror-collab's
// rebaseSteps) — the client does not assume that the server rebased as
// it would. Now and then (1 in 20) it drops an answer as if it were
// lost and sends the same commit again: the second answer must be the
// first.
class CommitEditor extends PollEditor {
  constructor(h, group, index, clientID) {
    super(h, group, index, clientID)
    this.mode = "commit"
    this.commitRng = new Rand(h.flags.seed, 3000 + index)
    this.commits = 0 // refs made
    this.inflight = null // {ref, version, k, stepObjs, body, sent, answer}
    this.buffer = [] // server steps after getVersion(state): {json, clientID}
    this.lastCommit = null // the last commit's answer, to check its steps in events
    commitStats.editors++
  }

  async start() {
    await this.load()
    this.comm = "poll"
    this.pollLoop().catch(e => this.h.fail(e, this))
    this.editLoop().catch(e => this.h.fail(e, this))
    this.maybeSend()
  }

  // known is the version up to which the editor has the server's steps.
  known() { return getVersion(this.state) + this.buffer.length }

  hold() { if (this.pollCtl) this.pollCtl.abort() }

  async pollLoop() {
    while (!this.stopped) {
      await this.delay()
      await this.gate()
      if (this.stopped) break
      let version = this.known(), commentVersion = this.commentVersion
      let url = this.url(`/events?version=${version}&commentVersion=${commentVersion}`)
      let ctl = this.pollCtl = new AbortController()
      stats.polls++
      let answer
      try {
        answer = await request("GET", url, null, ctl.signal, this)
      } catch (e) {
        if (ctl.signal.aborted) { stats.pollsAborted++; continue }
        throw e
      }
      await this.delay()
      if (this.stopped) break
      if (answer.status != 200) throw new HTTPError("GET", url, answer.status, answer.text)
      let data = parseJSON("GET events", answer.text)
      if (!data.steps) continue // a draining server's {}
      this.checkEvents(version, commentVersion, data)
      this.takeEvents(version, data)
      this.process()
    }
  }

  // takeEvents buffers an events answer's steps after the known version
  // (a poll sent before a commit was resolved can bring steps the editor
  // has: they are checked against what it has) and takes its comment
  // events.
  takeEvents(version, data) {
    let known = this.known(), base = getVersion(this.state)
    if (version > known) throw new Error(`events from version ${version}, beyond the known version ${known}`)
    data.steps.forEach((json, i) => {
      let v = version + 1 + i, clientID = data.clientIDs[i]
      if (v > known) {
        this.buffer.push({ json, clientID })
        if (clientID !== this.clientID) stats.stepsReceived++
        return
      }
      // Known already: in the buffer, or the last commit's own steps.
      let have = v > base ? this.buffer[v - base - 1] : null
      let c = this.lastCommit
      if (!have && c && v > c.from && v <= c.version) {
        have = { json: c.steps[v - c.from - 1], clientID: this.clientID }
        commitStats.ownEventsChecked++
      }
      if (have && (have.clientID !== clientID || JSON.stringify(have.json) != JSON.stringify(json)))
        throw new Error(`events: step ${v} is ${JSON.stringify(json)} from ${clientID}, earlier ${JSON.stringify(have.json)} from ${have.clientID}`)
    })
    for (let ev of data.comment) {
      stats.commentEventsReceived++
      if (ev.type == "delete") { this.comments.delete(ev.id); continue }
      if (ev.type != "create") throw new Error(`unknown comment event ${JSON.stringify(ev)}`)
      if (!(Number.isInteger(ev.from) && Number.isInteger(ev.to) && ev.from >= 0 && ev.from < ev.to))
        throw new Error(`comment event with a bad range: ${JSON.stringify(ev)}`)
      if (!this.comments.has(ev.id)) this.comments.set(ev.id, { from: ev.from, to: ev.to })
    }
    this.commentVersion = Math.max(this.commentVersion, data.commentVersion)
  }

  // process moves the state on by what has come: the commit's answer
  // once the events up to its from are in, the buffered steps when no
  // commit is out; then it sends what is sendable.
  process() {
    if (this.stopped) return
    if (this.inflight) {
      let answer = this.inflight.answer
      if (!answer) return
      if (this.known() < answer.from) {
        this.inflight.waited = true
        return
      }
      if (this.inflight.waited) commitStats.answersFirst++
      else commitStats.eventsFirst++
      this.resolve()
    }
    if (this.buffer.length) this.receiveBuffered()
    this.maybeSend()
  }

  // receiveBuffered applies the buffered steps (others' only: the
  // editor's own come back in answers) as the classic editor does.
  receiveBuffered() {
    let buffered = this.buffer
    this.buffer = []
    if (buffered.some(s => s.clientID === this.clientID))
      throw new Error(`events after version ${getVersion(this.state)} hold this editor's steps, with no commit out: ${JSON.stringify(buffered.map(s => s.clientID))}`)
    let steps = buffered.map(s => Step.fromJSON(this.h.schema, s.json))
    let before = unconfirmed(this.state)
    let tr = guardNodeSelection(this.state, receiveTransaction(this.state, steps, buffered.map(s => s.clientID)))
    if (before && tr.docChanged) stats.rebased++
    this.apply(tr)
    stats.stepsDropped += before - unconfirmed(this.state)
  }

  // resolve takes the commit's answer: the state goes to the server's
  // document at the answer's version, with the steps made since the
  // commit was sent rebased on top.
  resolve() {
    let c = this.inflight, a = c.answer, state = this.state
    let V = c.version, F = a.from, W = a.version
    if (getVersion(state) != V) throw new Error(`a commit at version ${V} resolved at version ${getVersion(state)}`)
    let others = this.buffer.slice(0, F - V)
    if (others.some(s => s.clientID === this.clientID))
      throw new Error(`events ${V + 1} to ${F} (before the commit's) hold this editor's steps`)
    // The commit's own steps already received in events are its answer's.
    for (let i = F - V; i < Math.min(this.buffer.length, W - V); i++) {
      let s = this.buffer[i], want = a.steps[i - (F - V)]
      if (s.clientID !== this.clientID || JSON.stringify(s.json) != JSON.stringify(want))
        throw new Error(`events: step ${V + 1 + i} is ${JSON.stringify(s.json)} from ${s.clientID}; the commit ${c.ref} answered ${JSON.stringify(want)}`)
      commitStats.ownEventsChecked++
    }
    let rest = this.buffer.slice(W - V)
    let plugin = collabPlugin(state), cs = plugin.getState(state), unconf = cs.unconfirmed, n = unconf.length, k = c.k
    if (n < k || c.stepObjs.some((s, i) => unconf[i].step !== s))
      throw new Error(`the commit's ${k} steps are not the first of the ${n} unconfirmed`)
    let Rebaseable = n ? unconf[0].constructor : null, CollabState = cs.constructor
    let kept = []
    for (let i = 0; i < k; i++) if (!a.dropped.includes(i)) kept.push(i)
    if (kept.length != a.steps.length) throw new Error(`commit ${c.ref}: ${k} steps, ${a.steps.length} kept and ${a.dropped.length} dropped`)
    let tr = state.tr
    for (let i = n - 1; i >= 0; i--) tr.step(unconf[i].inverted)
    for (let s of others) tr.step(Step.fromJSON(this.h.schema, s.json))
    a.steps.forEach((json, m) => {
      let result = tr.maybeStep(Step.fromJSON(this.h.schema, json))
      if (result.failed) throw new Error(`commit ${c.ref}: step ${F + 1 + m} of the answer does not apply to the server's document at ${F + m}: ${result.failed}: ${JSON.stringify(json)}`)
      // The server's step is the committed one, rebased: its mirror.
      tr.mapping.setMirror(n - 1 - kept[m], tr.steps.length - 1)
    })
    let remaining = []
    for (let i = k; i < n; i++) {
      let mapped = unconf[i].step.map(tr.mapping.slice(n - i))
      if (mapped && !tr.maybeStep(mapped).failed) {
        tr.mapping.setMirror(n - 1 - i, tr.steps.length - 1)
        remaining.push(new Rebaseable(mapped, mapped.invert(tr.docs[tr.docs.length - 1]), unconf[i].origin))
      }
    }
    tr.setMeta(plugin, new CollabState(W, remaining)).setMeta("rebased", n).setMeta("addToHistory", false)
    this.apply(guardNodeSelection(state, tr))
    if (getVersion(this.state) != W || unconfirmed(this.state) != remaining.length)
      throw new Error(`after commit ${c.ref}: version ${getVersion(this.state)}, ${unconfirmed(this.state)} unconfirmed; want ${W}, ${remaining.length}`)
    if (n > k) commitStats.rebasedOnAnswer++
    stats.stepsAccepted += a.steps.length
    this.accepted += a.steps.length
    stats.stepsDropped += a.dropped.length + (n - k - remaining.length)
    this.unsentComments.splice(0, c.sent)
    this.commentVersion = Math.max(this.commentVersion, a.commentVersion)
    this.buffer = rest
    this.lastCommit = { from: F, version: W, steps: a.steps }
    this.inflight = null
  }

  // maybeSend sends a commit of what is sendable when none is out.
  maybeSend() {
    if (this.inflight || this.stopped || this.buffer.length) return
    let sendable = this.sendable()
    if (!sendable) return
    let { steps, comments, sent } = sendable
    let version = getVersion(this.state)
    let ref = `${this.clientID}-${++this.commits}`
    let stepObjs = steps ? steps.steps.slice() : []
    let body = JSON.stringify({ version, ref, clientID: this.clientID, steps: stepObjs.map(s => s.toJSON()), comment: comments })
    this.inflight = { ref, version, k: stepObjs.length, stepObjs, body, sent, answer: null, waited: false }
    this.doCommit(this.inflight).catch(e => this.h.fail(e, this))
  }

  // post sends a commit's body and returns its answer.
  async post(c) {
    await this.delay()
    await this.gate()
    if (this.stopped) return null
    let url = this.url("/commits")
    let { status, text } = await request("POST", url, c.body, null, this)
    await this.delay()
    if (this.stopped) return null
    if (status != 200) throw new HTTPError("POST", url, status, c.body.slice(0, 300) + " → " + text)
    let a = parseJSON("POST commits", text)
    let bad = msg => { throw new Error(`commit ${c.ref} at version ${c.version} with ${c.k} steps: ${msg}: ${text.slice(0, 500)}`) }
    if (!Number.isInteger(a.from) || a.from < c.version) bad("from is before the commit's version")
    if (!Array.isArray(a.steps) || !Array.isArray(a.dropped)) bad("steps or dropped is not a list")
    if (a.version != a.from + a.steps.length) bad("version is not from + the kept steps")
    if (a.steps.length + a.dropped.length != c.k) bad("kept + dropped is not the steps sent")
    if (a.dropped.some((d, i) => !Number.isInteger(d) || d < 0 || d >= c.k || (i && d <= a.dropped[i - 1]))) bad("dropped is not increasing indexes of the steps")
    if (!Number.isInteger(a.commentVersion)) bad("commentVersion is not a number")
    return a
  }

  async doCommit(c) {
    stats.posts++
    stats.stepsSent += c.k
    stats.maxPostSteps = Math.max(stats.maxPostSteps, c.k)
    commitStats.commits++
    let a = await this.post(c)
    if (!a) return
    // A lost answer (the commit kept steps: a commit that kept none has
    // no record, and would be rebased again): send it again.
    if (a.steps.length && this.commitRng.chance(0.05)) {
      commitStats.resends++
      let again = await this.post(c)
      if (!again) return
      if (!sameAnswer(a, again))
        throw new Error(`commit ${c.ref} sent again answered differently:\nrequest POST ${this.url("/commits")} ${c.body}\n` +
          `first answer ${JSON.stringify(a)}\nsecond answer ${JSON.stringify(again)}`)
      a = again
    }
    if (a.from > c.version) commitStats.stale++
    if (a.dropped.length) {
      commitStats.withDrops++
      commitStats.stepsDroppedByServer += a.dropped.length
    }
    c.answer = a
    this.process()
  }

  localEdit(tr) {
    this.apply(tr)
    this.maybeSend()
  }

  commentsChanged() { this.maybeSend() }

  quiet() { return !this.inflight && !this.paused() && !this.sendable() && !this.buffer.length }
  describe() { return this.inflight ? `commit ${this.inflight.ref} out${this.inflight.answer ? ", answered" : ""}` : "poll" }
}

// ---------------------------------------------------------------------------
// WebSocket editors

// wsStats are the WebSocket editors' totals (summary.ws). Their steps
// also count in stats (stepsSent, stepsAccepted, conflicts …).
const wsStats = {
  editors: 0, submissions: 0, acks: 0, conflicts: 0, messagesSent: 0, messagesReceived: 0,
  // With --faults: errors 503 (the store failed) and the client's notices
  // of them.
  unavailable: 0, unavailableNotices: 0,
  drops: 0, failedConnects: 0, reconnects: 0, resumes: 0, confirmedOnResume: 0, snapshotsOnResume: 0, stepsLost: 0, serverCloses: {},
  presenceSent: 0, presenceReceived: 0, presenceEntries: 0, presenceChecked: 0, presenceUnchecked: 0,
  // Pauses (lags and breaks) disconnect; with --history, a resumption
  // answered with a snapshot is the history gone (not counted in
  // snapshotsOnResume, its lost steps not in stepsLost).
  pauses: 0, historyGone: 0,
}

// wsLib is what WebSocket editors use, once loadWS has run: CollabClient
// and commentsKey from the demo page's modules, and Socket, the base of
// the WebSocket class each editor gives its client.
let wsLib = null

// resolveHook is a module resolution hook (node:module register) that
// resolves the bare imports of modules under `from` as if `to` made them.
const resolveHook = `
let from, to
export function initialize(data) { from = data.from; to = data.to }
export async function resolve(specifier, context, next) {
  if (context.parentURL && context.parentURL.startsWith(from) && !/^(\\.|\\/|[a-zA-Z][a-zA-Z0-9+.-]*:)/.test(specifier)) {
    try { return await next(specifier, { ...context, parentURL: to }) } catch {}
  }
  return next(specifier, context)
}`

// loadWS loads the ws package and the demo page's client module. The
// client's package imports (prosemirror-state …) resolve from this
// folder: client and harness share one copy of each package, so that the
// harness's commands work on the client's states.
async function loadWS(clientPath) {
  let clientURL = pathToFileURL(clientPath)
  register("data:text/javascript," + encodeURIComponent(resolveHook),
    { data: { from: new URL("..", clientURL).href, to: import.meta.url } })
  let [{ default: WebSocket }, { CollabClient }, { commentsKey }] = await Promise.all([
    import("ws"), import(clientURL.href), import(new URL("comments.js", clientURL).href)])
  if (!(commentsKey instanceof PluginKey))
    throw new Error(`${clientPath} loads another copy of prosemirror-state than the harness`)
  wsLib = { CollabClient, commentsKey, Socket: socketClass(WebSocket) }
}

// socketClass returns the base of the WebSocket classes client.js opens:
// a ws socket that delays each message either way (in order, as TCP
// keeps it) and shows its editor every message. Each editor's class is a
// subclass whose static editor is the editor.
function socketClass(WS) {
  return class Socket extends WS {
    static editor = null

    constructor(url, protocols) {
      let editor = new.target.editor
      if (!editor) throw new Error("a WebSocket without its editor")
      super(url, protocols, editor.h.flags.forwarded ? { headers: { "X-Forwarded-For": editor.address } } : {})
      this.editor = editor
      this.sendAt = this.receiveAt = 0 // when the last delayed message goes on
      this.sending = this.receiving = Promise.resolve()
      this.pendingSends = 0
      this.handlers = { message: null, close: null }
      this.listening = false
      this.hello = undefined // the hello, once sent
      this.welcomed = false // the hello was answered
      this.submissions = new Map() // id → {version, n}: submissions awaiting an answer
      this.dropped = false // the harness closed it
      // Without a listener ws throws errors; a close event follows them.
      this.on("error", err => { this.lastError = err })
      this.on("close", (code, reason) => editor.socketClosed(this, code, String(reason), this.lastError))
    }

    send(data) {
      this.editor.sent(this, data)
      let at = this.sendAt = Math.max(this.sendAt, Date.now() + this.editor.netDelay())
      this.pendingSends++
      this.sending = this.sending.then(() => sleep(at - Date.now())).then(() => {
        this.pendingSends--
        // A message still on its way when the connection drops is lost.
        if (this.readyState == WS.OPEN) super.send(data)
      }).catch(err => this.editor.h.fail(err, this.editor))
    }

    get onmessage() { return this.handlers.message }
    set onmessage(fn) { this.handle("message", fn) }
    get onclose() { return this.handlers.close }
    set onclose(fn) { this.handle("close", fn) }

    // handle sets the handler of a message or close event, called late
    // (a handler unset meanwhile is not called).
    handle(type, fn) {
      this.handlers[type] = fn
      if (this.listening) return
      this.listening = true
      for (let t of ["message", "close"]) this.addEventListener(t, e => {
        let at = this.receiveAt = Math.max(this.receiveAt, Date.now() + this.editor.netDelay())
        this.receiving = this.receiving.then(() => sleep(at - Date.now())).then(() => {
          let handler = this.handlers[t]
          if (!handler) return
          if (t == "message") this.editor.received(this, e, handler)
          else handler(e)
        }).catch(err => this.editor.h.fail(err, this.editor))
      })
    }
  }
}

// WSEditor is a WebSocket client: the demo page's CollabClient without
// a view. The harness sees every message it sends and receives and keeps
// what it needs to check them: the document as pushed (its confirmed
// version) and the document sizes at the last versions.
class WSEditor extends Editor {
  constructor(h, group, index, clientID) {
    super(h, group, index, clientID)
    this.transport = "ws"
    this.client = null
    this.name = `editor ${index} ✍🏽`
    this.color = "#" + ((Math.imul(index + 1, 0x9e3779b1) >>> 8) & 0xffffff).toString(16).padStart(6, "0")
    this.onlines = 0
    this.pushed = null // the document at pushedVersion, from the snapshot and the pushed steps
    this.pushedVersion = -1
    this.sizes = new Map() // version → document size, for the last keptSizes versions
    this.dropIn = this.nextDrop()
    this.holding = false // hold runs
    this.unanswered = 0 // steps of the submissions unanswered when the last connection closed
    this.presenceFrom = new Set() // client ids whose selection came
    wsStats.editors++
  }

  get state() { return this.client && this.client.state }
  get commentVersion() { return wsLib.commentsKey.getState(this.state).version }

  async start() {
    await this.delay()
    let url = this.base.replace(/^http/, "ws") + `/docs/${encodeURIComponent(this.group.id)}/ws`
    let loaded
    let ready = new Promise(resolve => { loaded = resolve })
    let editor = this
    this.client = new wsLib.CollabClient({
      url, schema: this.h.schema, clientID: this.clientID, name: this.name, color: this.color, token: authToken,
      WebSocket: class extends wsLib.Socket { static editor = editor },
      onState: (state, replaced) => { if (replaced) loaded() },
      onStatus: ({ status }) => {
        if (status == "online" && ++this.onlines > 1) wsStats.reconnects++
      },
      // Notices are refusals and reloads: none is expected, except with
      // --faults the store's failures (503), which the client tries again.
      onNotice: text => {
        if (this.h.flags.faults && /\(503\)/.test(text)) wsStats.unavailableNotices++
        else this.h.fail(new Error(`client notice: ${text}`), this)
      },
    })
    await ready
    this.editLoop().catch(e => this.h.fail(e, this))
  }

  // hold disconnects the client once it is online with no submission in
  // flight, and connects again when the pause is over: it resumes at its
  // version (behind the history after a lag: the server sends a
  // snapshot).
  hold() {
    if (this.holding) return
    this.holding = true
    this.doHold().catch(e => this.h.fail(e, this)).finally(() => { this.holding = false })
  }

  async doHold() {
    // (A connection the server is closing is left to close: its client
    // reconnects, and is dropped then.)
    let client = this.client
    let ready = () => client.ws && client.ws.readyState == client.ws.OPEN && client.welcomed && !client.inFlight
    while (this.paused() && !ready()) await sleep(5)
    if (!this.paused()) return
    client.ws.dropped = true
    wsStats.pauses++
    client.drop()
    await this.gate()
    if (this.stopped) return
    client.connect()
  }

  select(selection) { this.client.dispatch(this.state.tr.setSelection(selection)) }

  localEdit(tr) {
    this.client.dispatch(tr)
    if (--this.dropIn <= 0 && this.h.editsLeft()) this.drop()
  }

  commentIDs() { return wsLib.commentsKey.getState(this.state).decos.find().map(d => d.spec.comment.id) }
  addComment(c) { this.client.dispatch(this.state.tr.setMeta(wsLib.commentsKey, { type: "add", ...c })) }
  deleteComment(id) { this.client.dispatch(this.state.tr.setMeta(wsLib.commentsKey, { type: "delete", id })) }

  // nextDrop returns how many more edits until the connection is dropped.
  nextDrop() {
    let every = this.h.flags.reconnectEvery
    return every > 0 ? Math.max(1, Math.round(every / 2 + this.netRng.next() * every)) : Infinity
  }

  // drop closes the client's connection under it, abruptly or with a
  // close handshake; the client must resume at its version. Only a
  // welcomed connection is dropped (each drop is then one reconnection).
  drop() {
    let ws = this.client.ws
    if (!ws || !this.client.welcomed || ws.readyState != ws.OPEN) {
      this.dropIn = 1 // at the next edit
      return
    }
    this.dropIn = this.nextDrop()
    ws.dropped = true
    wsStats.drops++
    if (this.netRng.chance(0.5)) ws.terminate()
    else ws.close(4000, "dropped by the harness")
  }

  quiet() {
    let ws = this.client.ws
    return this.client.synced && !!ws && ws.pendingSends == 0 && !this.paused()
  }

  sendable() { return sendableSteps(this.state) || wsLib.commentsKey.getState(this.state).unsentEvents().length > 0 }
  describe() { return this.client.ws ? (this.client.welcomed ? "online" : "connecting") : "offline" }

  stop() {
    this.stopped = true
    if (this.client) this.client.close()
  }

  // guard runs a check, failing the run when it throws (checks run in
  // socket callbacks, where an exception would go nowhere).
  guard(f) {
    try {
      return f()
    } catch (e) {
      this.h.fail(e, this)
      return null
    }
  }

  socketClosed(ws, code, reason, err) {
    this.unanswered = 0
    for (let sub of ws.submissions.values()) this.unanswered += sub.n
    if (ws.dropped || this.stopped) return
    // A server that died (--faults): the client reconnects with back-off.
    // A hello that met the store's failure (503) closes with 1011.
    if (this.h.flags.faults && (code == 1006 || code == 1011) && !ws.welcomed) { wsStats.failedConnects++; return }
    // A server draining refuses a connection with 1012 before its welcome.
    if (code == 1012 && !ws.welcomed) { wsStats.failedConnects++; return }
    wsStats.serverCloses[code] = (wsStats.serverCloses[code] || 0) + 1
    // 4008 (too slow) is back-pressure doing its job, 1012 (service
    // restart) a server draining; any other close is the server's or the
    // network's failure.
    if (code != 4008 && code != 1012 && !(this.h.flags.faults && code == 1006))
      this.h.fail(new Error(`the connection closed with ${code} ${JSON.stringify(reason)}${err ? ` (${err.message})` : ""}`), this)
  }

  // sent checks a message the client sends (on ws, before its delay).
  sent(ws, data) {
    if (this.stopped) return
    this.guard(() => {
      wsStats.messagesSent++
      let msg = JSON.parse(data), state = this.state
      let bad = why => { throw new Error(`client sent ${why}: ${data.slice(0, 300)}`) }
      if (ws.hello === undefined) {
        if (msg.type != "hello") bad("a message before its hello")
        ws.hello = msg
        if (msg.clientID !== this.clientID) bad("another client id")
        if (!state) {
          if (msg.version !== null) bad("a first hello with a version")
        } else {
          // A reconnection resumes at the client's version.
          if (msg.version !== getVersion(state) || msg.commentVersion !== this.commentVersion)
            bad(`a hello at another version than its own (${getVersion(state)}, comment version ${this.commentVersion})`)
          wsStats.resumes++
        }
        return
      }
      switch (msg.type) {
        case "steps": {
          let n = msg.steps.length, events = msg.comment.length
          if (msg.version !== getVersion(state) || msg.version !== this.pushedVersion) bad(`steps not at its version ${getVersion(state)}`)
          if (msg.clientID !== this.clientID) bad("steps with another client id")
          if (n > unconfirmed(state) || n + events == 0) bad(`${n} steps with ${unconfirmed(state)} unconfirmed`)
          if (ws.submissions.has(msg.id)) bad("a submission id twice")
          ws.submissions.set(msg.id, { version: msg.version, n })
          wsStats.submissions++
          stats.stepsSent += n
          stats.maxPostSteps = Math.max(stats.maxPostSteps, n)
          break
        }
        case "presence": {
          // In the document at the confirmed version.
          let size = this.sizes.get(msg.version)
          if (msg.version !== this.pushedVersion || size == null) bad(`presence not at its version ${this.pushedVersion}`)
          if (!inDoc(msg.anchor, size) || !inDoc(msg.head, size)) bad(`presence outside the document (size ${size})`)
          wsStats.presenceSent++
          break
        }
        case "ping": break
        default: bad("an unexpected message")
      }
    })
  }

  // received checks a server message, lets the client handle it, and
  // checks what the client made of it.
  received(ws, e, handler) {
    if (this.stopped || this.client.ws !== ws) {
      handler(e) // the client ignores it
      return
    }
    let msg = this.guard(() => {
      let msg = JSON.parse(e.data)
      if (msg === null || typeof msg != "object" || typeof msg.type != "string") throw new Error("not a message")
      return msg
    })
    if (!msg) {
      this.h.fail(new Error(`malformed server message: ${String(e.data).slice(0, 300)}`), this)
      return
    }
    wsStats.messagesReceived++
    let state = this.state
    let before = { version: state ? getVersion(state) : null, unconfirmed: state ? unconfirmed(state) : 0 }
    let own = this.guard(() => this.checkMessage(ws, msg))
    if (own == null) return
    handler(e)
    this.guard(() => this.checkHandled(msg, before, own))
  }

  // checkMessage checks msg against the protocol and what was sent and
  // pushed on ws before it, and keeps the pushed document. It returns
  // how many of a push's steps are the client's own.
  checkMessage(ws, msg) {
    let bad = why => { throw new Error(`server sent ${why}: ${JSON.stringify(msg).slice(0, 500)}`) }
    let isInt = v => Number.isInteger(v) && v >= 0
    if (!ws.welcomed && msg.type != "snapshot" && msg.type != "welcome" && msg.type != "error") bad("a message before answering hello")
    switch (msg.type) {
      case "snapshot": {
        if (ws.welcomed) bad("a second snapshot")
        ws.welcomed = true
        if (!isInt(msg.version) || !isInt(msg.commentVersion) || typeof msg.users != "number" ||
          !Array.isArray(msg.comments) || !Array.isArray(msg.presence) || !msg.doc) bad("a malformed snapshot")
        if (ws.hello.version !== null) {
          if (this.h.flags.history) wsStats.historyGone++
          else wsStats.snapshotsOnResume++
        }
        this.sawUsers(msg.users)
        this.pushed = this.h.schema.nodeFromJSON(msg.doc)
        this.pushedVersion = msg.version
        this.sizes = new Map([[msg.version, this.pushed.content.size]])
        this.checkPresence(msg.version, msg.presence, [], bad)
        return 0
      }
      case "welcome":
        if (ws.welcomed) bad("a second welcome")
        ws.welcomed = true
        if (ws.hello.version === null) bad("a welcome to a hello without a version")
        if (msg.version - (msg.steps || []).length !== ws.hello.version) bad(`a welcome not from the hello's version ${ws.hello.version}`)
        if (!Array.isArray(msg.presence)) bad("a welcome without presence")
        // fall through: a welcome is a push
      case "steps": {
        if (!isInt(msg.version) || !isInt(msg.commentVersion) || typeof msg.users != "number" ||
          !Array.isArray(msg.steps) || !Array.isArray(msg.clientIDs) || !Array.isArray(msg.comment) ||
          msg.clientIDs.length != msg.steps.length) bad("a malformed push")
        if (msg.version - msg.steps.length !== this.pushedVersion) bad(`a push not from the last version pushed, ${this.pushedVersion}`)
        this.sawUsers(msg.users)
        let own = 0
        while (own < msg.clientIDs.length && msg.clientIDs[own] === this.clientID) own++
        if (msg.clientIDs.indexOf(this.clientID, own) >= 0) bad("the client's steps after others'")
        for (let json of msg.steps) {
          this.pushed = Step.fromJSON(this.h.schema, json).apply(this.pushed).doc || bad(`a step that does not apply at ${this.pushedVersion}`)
          this.pushedVersion++
          this.sizes.set(this.pushedVersion, this.pushed.content.size)
          this.sizes.delete(this.pushedVersion - keptSizes)
        }
        for (let ev of msg.comment) {
          if (ev.type == "delete") continue
          if (ev.type != "create" || !isInt(ev.from) || !isInt(ev.to) || ev.from >= ev.to || ev.to > this.pushed.content.size)
            bad(`a comment event outside the document (size ${this.pushed.content.size})`)
        }
        stats.commentEventsReceived += msg.comment.length
        if (msg.type == "welcome") this.checkPresence(msg.version, msg.presence, [], bad)
        return own
      }
      case "ack": case "conflict": {
        let sub = ws.submissions.get(msg.id)
        if (!sub) bad("an answer to no submission")
        ws.submissions.delete(msg.id)
        if (msg.type == "ack") {
          // Its steps and comment events are pushed before it.
          if (!isInt(msg.version) || msg.version < sub.version + sub.n || msg.version > this.pushedVersion) bad("an ack before its steps")
          if (!isInt(msg.commentVersion) || msg.commentVersion > this.commentVersion) bad(`an ack before its comment events (at ${this.commentVersion})`)
          wsStats.acks++
        } else {
          // The steps that beat it are pushed before it.
          if (msg.version !== this.pushedVersion || msg.version <= sub.version) bad(`a conflict at another version than pushed (${this.pushedVersion})`)
          wsStats.conflicts++
          stats.conflicts++
        }
        return 0
      }
      case "presence":
        if (!isInt(msg.version) || msg.version > this.pushedVersion || !Array.isArray(msg.clients) || !Array.isArray(msg.left))
          bad(`a malformed presence (pushed version ${this.pushedVersion})`)
        wsStats.presenceReceived++
        this.checkPresence(msg.version, msg.clients, msg.left, bad)
        return 0
      case "pong":
        return 0
      case "error":
        // With --faults, 503: the server's store failed (for a
        // submission, its steps stay and go again after the client's
        // back-off; for a hello, the connection closes with 1011). Any
        // other error is unexpected: the harness sends nothing to refuse.
        if (!this.h.flags.faults || msg.status !== 503 || typeof msg.message != "string") bad("an unexpected error")
        wsStats.unavailable++
        if (msg.id != null) {
          if (!ws.submissions.has(msg.id)) bad("an error for no submission")
          ws.submissions.delete(msg.id)
        }
        return 0
      default:
        bad("an unexpected message")
    }
  }

  // checkPresence checks other clients' selections at version: from
  // editors of this run with the name and colour they gave (with a
  // token, its name), or, with --others 1, from the server's client of
  // server-side edits (client id "server", data {"server": true}), in
  // the document.
  checkPresence(version, clients, left, bad) {
    let size = this.sizes.get(version)
    for (let c of clients) {
      wsStats.presenceEntries++
      if (c.clientID === "server" && this.h.flags.others) {
        if (c.color !== null || !c.data || c.data.server !== true) bad(`the server client's presence ${JSON.stringify(c)}`)
      } else {
        let from = this.h.byClientID.get(c.clientID)
        if (c.clientID === this.clientID || !(from instanceof WSEditor) || from.group !== this.group) bad(`presence of client ${c.clientID}`)
        // With a token, an editor is shown by its principal's name.
        let name = authToken ? tokenName(authToken) : from.name
        if (c.name !== name || c.color !== from.color) bad(`presence of ${c.clientID} not named ${name}, ${from.color}`)
      }
      if ((c.anchor === null) != (c.head === null)) bad("presence with one of anchor and head null")
      if (c.anchor === null) continue
      if (size == null) {
        wsStats.presenceUnchecked++
        continue
      }
      if (!inDoc(c.anchor, size) || !inDoc(c.head, size)) bad(`presence outside the document at version ${version} (size ${size})`)
      wsStats.presenceChecked++
      this.presenceFrom.add(c.clientID)
    }
    for (let id of left) {
      if (id === "server" && this.h.flags.others) continue
      let from = this.h.byClientID.get(id)
      if (!(from instanceof WSEditor) || from.group !== this.group) bad(`client ${id} leaving`)
    }
  }

  // checkHandled checks the client's state after it handled msg: at the
  // pushed version, with the pushed document when nothing is unconfirmed,
  // and its own steps confirmed.
  checkHandled(msg, before, own) {
    let state = this.state
    if (msg.type == "snapshot") {
      if (before.version === null) {
        // The first load.
      } else if (this.h.flags.history) {
        let doubt = Math.min(this.unanswered, before.unconfirmed)
        stats.stepsInDoubt += doubt
        this.inDoubt += doubt
        stats.stepsLostInReloads += before.unconfirmed - doubt
      } else {
        wsStats.stepsLost += before.unconfirmed
      }
      this.unanswered = 0
    } else if (msg.type != "steps" && msg.type != "welcome") {
      return
    }
    // A welcome confirms what the server took of the unanswered
    // submissions; the client sends the rest again.
    if (msg.type == "welcome") this.unanswered = 0
    if (getVersion(state) != this.pushedVersion)
      throw new Error(`after a ${msg.type} to version ${msg.version} the client is at version ${getVersion(state)}`)
    let left = unconfirmed(state)
    if (!left && !state.doc.eq(this.pushed))
      throw new Error(`at version ${this.pushedVersion} the client's document is not the pushed one`)
    if (msg.type == "snapshot") return
    let dropped = before.unconfirmed - own - left
    if (dropped < 0) throw new Error(`${before.unconfirmed} unconfirmed steps, ${own} confirmed, ${left} left`)
    stats.stepsAccepted += own
    this.accepted += own
    stats.stepsDropped += dropped
    stats.stepsReceived += msg.steps.length - own
    if (before.unconfirmed > own && msg.steps.length > own) stats.rebased++
    if (msg.type == "welcome") wsStats.confirmedOnResume += own
  }
}

// keptSizes is how many versions' document sizes an editor keeps.
const keptSizes = 1000

// inDoc tells whether pos is a position of a document of size size.
function inDoc(pos, size) { return Number.isInteger(pos) && pos >= 0 && pos <= size }

// ---------------------------------------------------------------------------
// The run

// DocGroup is a document and its editors.
class DocGroup {
  constructor(h, id) {
    this.h = h
    this.id = id
    this.editors = []
    this.edits = 0
    this.initial = null // the server's state when the run began
    this.result = null // and when it ended
    // Breaks: whether one is on, how many are left, and the document's
    // edit count at which the next begins (evenly spread over its share
    // of the edits; the run's edits can end before).
    this.onBreak = false
    this.breaksLeft = h.flags.breaks
    this.breakEvery = h.flags.edits / h.flags.docs.length / (h.flags.breaks + 1)
    this.nextBreakAt = this.breakEvery
    this.breaks = 0
    this.unloads = 0
  }

  url(base = this.h.flags.url) { return `${base}/docs/${encodeURIComponent(this.id)}` }

  // version returns the latest version its editors know of.
  version() {
    let v = 0
    for (let e of this.editors) if (e.state) v = Math.max(v, getVersion(e.state))
    return v
  }

  async serverState(base) {
    let url = this.url(base)
    let { status, text } = await request("GET", url)
    if (status != 200) throw new HTTPError("GET", url, status, text)
    return parseJSON("GET /docs/{id}", text)
  }

  // serverStates returns the state of every server, the first's first.
  serverStates() { return Promise.all(this.h.flags.urls.map(u => this.serverState(u))) }

  // takeBreak pauses every editor of the document until the server has
  // unloaded it: GET /docs shows no users for it (a loaded document
  // counts the users of the last minute).
  async takeBreak() {
    this.onBreak = true
    this.breaksLeft--
    this.nextBreakAt += this.breakEvery
    this.breaks++
    stats.breaks++
    for (let e of this.editors) e.hold()
    let deadline = Date.now() + 30000
    for (let base of this.h.flags.urls) {
      let url = `${base}/docs`
      for (;;) {
        let { status, text } = await request("GET", url)
        if (status != 200) throw new HTTPError("GET", url, status, text)
        let doc = parseJSON("GET /docs", text).find(d => d.id == this.id)
        if (!doc) throw new Error(`GET /docs does not list ${this.id}`)
        if (doc.users == 0) break
        if (Date.now() > deadline) throw new Error(`document ${this.id} still loaded (${doc.users} users) 30 s into a break`)
        await sleep(20)
      }
    }
    this.unloads++
    stats.unloadsSeen++
    this.onBreak = false
  }
}

class Harness {
  constructor(flags) {
    this.flags = flags
    this.schema = loadSchema("basic")
    this.ops = makeOps(this.schema)
    this.groups = flags.docs.map(id => new DocGroup(this, id))
    this.editors = []
    this.byClientID = new Map()
    this.failure = null
    this.failed = new Promise(resolve => { this.onFail = resolve })
  }

  editsLeft() { return stats.edits < this.flags.edits }
  countEdit(editor, name) {
    stats.edits++
    editor.group.edits++
    stats.opCounts[name] = (stats.opCounts[name] || 0) + 1
  }

  fail(err, editor) {
    if (this.failure) return
    let who = editor ? `editor ${editor.index} (client ${editor.clientID})` : "harness"
    this.failure = `${who}: ${err && err.stack || err}`
    this.onFail()
  }

  log(msg) { process.stderr.write(`collab-editors: ${msg}\n`) }

  async run() {
    let f = this.flags, t0 = Date.now()
    this.log(`seed ${f.seed}, ${f.editors} editors (${f.ws} over WebSocket${f.commit ? `, ${f.commit} in commit mode` : ""}), ${f.edits} edits, ` +
      `doc ${f.docs.map(d => JSON.stringify(d)).join(", ")} at ${f.urls.join(", ")}` +
      (f.lag ? `, ${f.lag} lagging per document beyond history ${f.history}` : "") + (f.breaks ? `, ${f.breaks} breaks per document` : ""))
    if (f.ws) await loadWS(f.client)
    for (let g of this.groups) g.initial = await g.serverState()
    // Client ids: random uint32s, the first always beyond 2^31 (beyond
    // int32, as the demo's Math.random() * 0xFFFFFFFF often is). Editor
    // i edits document i mod the number of documents.
    let idRng = new Rand(f.seed, 999), ids = new Set()
    while (ids.size < f.editors) ids.add(ids.size == 0 ? 0x80000000 + idRng.int(0x7fffffff) : idRng.int(0xffffffff) + 1)
    this.editors = [...ids].map((id, i) => {
      let group = this.groups[i % this.groups.length]
      return i < f.ws ? new WSEditor(this, group, i, id)
        : i >= f.editors - f.commit ? new CommitEditor(this, group, i, id) : new PollEditor(this, group, i, id)
    })
    for (let e of this.editors) this.byClientID.set(e.clientID, e)
    await Promise.race([Promise.all(this.editors.map(e => e.start())), this.failed])

    // Edit (with breaks), then drain.
    let lastLog = 0
    let deadline = null, done = false
    while (!this.failure) {
      await Promise.race([sleep(50), this.failed])
      if (this.failure) break
      if (Date.now() - lastLog > 2000) {
        lastLog = Date.now()
        this.log(`${stats.edits} edits, ${stats.stepsAccepted} steps accepted, ${stats.conflicts} conflicts, ${stats.posts} posts` +
          (f.ws ? `, ${wsStats.submissions} WebSocket submissions, ${wsStats.drops} drops` : "") +
          (f.commit ? `, ${commitStats.commits} commits (${commitStats.stale} stale, ${commitStats.withDrops} with drops, ${commitStats.resends} resent)` : "") +
          (f.lag || f.breaks ? `, ${stats.lags} lags, ${stats.historyGone + wsStats.historyGone} history gone, ${stats.unloadsSeen} unloads` : ""))
      }
      // Breaks not taken when the edits are done (a document can get
      // less than its share) are taken in the drain.
      for (let g of this.groups) {
        if (!g.onBreak && g.breaksLeft > 0 && (g.edits >= g.nextBreakAt || !this.editsLeft())) g.takeBreak().catch(e => this.fail(e))
      }
      if (this.editsLeft()) continue
      if (deadline == null) deadline = Date.now() + f.drainTimeout * 1000
      if (this.editors.every(e => e.quiet())) {
        let states = await Promise.all(this.groups.map(g => g.serverStates()))
        if (this.editors.every(e => states[this.groups.indexOf(e.group)].every(server =>
          getVersion(e.state) == server.version && e.commentVersion == server.commentVersion))) {
          this.groups.forEach((g, i) => { g.result = states[i][0] })
          done = true
          break
        }
      }
      if (Date.now() > deadline) {
        this.fail(new Error(`drain did not finish in ${f.drainTimeout} s: ` + this.editors.map(e =>
          `editor ${e.index} (${e.group.id}) ${e.describe()} version ${getVersion(e.state)} commentVersion ${e.commentVersion} ` +
          `sendable ${!!e.sendable()} paused ${e.paused()}`).join("; ")))
        break
      }
    }
    for (let e of this.editors) e.stop()
    if (!done) {
      for (let g of this.groups) {
        try { g.result = await g.serverState() } catch (e) { this.fail(e) }
      }
    }

    // Report every editor, diverged or not.
    let diverged = [], out = []
    for (let e of this.editors) {
      if (!e.state) continue
      let result = e.group.result
      let doc = JSON.stringify(e.state.doc.toJSON())
      if (!result || doc != JSON.stringify(result.doc) || getVersion(e.state) != result.version) diverged.push(e.clientID)
      out.push(JSON.stringify({
        editor: e.index, docID: e.group.id, clientID: e.clientID, transport: e.transport, version: getVersion(e.state),
        mode: e.mode, commentVersion: e.commentVersion, sendable: !!sendableSteps(e.state), accepted: e.accepted, inDoubt: e.inDoubt,
        maxUsers: e.maxUsers, presenceFrom: e.presenceFrom ? [...e.presenceFrom] : undefined,
        doc: e.state.doc.toJSON(),
      }))
    }
    let all = this.groups.every(g => g.result)
    let sum = field => all ? this.groups.reduce((n, g) => n + field(g), 0) : null
    let summary = {
      seed: f.seed, editors: f.editors, ...stats, ws: wsStats, commit: commitStats,
      // Versions summed over the documents.
      initialVersion: sum(g => g.initial.version),
      serverVersion: sum(g => g.result.version),
      docs: this.groups.map(g => ({
        id: g.id, editors: g.editors.length, edits: g.edits, breaks: g.breaks, unloads: g.unloads,
        initialVersion: g.initial.version, serverVersion: g.result ? g.result.version : null,
        serverCommentVersion: g.result ? g.result.commentVersion : null,
        serverComments: g.result ? g.result.comments.length : null,
        serverDocSize: g.result ? this.schema.nodeFromJSON(g.result.doc).content.size : null,
      })),
      diverged, ms: Date.now() - t0,
      error: this.failure,
    }
    let moved = summary.serverVersion - summary.initialVersion
    // With --others 1, writers besides the editors (a backend's restores)
    // add steps too: the versions move on by at least the editors' steps.
    if (all && !summary.error && (moved < stats.stepsAccepted || !this.flags.others && moved > stats.stepsAccepted + stats.stepsInDoubt))
      summary.error = `the servers moved from versions ${summary.initialVersion} to ${summary.serverVersion} (summed), ` +
        `the editors had ${stats.stepsAccepted} steps accepted (and ${stats.stepsInDoubt} in doubt)`
    // Every local step is accepted, dropped by a rebase, lost in a reload
    // or in doubt, once.
    if (all && !summary.error && stats.stepsLocal != stats.stepsAccepted + stats.stepsDropped + stats.stepsLostInReloads + stats.stepsInDoubt)
      summary.error = `${stats.stepsLocal} local steps, but ${stats.stepsAccepted} accepted + ${stats.stepsDropped} dropped in rebases + ` +
        `${stats.stepsLostInReloads} lost in reloads + ${stats.stepsInDoubt} in doubt`
    if (!summary.error && wsStats.stepsLost)
      summary.error = `${wsStats.stepsLost} unconfirmed steps lost to snapshots`
    // Every drop (and every 4008, every pause) is one reconnection,
    // resumed at the client's version.
    let closes = wsStats.drops + wsStats.pauses + (wsStats.serverCloses[4008] || 0) + (wsStats.serverCloses[1006] || 0) +
      (wsStats.serverCloses[1012] || 0)
    if (!summary.error && (wsStats.reconnects != closes || wsStats.resumes < closes))
      summary.error = `${closes} connections dropped or paused, ${wsStats.reconnects} reconnections, ${wsStats.resumes} resumed`
    if (all && !summary.error) {
      for (let g of this.groups) {
        let size = this.schema.nodeFromJSON(g.result.doc).content.size
        let bad = g.result.comments.filter(c => !(Number.isInteger(c.from) && Number.isInteger(c.to) && c.from >= 0 && c.from < c.to && c.to <= size))
        if (bad.length) summary.error = `the server's comments out of document ${g.id} (size ${size}): ${JSON.stringify(bad)}`
      }
    }
    out.push(JSON.stringify({ summary }))
    // process.exit drops what a pipe has not taken yet: exit once written.
    await new Promise(resolve => process.stdout.write(out.join("\n") + "\n", resolve))
    let ok = !summary.error && !diverged.length
    let msg = `${ok ? "ok" : "FAILED"}: ${stats.edits} edits, ${stats.stepsAccepted} steps accepted, ${stats.conflicts} conflicts, ` +
      `version ${summary.serverVersion}, ${diverged.length} diverged, ${summary.ms} ms` + (summary.error ? `\n${summary.error}` : "")
    await new Promise(resolve => process.stderr.write(`collab-editors: ${msg}\n`, resolve))
    return ok
  }
}

let flags = parseFlags(process.argv.slice(2))
authToken = flags.token
let harness = new Harness(flags)
harness.run().then(ok => process.exit(ok ? 0 : 1), err => {
  process.stderr.write(`collab-editors: ${err && err.stack || err}\n`)
  process.exit(1)
})
