// Real editors against a running collab authority: K editors, each an
// EditorState with the real prosemirror-collab plugin, edit one document
// at once through the real commands (prosemirror-commands,
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
// Usage:
//   node collab-editors.mjs --url http://127.0.0.1:8080 [--doc ID] [--editors 8]
//        [--edits 2000] [--seed N] [--max-delay 20] [--edit-gap 30]
//        [--comments 0.03] [--drain-timeout 60]
//        [--ws 0] [--reconnect-every 50] [--client ../../web/src/client.js]
//
// After --edits local edits in total the editors stop editing and drain:
// they keep syncing until nothing is sendable and every editor is at the
// server's version and comment version. Then stdout gets one line per
// editor, {"editor", "clientID", "transport", "version", "commentVersion",
// "doc"}, and a last line {"summary": {…}}; progress goes to stderr. The
// exit status is 1 when anything went wrong: an HTTP status the demo
// client would not expect, a WebSocket message that breaks the protocol,
// an exception (a received step that does not apply …), a drain that
// does not finish, or an editor whose document differs from the server's
// (those are listed in summary.diverged, never dropped).
//
// Network delays (up to --max-delay ms) apply to every request and
// answer of the long-poll editors and to every message a WebSocket
// editor sends or receives (in order, as over TCP). A WebSocket editor
// drops its connection after every --reconnect-every of its edits or so
// (0: never), half the time abruptly.
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
  }
  let names = {
    "--url": "url", "--doc": "doc", "--editors": "editors", "--edits": "edits", "--seed": "seed",
    "--max-delay": "maxDelay", "--edit-gap": "editGap", "--comments": "comments", "--drain-timeout": "drainTimeout",
    "--ws": "ws", "--reconnect-every": "reconnectEvery", "--client": "client",
  }
  for (let i = 0; i < argv.length; i++) {
    let name = names[argv[i]]
    if (!name || i + 1 >= argv.length) usage(`unknown flag or missing value: ${argv[i]}`)
    let value = argv[++i]
    if (name == "url" || name == "doc" || name == "client") flags[name] = value
    else {
      let n = Number(value)
      if (!Number.isFinite(n) || n < 0) usage(`${argv[i - 1]} wants a non-negative number, not ${value}`)
      flags[name] = n
    }
  }
  if (!flags.url) usage("--url is required")
  flags.url = flags.url.replace(/\/+$/, "")
  if (flags.seed == null) flags.seed = Math.floor(Math.random() * 2 ** 32)
  if (!Number.isInteger(flags.editors) || flags.editors < 1) usage("--editors wants an integer ≥ 1")
  if (!Number.isInteger(flags.ws) || flags.ws > flags.editors) usage("--ws wants an integer from 0 to --editors")
  return flags
}

