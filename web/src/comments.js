// Comments on ranges of the document, shared through the comment events
// of the collab protocol ({type: "create", id, text, from, to} and
// {type: "delete", id}), as in the ProseMirror collab demo: each comment
// is an inline decoration, mapped through every change, and dropped by
// the mapping when its range collapses.

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
  constructor(version, decos, unsent) {
    this.version = version
    this.decos = decos
    this.unsent = unsent // [{type: "create", id, text} | {type: "delete", id}]
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
    if (action) {
      switch (action.type) {
        case "add":
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
    return new CommentState(version, decos, unsent)
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
      decorations(state) { return commentsKey.getState(state).decos },
    },
  })
}

function randomID() {
  return Math.floor(Math.random() * 0xffffffff) + 1
}

// addComment is a command that comments the selection, asking for the
// text with a prompt.
export function addComment(state, dispatch) {
  let { from, to, empty } = state.selection
  if (empty || !commentsKey.get(state)) return false
  if (dispatch) {
    let text = prompt("Comment", "")
    if (text && text.trim())
      dispatch(state.tr.setMeta(commentsKey, { type: "add", from, to, id: randomID(), text: text.trim() }))
  }
  return true
}

// deleteComment returns a command that deletes the comment with the id.
export function deleteComment(id) {
  return (state, dispatch) => {
    if (!commentsKey.getState(state)?.find(id)) return false
    if (dispatch) dispatch(state.tr.setMeta(commentsKey, { type: "delete", id }))
    return true
  }
}

// commentTooltip shows the comments under an empty selection, each with
// a delete button.
export function commentTooltip() {
  return new Plugin({
    props: {
      decorations(state) {
        let comments = commentsKey.getState(state)
        let sel = state.selection
        if (!comments || !sel.empty) return null
        let here = comments.commentsAt(sel.from)
        if (!here.length) return null
        let key = "comments:" + here.map(c => c.id).join(",")
        let widget = Decoration.widget(sel.from, view => renderTooltip(view, here), { key, side: -1, ignoreSelection: true })
        return DecorationSet.create(state.doc, [widget])
      },
    },
  })
}

function renderTooltip(view, comments) {
  return h("span", { class: "pma-comment-tooltip", contenteditable: "false" },
    h("ul", {}, comments.map(c => {
      let del = h("button", { type: "button", class: "pma-comment-delete", title: "Delete comment", "aria-label": "Delete comment" }, "×")
      del.addEventListener("mousedown", e => e.preventDefault())
      del.addEventListener("click", e => {
        e.preventDefault()
        deleteComment(c.id)(view.state, view.dispatch)
        view.focus()
      })
      return h("li", { class: "pma-comment-text", "data-comment-id": String(c.id) }, h("span", {}, c.text), del)
    })))
}

// commentIcon is the menu icon of addComment: a speech bubble.
export const commentIcon = {
  width: 24, height: 24,
  path: "M3 4h18v12H10l-5 4v-4H3zM5 6v8h2v2l2.5-2H19V6z",
}
