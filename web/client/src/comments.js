// Comments on ranges of the document, shared through the comment events
// of the collab protocol ({type: "create", id, text, from, to} and
// {type: "delete", id}), as in the ProseMirror collab demo: each comment
// is an inline decoration, mapped through every change, and dropped by
// the mapping when its range collapses. Each comment is the root of a
// thread (docs/protocol.md, "Threads"): the server records its author and
// time, whether it is resolved, when it was edited, and its replies; the
// thread operations go out as comment events of their own ("reply",
// "edit", "resolve", "reopen", "deleteReply") and come back as the
// threads' states ("threads" of welcomes and pushes).

import { Plugin, PluginKey } from "prosemirror-state"
import { Decoration, DecorationSet } from "prosemirror-view"
import { h } from "./dom.js"

export const commentsKey = new PluginKey("comments")

// threadOps are the types of the thread operations, which change a
// comment's thread in place.
const threadOps = ["reply", "edit", "resolve", "reopen", "deleteReply"]

function commentDeco(from, to, comment) {
  return Decoration.inline(from, to, { class: comment.resolved ? "pma-comment pma-comment-resolved" : "pma-comment" }, { comment })
}

function validRange(doc, from, to) {
  return Number.isInteger(from) && Number.isInteger(to) && from >= 0 && from < to && to <= doc.content.size
}

// threadOf returns what the plugin keeps of a comment from the server (a
// comment of GET /docs/{id} or of "threads"): everything but its range.
function threadOf(c) {
  let out = { id: c.id, text: String(c.text), author: c.author ?? null, time: c.time ?? null, resolved: !!c.resolved, edited: c.edited ?? null, replies: [] }
  if (Array.isArray(c.replies))
    for (let r of c.replies)
      if (r && Number.isFinite(r.id)) out.replies.push({ id: r.id, text: String(r.text), author: r.author ?? null, time: r.time ?? null, edited: r.edited ?? null })
  return out
}

// applyOp returns the comment c with the thread operation op applied (c
// when it changes nothing), as the server applies it; a reply made here
// has no author or time until the server's state of the thread comes.
function applyOp(c, op) {
  switch (op.type) {
    case "reply":
      if (c.id != op.thread || c.replies.some(r => r.id == op.id)) return c
      return { ...c, replies: c.replies.concat({ id: op.id, text: op.text, author: op.author ?? null, time: null, edited: null }) }
    case "edit":
      if (c.id == op.id) return c.text == op.text ? c : { ...c, text: op.text }
      if (!c.replies.some(r => r.id == op.id && r.text != op.text)) return c
      return { ...c, replies: c.replies.map(r => r.id == op.id ? { ...r, text: op.text } : r) }
    case "resolve":
    case "reopen":
      if (c.id != op.id || c.resolved == (op.type == "resolve")) return c
      return { ...c, resolved: op.type == "resolve" }
    case "deleteReply":
      if (!c.replies.some(r => r.id == op.id)) return c
      return { ...c, replies: c.replies.filter(r => r.id != op.id) }
  }
  return c
}

// sameEvent reports whether the unsent event u is the event e.
function sameEvent(u, e) {
  return u.type == e.type && u.id == e.id && (u.text == null || u.text == e.text)
}

// CommentState is the comments plugin's state: the comments as
// decorations, the comment and thread versions the client has seen, and
// the local events not yet accepted by the server.
class CommentState {
  constructor(version, threadVersion, decos, unsent, draft = null) {
    this.version = version
    this.threadVersion = threadVersion
    this.decos = decos
    // [{type: "create", id, text} | {type: "delete", id} | a thread
    // operation, as sent]
    this.unsent = unsent
    this.draft = draft // {from, to}: the range of a comment being written
  }

  // all returns the comments, {id, text, from, to, author, time,
  // resolved, edited, replies}, in document order.
  all() {
    return this.decos.find().map(d => ({ ...d.spec.comment, from: d.from, to: d.to }))
      .sort((a, b) => a.from - b.from || a.to - b.to || a.id - b.id)
  }

