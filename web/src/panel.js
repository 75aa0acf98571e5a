// The comments panel beside the editor: the document's comments in
// order, each with its author, time, the text it covers and a delete
// button (clicking one selects its range), and the composer, an inline
// input for a new comment on the selection.

import { TextSelection } from "prosemirror-state"
import {
  commentsOf, commentDraft, setCommentDraft, clearCommentDraft, createComment, deleteComment,
  formatComment, parseComment,
} from "../client/src/comments.js"
import { h } from "../client/src/dom.js"

const quoteLength = 90

// timeText is how long ago t was, for the list ("just now", "5 min
// ago", "14:05", "3 Dec").
function timeText(t, now) {
  let s = (now - t) / 1000
  if (s < 60) return "just now"
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  let today = new Date(now).toDateString() == t.toDateString()
  return today ? t.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : t.toLocaleDateString([], { day: "numeric", month: "short" })
}

function quote(doc, from, to) {
  let text = doc.textBetween(from, to, " ", " ").replace(/\s+/g, " ").trim()
  return text.length > quoteLength ? text.slice(0, quoteLength - 1) + "…" : text
}

// CommentsPanel renders into the element root (the page's aside). author
// returns the name new comments are signed with. With readOnly (a token
// whose role does not allow comments) it only shows them: no composer,
// no delete buttons.
export class CommentsPanel {
  constructor(root, author, { readOnly = false } = {}) {
    this.root = root
    this.author = author
    this.readOnly = readOnly
    this.view = null
    this.shown = ""
    this.count = root.querySelector(".comments-count")
    this.list = root.querySelector(".comments-list")
    this.composer = root.querySelector(".composer")
    this.input = this.composer.querySelector("textarea")
    this.composerQuote = this.composer.querySelector(".composer-quote")
    this.composer.addEventListener("submit", e => {
      e.preventDefault()
      this.submit()
    })
    this.composer.querySelector(".composer-cancel").addEventListener("click", () => this.cancel())
    this.input.addEventListener("keydown", e => {
      if (e.key == "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault()
        this.submit()
      } else if (e.key == "Escape") {
        e.preventDefault()
        this.cancel()
      }
    })
    this.input.addEventListener("input", () => this.updateButton())
    // Relative times move on.
    setInterval(() => { this.shown = ""; this.update() }, 30000)
  }

  // start opens the composer for the selection: a command, for the menu
  // and the keymap.
  start = (state, dispatch) => {
    if (this.readOnly || !setCommentDraft()(state)) return false
    if (dispatch) {
      setCommentDraft()(state, dispatch)
      this.input.value = ""
      this.updateButton()
      this.composer.hidden = false
      this.input.focus()
    }
    return true
  }

  submit() {
    let view = this.view, text = this.input.value.trim()
    if (!view || !text) return
    if (createComment(formatComment(text, this.author()))(view.state, view.dispatch)) this.close()
  }

  cancel() {
    let view = this.view
    if (view) clearCommentDraft(view.state, view.dispatch)
    this.close()
  }

  close() {
    this.composer.hidden = true
    this.input.value = ""
    this.view?.focus()
  }

  updateButton() {
    this.composer.querySelector("button[type=submit]").disabled = !this.input.value.trim()
  }

  // update renders the comments of the view's state (when they or the
  // selection's place among them changed).
  update(view = this.view) {
    this.view = view
    if (!view) return
    let state = view.state, comments = commentsOf(state), sel = state.selection
    let draft = commentDraft(state)
    if (!draft && !this.composer.hidden) this.close() // its range went away
    if (draft) this.composerQuote.textContent = quote(state.doc, draft.from, draft.to)
    let items = comments.map(c => ({
      ...c, ...parseComment(c.text),
      quote: quote(state.doc, c.from, c.to),
      active: sel.from < c.to && sel.to > c.from || (sel.empty && sel.from >= c.from && sel.from <= c.to),
    }))
    let key = JSON.stringify(items)
    if (key == this.shown) return
    this.shown = key
    this.count.textContent = comments.length ? String(comments.length) : ""
    if (!items.length) {
      if (this.readOnly) return this.list.replaceChildren(h("li", { class: "comments-empty" }, "No comments yet."))
      this.list.replaceChildren(h("li", { class: "comments-empty" }, "No comments yet. Select some text and press the speech bubble or ", h("kbd", {}, "Ctrl-Alt-M"), "."))
      return
    }
    let now = Date.now()
    this.list.replaceChildren(...items.map(c => this.renderComment(c, now)))
  }

  renderComment(c, now) {
    let del = this.readOnly ? null : h("button", { type: "button", class: "comment-delete", title: "Delete comment", "aria-label": "Delete comment" }, "×")
    del?.addEventListener("click", e => {
      e.stopPropagation()
      let view = this.view
      if (!view) return
      deleteComment(c.id)(view.state, view.dispatch)
      view.focus() // back to writing, as after the other panel actions
    })
    let time = c.time && !isNaN(c.time) ? h("time", { datetime: c.time.toISOString(), title: c.time.toLocaleString() }, timeText(c.time, now)) : null
    let li = h("li", { class: "comment" + (c.active ? " active" : ""), "data-comment-id": String(c.id), tabindex: "0" },
      h("div", { class: "comment-head" },
        h("span", { class: "comment-author" }, c.author || "Someone"), time, del),
      h("blockquote", { class: "comment-quote" }, c.quote),
      h("p", { class: "comment-body" }, c.body))
    let select = () => {
      let view = this.view
      if (!view) return
      let found = commentsOf(view.state).find(x => x.id == c.id)
      if (!found) return
      view.dispatch(view.state.tr.setSelection(TextSelection.create(view.state.doc, found.from, found.to)).scrollIntoView())
      view.focus()
    }
    li.addEventListener("click", select)
    li.addEventListener("keydown", e => { if (e.key == "Enter") select() })
    return li
  }
}
