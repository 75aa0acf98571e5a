// The comments panel beside the editor: the document's threads in
// order, each with its author, time, the text it covers, its replies,
// and the actions: reply, resolve or reopen, edit and delete (one's own,
// or anyone's for an admin; clicking a thread selects its range), and the
// composer, an inline input for a new comment on the selection.

import { TextSelection } from "prosemirror-state"
import {
  commentsOf, commentDraft, setCommentDraft, clearCommentDraft, createComment, deleteComment,
  replyToComment, editComment, resolveComment, reopenComment, deleteReply,
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

// note returns what the panel shows of a comment or reply: its body, who
// wrote it and when (the server's fields; for a text written with
// formatComment, its last line gives the name, and the time when the
// server has none).
function note(c) {
  let parsed = parseComment(c.text)
  let time = c.time ? new Date(c.time) : parsed.time
  return { body: parsed.body, name: parsed.author || c.author || null, time, edited: !!c.edited }
}

// CommentsPanel renders into the element root (the page's aside). author
// returns the name new comments are signed with when the page has no
// token (with one the server records the token's principal). With
// readOnly (a token whose role does not allow comments) it only shows
// them. principal is the token's sub ("" without a token) and admin
// whether its role is admin: others' comments and replies get edit and
// delete buttons only for an admin, or on a page without a token (the
// server then allows everyone everything).
export class CommentsPanel {
  constructor(root, author, { readOnly = false, principal = "", admin = false } = {}) {
    this.root = root
    this.author = author
    this.readOnly = readOnly
    this.principal = principal
    this.admin = admin
    this.view = null
    this.shown = ""
    this.editing = null // the id of the comment or reply whose text is being edited
    this.drafts = new Map() // input key → text typed, kept across renders
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

  // signed returns text as sent: with the author's name as its last line
  // on a page without a token, where the server records no author.
  signed(text) {
    return this.principal ? text : formatComment(text, this.author())
  }

  submit() {
    let view = this.view, text = this.input.value.trim()
    if (!view || !text) return
    if (createComment(this.signed(text), undefined, { author: this.principal || null })(view.state, view.dispatch)) this.close()
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

  // mayChange tells whether the page offers to edit and delete what
  // author wrote (the server decides).
  mayChange(author) {
    return !this.readOnly && (!this.principal || this.admin || author == this.principal)
  }

  // run runs a command on the view, then renders again.
  run(command) {
    let view = this.view
    if (!view) return false
    let done = command(view.state, view.dispatch)
    this.shown = ""
    this.update()
    return done
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
      ...c,
      quote: quote(state.doc, c.from, c.to),
      active: sel.from < c.to && sel.to > c.from || (sel.empty && sel.from >= c.from && sel.from <= c.to),
    }))
    let key = JSON.stringify([items, this.editing])
    if (key == this.shown) return
    this.shown = key
    this.count.textContent = comments.length ? String(comments.length) : ""
    if (!items.length) {
      if (this.readOnly) return this.list.replaceChildren(h("li", { class: "comments-empty" }, "No comments yet."))
      this.list.replaceChildren(h("li", { class: "comments-empty" }, "No comments yet. Select some text and press the speech bubble or ", h("kbd", {}, "Ctrl-Alt-M"), "."))
      return
    }
    // The input being typed in survives the render.
    let focused = document.activeElement?.dataset?.input, caret = document.activeElement?.selectionStart
    let now = Date.now()
    this.list.replaceChildren(...items.map(c => this.renderComment(c, now)))
    let again = focused && this.list.querySelector(`[data-input="${focused}"]`)
    if (again) {
      again.focus()
      if (caret != null) again.setSelectionRange(caret, caret)
    }
  }

  // button returns a small button with label that runs action.
  button(cls, label, title, action) {
    let b = h("button", { type: "button", class: cls, title, "aria-label": title }, label)
    b.addEventListener("click", e => {
      e.stopPropagation()
      action()
    })
    return b
  }

  // input returns a text input for key whose text is kept across renders,
  // calling send with it on Enter (Escape calls cancel).
  textInput(key, placeholder, initial, send, cancel) {
    let input = h("textarea", { rows: "1", class: "thread-input", placeholder, "aria-label": placeholder, "data-input": key, maxlength: "2000" })
    input.value = this.drafts.has(key) ? this.drafts.get(key) : initial
    input.addEventListener("click", e => e.stopPropagation())
    input.addEventListener("input", () => this.drafts.set(key, input.value))
    input.addEventListener("keydown", e => {
      e.stopPropagation()
      if (e.key == "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault()
        let text = input.value.trim()
        if (text && send(text)) this.drafts.delete(key)
      } else if (e.key == "Escape" && cancel) {
        e.preventDefault()
        this.drafts.delete(key)
        cancel()
      }
    })
    return input
  }

  // renderNote renders the head and body of a comment or reply n: the
  // author, the time, its buttons, and the body (an input while edited).
  renderNote(n, now, buttons) {
    let shown = note(n)
    let time = shown.time && !isNaN(shown.time)
      ? h("time", { datetime: shown.time.toISOString(), title: shown.time.toLocaleString() }, timeText(shown.time, now)) : null
    let edited = shown.edited ? h("span", { class: "comment-edited", title: "Edited " + new Date(n.edited).toLocaleString() }, "edited") : null
    let body
    if (this.editing == n.id) {
      let stop = () => { this.editing = null; this.shown = ""; this.update() }
      body = this.textInput("edit-" + n.id, "Edit", shown.body, text => {
        let done = this.run(editComment(n.id, this.signed(text)))
        stop()
        return done
      }, stop)
    } else {
      body = h("p", { class: "comment-body" }, shown.body)
    }
    return [h("div", { class: "comment-head" }, h("span", { class: "comment-author" }, shown.name || "Someone"), time, edited,
      h("span", { class: "comment-actions" }, ...buttons)), body]
  }

  renderComment(c, now) {
    let buttons = []
    if (!this.readOnly) {
      buttons.push(c.resolved
        ? this.button("comment-reopen", "Reopen", "Reopen the thread", () => this.run(reopenComment(c.id)))
        : this.button("comment-resolve", "Resolve", "Resolve the thread", () => this.run(resolveComment(c.id))))
    }
    if (this.mayChange(c.author)) {
      buttons.push(this.button("comment-edit", "Edit", "Edit comment", () => { this.editing = c.id; this.shown = ""; this.update() }))
      buttons.push(this.button("comment-delete", "×", "Delete comment", () => {
        this.run(deleteComment(c.id))
        this.view?.focus() // back to writing, as after the other panel actions
      }))
    }
    let replies = c.replies.map(r => {
      let rb = []
      if (this.mayChange(r.author)) {
        rb.push(this.button("reply-edit", "Edit", "Edit reply", () => { this.editing = r.id; this.shown = ""; this.update() }))
        rb.push(this.button("reply-delete", "×", "Delete reply", () => this.run(deleteReply(r.id))))
      }
      return h("li", { class: "reply", "data-reply-id": String(r.id) }, ...this.renderNote(r, now, rb))
    })
    let [head, body] = this.renderNote(c, now, buttons)
    let li = h("li", { class: "comment" + (c.active ? " active" : "") + (c.resolved ? " resolved" : ""), "data-comment-id": String(c.id), tabindex: "0" },
      head,
      c.resolved ? h("span", { class: "comment-resolved" }, "Resolved") : null,
      h("blockquote", { class: "comment-quote" }, c.quote),
      body,
      replies.length ? h("ul", { class: "replies" }, ...replies) : null,
      this.readOnly ? null : this.textInput("reply-" + c.id, "Reply…", "", text =>
        this.run(replyToComment(c.id, this.signed(text), { author: this.principal || null }))))
    let select = () => {
      let view = this.view
      if (!view) return
      let found = commentsOf(view.state).find(x => x.id == c.id)
      if (!found) return
      view.dispatch(view.state.tr.setSelection(TextSelection.create(view.state.doc, found.from, found.to)).scrollIntoView())
      view.focus()
    }
    li.addEventListener("click", select)
    li.addEventListener("keydown", e => { if (e.key == "Enter" && e.target == li) select() })
    return li
  }
}