  find(id) {
    return this.decos.find(undefined, undefined, spec => spec.comment.id == id)[0]
  }

  // commentsAt returns the comments covering pos.
  commentsAt(pos) {
    return this.decos.find(pos, pos).map(d => d.spec.comment)
  }

  // unsentEvents returns the events to send, with the current range of
  // each new comment (a new comment whose range collapsed is left out).
  unsentEvents() {
    let events = []
    for (let e of this.unsent) {
      if (e.type == "create") {
        let found = this.find(e.id)
        if (found) events.push({ type: "create", id: e.id, text: e.text, from: found.from, to: found.to })
      } else {
        events.push(e)
      }
    }
    return events
  }

  apply(tr) {
    let action = tr.getMeta(commentsKey)
    if (!action && !tr.docChanged) return this
    let decos = this.decos.map(tr.mapping, tr.doc)
    let version = this.version, threadVersion = this.threadVersion, unsent = this.unsent
    let draft = this.draft
    if (draft && tr.docChanged) {
      let from = tr.mapping.map(draft.from, 1), to = tr.mapping.map(draft.to, -1)
      draft = from < to ? { from, to } : null
    }
    let findIn = id => decos.find(undefined, undefined, spec => spec.comment.id == id)
    // replace puts comment c, the new state of the decoration d, in its
    // place.
    let replace = (d, c) => { decos = decos.remove([d]).add(tr.doc, [commentDeco(d.from, d.to, c)]) }
    // ops applies the operations ops to the comments they touch.
    let ops = list => {
      for (let d of decos.find()) {
        let c = d.spec.comment, next = c
        for (let op of list) next = applyOp(next, op)
        if (next !== c) replace(d, next)
      }
    }
    if (action) {
      switch (action.type) {
        case "draft":
          draft = validRange(tr.doc, action.from, action.to) ? { from: action.from, to: action.to } : null
          break
        case "add":
          draft = null
          if (validRange(tr.doc, action.from, action.to)) {
            decos = decos.add(tr.doc, [commentDeco(action.from, action.to, threadOf({ id: action.id, text: action.text, author: action.author }))])
            unsent = unsent.concat({ type: "create", id: action.id, text: action.text })
          }
          break
        case "delete": {
          decos = decos.remove(findIn(action.id))
          // A comment never sent needs no delete event: forget its
          // creation and the operations on its thread.
          if (unsent.some(e => e.type == "create" && e.id == action.id)) {
            let gone = new Set([action.id])
            for (let e of unsent) if (e.type == "reply" && e.thread == action.id) gone.add(e.id)
            unsent = unsent.filter(e => !gone.has(e.id) && !(e.type == "reply" && e.thread == action.id))
          } else {
            unsent = unsent.concat({ type: "delete", id: action.id })
          }
          break
        }
        case "reply": case "edit": case "resolve": case "reopen": case "deleteReply": {
          let { type, id, thread, text } = action
          let op = { type, id }
          if (type == "reply") op.thread = thread
          if (type == "reply" || type == "edit") op.text = text
          ops([{ ...op, author: action.author }])
          if (type == "deleteReply" && unsent.some(e => e.type == "reply" && e.id == id)) {
            // A reply never sent needs no delete either.
            unsent = unsent.filter(e => e.id != id)
          } else {
            unsent = unsent.concat(op)
          }
          break
        }
        case "receive":
          // Positions of created comments are in tr.doc already (the
          // caller maps them over its unconfirmed steps).
          for (let e of action.events) {
            let found = findIn(e.id)
            if (e.type == "delete") {
              decos = decos.remove(found)
            } else if (e.type == "create" && !found.length && validRange(tr.doc, e.from, e.to)) {
              decos = decos.add(tr.doc, [commentDeco(e.from, e.to, threadOf(e))])
            }
            // An event about one of ours means the server has it: do not
            // send it again (after a reconnection the ack may be lost).
            unsent = unsent.filter(u => u.id != e.id || (u.type == "create") != (e.type == "create"))
          }
          // The threads' states replace ours, with our unsent operations
          // on top.
          for (let c of action.threads || []) {
            let found = findIn(c.id)[0]
            let next = threadOf(c)
            for (let op of unsent) if (threadOps.includes(op.type)) next = applyOp(next, op)
            if (found) replace(found, next)
            else if (validRange(tr.doc, c.from, c.to)) decos = decos.add(tr.doc, [commentDeco(c.from, c.to, next)])
          }
          if (action.version != null && action.version > version) version = action.version
          // A thread version is the server's, even one below ours (the
          // server's state went back: its threads came whole).
          if (Number.isInteger(action.threadVersion)) threadVersion = action.threadVersion
          break
        case "sent":
          // The server accepted these events (ack of a submission).
          unsent = unsent.filter(u => !action.events.some(e => sameEvent(u, e)))
          if (action.version != null && action.version > version) version = action.version
          break
      }
    }
    if (tr.docChanged && unsent.length) {
      // A new comment whose range collapsed before it was sent is gone.
      unsent = unsent.filter(e => e.type != "create" || findIn(e.id).length)
    }
    return new CommentState(version, threadVersion, decos, unsent, draft)
  }

