// Comments on ranges of the document, shared through the comment events
// of the collab protocol ({type: "create", id, text, from, to} and
// {type: "delete", id}), as in the ProseMirror collab demo: each comment
// is an inline decoration, mapped through every change, and dropped by
// the mapping when its range collapses. The protocol has no replies, no
// resolving and no author or time fields: formatComment and parseComment
// carry the author and time in the text, readably for other clients.

import { Plugin, PluginKey } from "prosemirror-state"
import { Decoration, DecorationSet } from "prosemirror-view"
import { h } from "./dom.js"

export const commentsKey = new PluginKey("comments")

function commentDeco(from, to, comment) {
  return Decoration.inline(from, to, { class: "pma-comment" }, { comment })
}

function validRange(doc, from, to) {
  return Number.isInteger(from) && Number.isInteger(to) && from >= 0 && from < to && to <= doc.content.size
}

// CommentState is the comments plugin's state: the comments as
// decorations, the comment version the client has seen, and the local
// events not yet accepted by the server.
class CommentState {
  constructor(version, decos, unsent, draft = null) {
    this.version = version
    this.decos = decos
    this.unsent = unsent // [{type: "create", id, text} | {type: "delete", id}]
    this.draft = draft // {from, to}: the range of a comment being written
  }

  // all returns the comments, {id, text, from, to}, in document order.
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
      if (e.type == "delete") {
        events.push({ type: "delete", id: e.id })
      } else {
        let found = this.find(e.id)
        if (found) events.push({ type: "create", id: e.id, text: e.text, from: found.from, to: found.to })
      }
    }
    return events
  }

  apply(tr) {
    let action = tr.getMeta(commentsKey)
    if (!action && !tr.docChanged) return this
    let decos = this.decos.map(tr.mapping, tr.doc)
    let version = this.version, unsent = this.unsent
    let draft = this.draft
    if (draft && tr.docChanged) {
      let from = tr.mapping.map(draft.from, 1), to = tr.mapping.map(draft.to, -1)
      draft = from < to ? { from, to } : null
    }
    if (action) {
      switch (action.type) {
        case "draft":
          draft = validRange(tr.doc, action.from, action.to) ? { from: action.from, to: action.to } : null
          break
        case "add":
          draft = null
          if (validRange(tr.doc, action.from, action.to)) {
            decos = decos.add(tr.doc, [commentDeco(action.from, action.to, { id: action.id, text: action.text })])
            unsent = unsent.concat({ type: "create", id: action.id, text: action.text })
          }
          break
        case "delete": {
          let found = decos.find(undefined, undefined, spec => spec.comment.id == action.id)
          decos = decos.remove(found)
          // A comment never sent needs no delete event: forget its creation.
          if (unsent.some(e => e.type == "create" && e.id == action.id))
            unsent = unsent.filter(e => e.id != action.id)
          else
            unsent = unsent.concat({ type: "delete", id: action.id })
          break
        }
        case "receive":
          // Positions of created comments are in tr.doc already (the
          // caller maps them over its unconfirmed steps).
          for (let e of action.events) {
            let found = decos.find(undefined, undefined, spec => spec.comment.id == e.id)
            if (e.type == "delete") {
              decos = decos.remove(found)
            } else if (e.type == "create" && !found.length && validRange(tr.doc, e.from, e.to)) {
              decos = decos.add(tr.doc, [commentDeco(e.from, e.to, { id: e.id, text: String(e.text) })])
            }
            // An event about one of ours means the server has it: do not
            // send it again (after a reconnection the ack may be lost).
            unsent = unsent.filter(u => u.id != e.id || (u.type == "create") != (e.type == "create"))
          }
          if (action.version != null && action.version > version) version = action.version
          break
        case "sent":
          // The server accepted these events (ack of a submission).
          unsent = unsent.filter(u => !action.events.some(e => e.id == u.id && e.type == u.type))
          if (action.version != null && action.version > version) version = action.version
          break
      }
    }
    if (tr.docChanged && unsent.length) {
      // A new comment whose range collapsed before it was sent is gone.
      unsent = unsent.filter(e => e.type != "create" ||
        decos.find(undefined, undefined, spec => spec.comment.id == e.id).length)
    }
    return new CommentState(version, decos, unsent, draft)
  }

  static init(config) {
    let init = config.comments || { version: 0, comments: [] }
    let decos = []
    for (let c of init.comments)
      if (validRange(config.doc, c.from, c.to)) decos.push(commentDeco(c.from, c.to, { id: c.id, text: String(c.text) }))
    return new CommentState(init.version, DecorationSet.create(config.doc, decos), [])
  }
}

// commentsPlugin keeps the comments. Its state is initialised from the
// `comments: {version, comments: [{from, to, text, id}]}` field of the
// EditorState config.
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

// commentsOf returns the comments of state, {id, text, from, to}, in
// document order (an empty list without the comments plugin).
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
// draft). It fails on empty text or an empty range.
export function createComment(text, range) {
  return (state, dispatch) => {
    let comments = commentsKey.getState(state)
    if (!comments || typeof text != "string" || !text.trim()) return false
    let { from, to } = range || comments.draft || state.selection
    if (from >= to) return false
    if (dispatch) dispatch(state.tr.setMeta(commentsKey, { type: "add", from, to, id: randomID(), text: text.trim() }))
    return true
  }
}

// deleteComment returns a command that deletes the comment with the id.
export function deleteComment(id) {
  return (state, dispatch) => {
    if (!commentsKey.getState(state)?.find(id)) return false
    if (dispatch) dispatch(state.tr.setMeta(commentsKey, { type: "delete", id }))
    return true
  }
}

const signature = /\n\u2014 (.+), (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$/

// formatComment returns the text of a comment by author at time (a
// Date): the body, then a line "— author, 2026-01-02T15:04:05Z".
export function formatComment(body, author, time = new Date()) {
  let name = String(author || "").replace(/\s+/g, " ").trim()
  if (!name) return body
  return `${body}\n\u2014 ${name}, ${time.toISOString().slice(0, 19)}Z`
}

// parseComment splits a comment's text into {body, author, time}:
// author and time (a Date) are null for a text without formatComment's
// last line.
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