function usage(msg) {
  process.stderr.write(`collab-editors: ${msg}\n` +
    "usage: node collab-editors.mjs --url URL [--doc ID] [--editors K] [--edits N] [--seed N]\n" +
    "       [--max-delay MS] [--edit-gap MS] [--comments P] [--drain-timeout S]\n" +
    "       [--ws N] [--reconnect-every EDITS] [--client PATH]\n")
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

// request sends one request and returns {status, text}; network failures
// and aborts throw.
async function request(method, url, body, signal) {
  let init = { method, signal }
  if (body != null) {
    init.body = body
    init.headers = { "Content-Type": "application/json" }
  }
  let resp = await fetch(url, init)
  let text = await resp.text()
  return { status: resp.status, text }
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

// stats are the run's totals (the summary line).
const stats = {
  edits: 0, stepsLocal: 0, stepsSent: 0, maxPostSteps: 0, stepsAccepted: 0, posts: 0, conflicts: 0, polls: 0, pollsAborted: 0,
  stepsReceived: 0, stepsDropped: 0, rebased: 0, commandsThrew: 0, commentsCreated: 0, commentsDeleted: 0, commentEventsReceived: 0,
  opCounts: {},
}

// Editor is what every editor does, whatever its transport: random local
// edits and comments through the real commands. A transport's subclass
// keeps `state` and implements select, localEdit, commentIDs, addComment
// and deleteComment.
class Editor {
  constructor(h, index, clientID) {
    this.h = h
    this.index = index
    this.clientID = clientID
    this.rng = new Rand(h.flags.seed, index)
    this.netRng = new Rand(h.flags.seed, 1000 + index)
    this.stopped = false
  }

  netDelay() { return this.netRng.next() * this.h.flags.maxDelay }
  delay() { return sleep(this.netDelay()) }

  async editLoop() {
    let ops = this.h.ops
    while (this.h.editsLeft() && !this.stopped) {
      await sleep(this.rng.next() * 2 * this.h.flags.editGap)
      if (!this.h.editsLeft() || this.stopped) break
      if (this.rng.chance(this.h.flags.comments)) {
        if (this.commentEdit()) this.h.countEdit("comment")
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
        this.h.countEdit(name)
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
  constructor(h, index, clientID) {
    super(h, index, clientID)
    this.transport = "http"
    this.state = null
    this.comm = "start" // "poll" | "send" | "stopped"
    this.pollCtl = null
    this.commentVersion = 0
    this.unsentComments = [] // {type, id, from, to, text} in the current doc's positions
    this.comments = new Map() // id → {from, to}: what this editor believes exists
  }

  url(path = "") { return `${this.h.flags.url}/docs/${encodeURIComponent(this.h.flags.doc)}${path}` }

  async start() {
    await this.delay()
    let { status, text } = await request("GET", this.url())
    if (status != 200) throw new HTTPError("GET", this.url(), status, text)
    let data = parseJSON("GET /docs/{id}", text)
    this.state = EditorState.create({
      doc: this.h.schema.nodeFromJSON(data.doc),
      plugins: [collab({ version: data.version, clientID: this.clientID })],
    })
    this.commentVersion = data.commentVersion
    for (let c of data.comments) this.comments.set(c.id, { from: c.from, to: c.to })
    this.poll()
    this.editLoop().catch(e => this.h.fail(e, this))
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
      this.h.fail(e, this)
    })
  }

  async doPoll(ctl) {
    await this.delay()
    if (ctl.signal.aborted) return
    let version = getVersion(this.state), commentVersion = this.commentVersion
    let url = this.url(`/events?version=${version}&commentVersion=${commentVersion}`)
    stats.polls++
    let { status, text } = await request("GET", url, null, ctl.signal)
    await this.delay()
    // A local edit aborted this poll after its answer came: the demo drops
    // the answer (the send path took over); reading it again costs nothing.
    if (ctl.signal.aborted) { stats.pollsAborted++; return }
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
  }

  receive(version, commentVersion, data) {
    this.checkEvents(version, commentVersion, data)
    // This editor's own steps come back only in POST answers: it never
    // polls while a POST is out.
    if (data.clientIDs.some(id => id == this.clientID))
      throw new Error(`events answer for version ${version} holds this editor's own steps: ${JSON.stringify(data.clientIDs)}`)
    let steps = data.steps.map(j => Step.fromJSON(this.h.schema, j))
    let before = unconfirmed(this.state)
    let tr = receiveTransaction(this.state, steps, data.clientIDs)
    stats.stepsReceived += steps.length
    if (before && tr.docChanged) stats.rebased++
    this.apply(tr)
    // Rebasing drops the unconfirmed steps that no longer apply (typing
    // into text another editor deleted …).
    stats.stepsDropped += before - unconfirmed(this.state)
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
    this.doSend(sendable).catch(e => this.h.fail(e, this))
  }

  async doSend({ steps, comments, sent }) {
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
    let { status, text } = await request("POST", url, body)
    await this.delay()
    if (this.comm == "stopped") return
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
    let before = unconfirmed(this.state)
    let tr = steps ? receiveTransaction(this.state, steps.steps, new Array(n).fill(steps.clientID)) : this.state.tr
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
  quiet() { return this.comm == "poll" && !this.sendable() }
  describe() { return this.comm }

  stop() {
    this.stopped = true
    this.comm = "stopped"
    if (this.pollCtl) this.pollCtl.abort()
  }
}

// ---------------------------------------------------------------------------
// WebSocket editors

// wsStats are the WebSocket editors' totals (summary.ws). Their steps
// also count in stats (stepsSent, stepsAccepted, conflicts …).
const wsStats = {
  editors: 0, submissions: 0, acks: 0, conflicts: 0, messagesSent: 0, messagesReceived: 0,
  drops: 0, reconnects: 0, resumes: 0, confirmedOnResume: 0, snapshotsOnResume: 0, stepsLost: 0, serverCloses: {},
  presenceSent: 0, presenceReceived: 0, presenceEntries: 0, presenceChecked: 0, presenceUnchecked: 0,
}

// wsLib is what WebSocket editors use, once loadWS has run: CollabClient
// and commentsKey from the demo page's modules, and Socket, the
// WebSocket class client.js finds as the global WebSocket.
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
  let Socket = socketClass(WebSocket)
  globalThis.WebSocket = Socket
  wsLib = { CollabClient, commentsKey, Socket }
}

// socketClass returns the WebSocket class client.js opens: a ws socket
// that delays each message either way (in order, as TCP keeps it) and
// shows its editor every message.
function socketClass(WS) {
  return class Socket extends WS {
    static opener = null // the editor whose client is connecting

    constructor(url, protocols) {
      let editor = Socket.opener
      if (!editor) throw new Error("client.js opened a WebSocket outside its editor's connect")
      super(url, protocols)
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
  constructor(h, index, clientID) {
    super(h, index, clientID)
    this.transport = "ws"
    this.client = null
    this.name = `editor ${index} ✍🏽`
    this.color = "#" + ((Math.imul(index + 1, 0x9e3779b1) >>> 8) & 0xffffff).toString(16).padStart(6, "0")
    this.onlines = 0
    this.pushed = null // the document at pushedVersion, from the snapshot and the pushed steps
    this.pushedVersion = -1
    this.sizes = new Map() // version → document size, for the last keptSizes versions
    this.dropIn = this.nextDrop()
    wsStats.editors++
  }

  get state() { return this.client && this.client.state }
  get commentVersion() { return wsLib.commentsKey.getState(this.state).version }

  async start() {
    await this.delay()
    let url = this.h.flags.url.replace(/^http/, "ws") + `/docs/${encodeURIComponent(this.h.flags.doc)}/ws`
    let loaded
    let ready = new Promise(resolve => { loaded = resolve })
    this.client = this.opening(() => new wsLib.CollabClient({
      url, schema: this.h.schema, clientID: this.clientID, name: this.name, color: this.color,
      onState: (state, replaced) => { if (replaced) loaded() },
      onStatus: ({ status }) => {
        if (status == "online" && ++this.onlines > 1) wsStats.reconnects++
      },
      // Notices are refusals and reloads: none is expected.
      onNotice: text => this.h.fail(new Error(`client notice: ${text}`), this),
    }))
    // The client reconnects through connect: the harness's socket class
    // must know whose socket it opens.
    let connect = this.client.connect
    this.client.connect = () => this.opening(() => connect.call(this.client))
    await ready
    this.editLoop().catch(e => this.h.fail(e, this))
  }

  // opening runs f, in which the client opens its socket.
  opening(f) {
    wsLib.Socket.opener = this
    try {
      return f()
    } finally {
      wsLib.Socket.opener = null
    }
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
    return this.client.synced && !!ws && ws.pendingSends == 0
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
    if (ws.dropped || this.stopped) return
    wsStats.serverCloses[code] = (wsStats.serverCloses[code] || 0) + 1
    // 4008 (too slow) is back-pressure doing its job; any other close is
    // the server's or the network's failure.
    if (code != 4008)
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
        if (ws.hello.version !== null) wsStats.snapshotsOnResume++
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
      default:
        // error included: the harness sends nothing to refuse.
        bad("an unexpected message")
    }
  }

  // checkPresence checks other clients' selections at version: from
  // editors of this run with the name and colour they gave, in the
  // document.
  checkPresence(version, clients, left, bad) {
    let size = this.sizes.get(version)
    for (let c of clients) {
      wsStats.presenceEntries++
      let from = this.h.byClientID.get(c.clientID)
      if (c.clientID === this.clientID || !(from instanceof WSEditor)) bad(`presence of client ${c.clientID}`)
      if (c.name !== from.name || c.color !== from.color) bad(`presence of ${c.clientID} not named ${from.name}, ${from.color}`)
      if ((c.anchor === null) != (c.head === null)) bad("presence with one of anchor and head null")
      if (c.anchor === null) continue
      if (size == null) {
        wsStats.presenceUnchecked++
        continue
      }
      if (!inDoc(c.anchor, size) || !inDoc(c.head, size)) bad(`presence outside the document at version ${version} (size ${size})`)
      wsStats.presenceChecked++
    }
    for (let id of left) if (!(this.h.byClientID.get(id) instanceof WSEditor)) bad(`client ${id} leaving`)
  }

  // checkHandled checks the client's state after it handled msg: at the
  // pushed version, with the pushed document when nothing is unconfirmed,
  // and its own steps confirmed.
  checkHandled(msg, before, own) {
    let state = this.state
    if (msg.type == "snapshot") {
      if (before.version !== null) wsStats.stepsLost += before.unconfirmed
    } else if (msg.type != "steps" && msg.type != "welcome") {
      return
    }
    if (getVersion(state) != this.pushedVersion)
      throw new Error(`after a ${msg.type} to version ${msg.version} the client is at version ${getVersion(state)}`)
    let left = unconfirmed(state)
    if (!left && !state.doc.eq(this.pushed))
      throw new Error(`at version ${this.pushedVersion} the client's document is not the pushed one`)
    if (msg.type == "snapshot") return
    let dropped = before.unconfirmed - own - left
    if (dropped < 0) throw new Error(`${before.unconfirmed} unconfirmed steps, ${own} confirmed, ${left} left`)
    stats.stepsAccepted += own
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

class Harness {
  constructor(flags) {
    this.flags = flags
    this.schema = loadSchema("basic")
    this.ops = makeOps(this.schema)
    this.editors = []
    this.byClientID = new Map()
    this.failure = null
    this.failed = new Promise(resolve => { this.onFail = resolve })
  }

  editsLeft() { return stats.edits < this.flags.edits }
  countEdit(name) {
    stats.edits++
    stats.opCounts[name] = (stats.opCounts[name] || 0) + 1
  }

  fail(err, editor) {
    if (this.failure) return
    let who = editor ? `editor ${editor.index} (client ${editor.clientID})` : "harness"
    this.failure = `${who}: ${err && err.stack || err}`
    this.onFail()
  }

  async serverState() {
    let url = `${this.flags.url}/docs/${encodeURIComponent(this.flags.doc)}`
    let { status, text } = await request("GET", url)
    if (status != 200) throw new HTTPError("GET", url, status, text)
    return parseJSON("GET /docs/{id}", text)
  }

  log(msg) { process.stderr.write(`collab-editors: ${msg}\n`) }

  async run() {
    let f = this.flags, t0 = Date.now()
    this.log(`seed ${f.seed}, ${f.editors} editors (${f.ws} over WebSocket), ${f.edits} edits, doc ${JSON.stringify(f.doc)} at ${f.url}`)
    if (f.ws) await loadWS(f.client)
    let initial = await this.serverState()
    // Client ids: random uint32s, the first always beyond 2^31 (beyond
    // int32, as the demo's Math.random() * 0xFFFFFFFF often is).
    let idRng = new Rand(f.seed, 999), ids = new Set()
    while (ids.size < f.editors) ids.add(ids.size == 0 ? 0x80000000 + idRng.int(0x7fffffff) : idRng.int(0xffffffff) + 1)
    this.editors = [...ids].map((id, i) => i < f.ws ? new WSEditor(this, i, id) : new PollEditor(this, i, id))
    for (let e of this.editors) this.byClientID.set(e.clientID, e)
    await Promise.race([Promise.all(this.editors.map(e => e.start())), this.failed])

    // Edit, then drain.
    let lastLog = 0
    let deadline = null, result = null
    while (!this.failure) {
      await Promise.race([sleep(50), this.failed])
      if (this.failure) break
      if (Date.now() - lastLog > 2000) {
        lastLog = Date.now()
        this.log(`${stats.edits} edits, ${stats.stepsAccepted} steps accepted, ${stats.conflicts} conflicts, ${stats.posts} posts` +
          (f.ws ? `, ${wsStats.submissions} WebSocket submissions, ${wsStats.drops} drops` : ""))
      }
      if (this.editsLeft()) continue
      if (deadline == null) deadline = Date.now() + f.drainTimeout * 1000
      let quiet = this.editors.every(e => e.quiet())
      if (quiet) {
        let server = await this.serverState()
        if (this.editors.every(e => getVersion(e.state) == server.version && e.commentVersion == server.commentVersion)) {
          result = server
          break
        }
      }
      if (Date.now() > deadline) {
        this.fail(new Error(`drain did not finish in ${f.drainTimeout} s: ` + this.editors.map(e =>
          `editor ${e.index} ${e.describe()} version ${getVersion(e.state)} commentVersion ${e.commentVersion} sendable ${!!e.sendable()}`).join("; ")))
        break
      }
    }
    for (let e of this.editors) e.stop()
    if (!result) {
      try { result = await this.serverState() } catch (e) { this.fail(e) }
    }

    // Report every editor, diverged or not.
    let serverDoc = result ? JSON.stringify(result.doc) : null
    let diverged = [], out = []
    for (let e of this.editors) {
      if (!e.state) continue
      let doc = JSON.stringify(e.state.doc.toJSON())
      if (doc != serverDoc || getVersion(e.state) != result?.version) diverged.push(e.clientID)
      out.push(JSON.stringify({
        editor: e.index, clientID: e.clientID, transport: e.transport, version: getVersion(e.state), commentVersion: e.commentVersion,
        sendable: !!sendableSteps(e.state), doc: e.state.doc.toJSON(),
      }))
    }
    let summary = {
      seed: f.seed, editors: f.editors, ...stats, ws: wsStats,
      initialVersion: initial.version,
      serverVersion: result ? result.version : null,
      serverCommentVersion: result ? result.commentVersion : null,
      serverComments: result ? result.comments.length : null,
      serverDocSize: result ? this.schema.nodeFromJSON(result.doc).content.size : null,
      diverged, ms: Date.now() - t0,
      error: this.failure,
    }
    if (result && !summary.error && result.version - initial.version != stats.stepsAccepted)
      summary.error = `the server moved from version ${initial.version} to ${result.version}, the editors had ${stats.stepsAccepted} steps accepted`
    // Every local step is accepted or dropped by a rebase, once.
    if (result && !summary.error && stats.stepsLocal != stats.stepsAccepted + stats.stepsDropped)
      summary.error = `${stats.stepsLocal} local steps, but ${stats.stepsAccepted} accepted + ${stats.stepsDropped} dropped in rebases`
    if (!summary.error && wsStats.stepsLost)
      summary.error = `${wsStats.stepsLost} unconfirmed steps lost to snapshots`
    // Every drop (and every 4008) is one reconnection, resumed at the
    // client's version.
    let closes = wsStats.drops + (wsStats.serverCloses[4008] || 0)
    if (!summary.error && (wsStats.reconnects != closes || wsStats.resumes < closes))
      summary.error = `${closes} connections dropped, ${wsStats.reconnects} reconnections, ${wsStats.resumes} resumed`
    if (result && !summary.error) {
      let size = this.schema.nodeFromJSON(result.doc).content.size
      let bad = result.comments.filter(c => !(Number.isInteger(c.from) && Number.isInteger(c.to) && c.from >= 0 && c.from < c.to && c.to <= size))
      if (bad.length) summary.error = `the server's comments out of the document (size ${size}): ${JSON.stringify(bad)}`
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

let harness = new Harness(parseFlags(process.argv.slice(2)))
harness.run().then(ok => process.exit(ok ? 0 : 1), err => {
  process.stderr.write(`collab-editors: ${err && err.stack || err}\n`)
  process.exit(1)
})