  static init(config) {
    let init = config.comments || { version: 0, comments: [] }
    let decos = []
    for (let c of init.comments)
      if (validRange(config.doc, c.from, c.to)) decos.push(commentDeco(c.from, c.to, threadOf(c)))
    return new CommentState(init.version, init.threadVersion || 0, DecorationSet.create(config.doc, decos), [])
  }
}

// commentsPlugin keeps the comments. Its state is initialised from the
// `comments: {version, threadVersion, comments: [{from, to, text, id, …}]}`
// field of the EditorState config (the comments of GET /docs/{id} or a
// snapshot).
export function commentsPlugin() {
  return new Plugin({
    key: commentsKey,
    state: {
      init: (config, state) => CommentState.init({ comments: config.comments, doc: state.doc }),
      apply: (tr, prev) => prev.apply(tr),
    },
    props: {
      decorations(state) {
        let comments = commentsKey.getState(state)
        if (!comments.draft) return comments.decos
        return comments.decos.add(state.doc, [Decoration.inline(comments.draft.from, comments.draft.to, { class: "pma-comment-draft" })])
      },
    },
  })
}

function randomID() {
  return Math.floor(Math.random() * 0xffffffff) + 1
}

// commentsOf returns the comments of state, {id, text, from, to,
// author, time, resolved, edited, replies: [{id, text, author, time,
// edited}]}, in document order (an empty list without the comments
// plugin). Times are the server's strings (RFC 3339), null when unknown
// (a reply not yet accepted, a comment stored before times).
export function commentsOf(state) {
  return commentsKey.getState(state)?.all() || []
}

// commentDraft returns the range of the comment being written, or null.
export function commentDraft(state) {
  return commentsKey.getState(state)?.draft || null
}

// setCommentDraft returns a command that marks the range {from, to} (by
// default the selection) as the comment being written, highlighted and
// mapped through changes until createComment or clearCommentDraft; it
// fails on an empty range.
export function setCommentDraft(range) {
  return (state, dispatch) => {
    let { from, to } = range || state.selection
    if (!commentsKey.get(state) || from >= to) return false
    if (dispatch) dispatch(state.tr.setMeta(commentsKey, { type: "draft", from, to }))
    return true
  }
}

// clearCommentDraft is a command that drops the draft range.
export function clearCommentDraft(state, dispatch) {
  if (!commentDraft(state)) return false
  if (dispatch) dispatch(state.tr.setMeta(commentsKey, { type: "draft", from: 0, to: 0 }))
  return true
}

// createComment returns a command that comments a range with text: the
// given {from, to}, else the draft, else the selection (and clears the
// draft). It fails on empty text or an empty range. author is shown
// until the server's state of the thread comes (the server records the
// token's principal, whatever the client says).
export function createComment(text, range, { author } = {}) {
  return (state, dispatch) => {
    let comments = commentsKey.getState(state)
    if (!comments || typeof text != "string" || !text.trim()) return false
    let { from, to } = range || comments.draft || state.selection
    if (from >= to) return false
    if (dispatch) dispatch(state.tr.setMeta(commentsKey, { type: "add", from, to, id: randomID(), text: text.trim(), author }))
    return true
  }
}

// deleteComment returns a command that deletes the comment with the id,
// and its thread.
export function deleteComment(id) {
  return (state, dispatch) => {
    if (!commentsKey.getState(state)?.find(id)) return false
    if (dispatch) dispatch(state.tr.setMeta(commentsKey, { type: "delete", id }))
    return true
  }
}

// threadHas returns the comment whose thread the id is of (the comment
// itself, or the one with that reply), or undefined.
function threadHas(state, id) {
  return commentsKey.getState(state)?.decos.find(undefined, undefined,
    spec => spec.comment.id == id || spec.comment.replies.some(r => r.id == id))[0]?.spec.comment
}

// replyToComment returns a command that replies text to the thread of the
// comment id (author as in createComment). It fails on empty text or an
// unknown comment.
export function replyToComment(id, text, { author } = {}) {
  return (state, dispatch) => {
    if (typeof text != "string" || !text.trim() || !commentsKey.getState(state)?.find(id)) return false
    if (dispatch) dispatch(state.tr.setMeta(commentsKey, { type: "reply", id: randomID(), thread: id, text: text.trim(), author }))
    return true
  }
}

// editComment returns a command that sets the text of the comment or
// reply id. The server allows it for its author and for admins.
export function editComment(id, text) {
  return (state, dispatch) => {
    if (typeof text != "string" || !text.trim() || !threadHas(state, id)) return false
    if (dispatch) dispatch(state.tr.setMeta(commentsKey, { type: "edit", id, text: text.trim() }))
    return true
  }
}

// resolveComment and reopenComment return commands that resolve the
// thread of the comment id and reopen it; they fail when it is so
// already.
export function resolveComment(id) { return setResolved(id, true) }
export function reopenComment(id) { return setResolved(id, false) }

function setResolved(id, resolved) {
  return (state, dispatch) => {
    let found = commentsKey.getState(state)?.find(id)
    if (!found || found.spec.comment.resolved == resolved) return false
    if (dispatch) dispatch(state.tr.setMeta(commentsKey, { type: resolved ? "resolve" : "reopen", id }))
    return true
  }
}

// deleteReply returns a command that deletes the reply id. The server
// allows it for its author and for admins.
export function deleteReply(id) {
  return (state, dispatch) => {
    let c = threadHas(state, id)
    if (!c || c.id == id) return false
    if (dispatch) dispatch(state.tr.setMeta(commentsKey, { type: "deleteReply", id }))
    return true
  }
}

const signature = /\n\u2014 (.+), (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$/

// formatComment returns the text of a comment by author at time (a
// Date): the body, then a line "— author, 2026-01-02T15:04:05Z", for
// clients that show the text alone (the server's author and time fields
// are the ones to trust).
export function formatComment(body, author, time = new Date()) {
  let name = String(author || "").replace(/\s+/g, " ").trim()
  if (!name) return body
  return `${body}\n\u2014 ${name}, ${time.toISOString().slice(0, 19)}Z`
}

// parseComment splits a comment's text into {body, author, time}:
// author and time (a Date) are null for a text without formatComment's
// last line (comments written before the server kept them as fields).
export function parseComment(text) {
  let m = signature.exec(text)
  if (!m) return { body: text, author: null, time: null }
  return { body: text.slice(0, m.index), author: m[1], time: new Date(m[2]) }
}

// commentIcon is a speech bubble, the icon of a comment menu item.
export const commentIcon = {
  width: 24, height: 24,
  path: "M3 4h18v12H10l-5 4v-4H3zM5 6v8h2v2l2.5-2H19V6z",
}
