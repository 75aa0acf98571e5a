// The history panel of the editor page: the document's versions, newest
// first, one entry per burst of one person's steps (groupSteps), with
// the checkpoints among them; a click on one shows the changes since it
// as decorations in each author's colour (changesPlugin); restoring a
// version, saving a checkpoint, downloading the document as Markdown,
// HTML or text. It reads the HTTP API (docs/api.md) with the page's
// token: /steps (a bounded window of the newest steps, more on "Load
// older"), /checkpoints, /changes, /export, ?version=N and /restore.

import { Plugin, PluginKey } from "prosemirror-state"
import { Decoration, DecorationSet } from "prosemirror-view"
import { Mapping } from "prosemirror-transform"
import { getVersion, sendableSteps } from "prosemirror-collab"
import { h } from "../client/src/dom.js"
import { palette } from "./identity.js"

// burstGap is the longest pause (ms) between two steps of one person
// that keeps them in one entry.
export const burstGap = 60000

// windowSteps is how many steps the panel reads at a time: the newest
// ones when it opens, as many older ones per "Load older".
export const windowSteps = 500

// groupSteps groups steps (GET /steps's, oldest first) into entries
// {from, to, author, restore, start, end, steps}: a run of consecutive
// steps of one author (anonymous steps: of one client id) without a
// pause longer than gap ms, from the version before its first step to
// its last step's version. The server's restores (client id "restore")
// are entries of their own.
export function groupSteps(steps, gap = burstGap) {
  let entries = [], last = null
  for (let st of steps) {
    let restore = st.clientID == "restore"
    let key = (restore ? "r:" : "a:") + (st.author ?? "client " + st.clientID)
    let time = Date.parse(st.time)
    if (last && last.key == key && last.to == st.version - 1 && time - last.end <= gap) {
      last.to = st.version
      last.end = time
      last.steps++
      continue
    }
    last = { key, from: st.version - 1, to: st.version, author: st.author ?? "", restore, start: time, end: time, steps: 1 }
    entries.push(last)
  }
  return entries.map(({ key, ...entry }) => entry)
}

// AuthorColors hands out the palette's colours to authors in the order
// it meets them, so that the first ten all differ and an author keeps
// one colour on the page.
export class AuthorColors {
  constructor() { this.colors = new Map() }

  of(author) {
    let color = this.colors.get(author)
    if (!color) {
      color = palette[this.colors.size % palette.length]
      this.colors.set(author, color)
    }
    return color
  }
}

// changeDecorations returns the decorations of a /changes answer's
// changes (positions in the document at its "to" version), mapped
// through mapping onto the document doc: each inserted span an inline
// decoration in its author's colour, the deleted spans of a change a
// widget at its start showing their text, taken from docA (the document
// at the "from" version), struck through. Changes outside either
// document are skipped.
export function changeDecorations(changes, docA, doc, colorOf, mapping = new Mapping()) {
  let decos = [], sizeA = docA.content.size, size = doc.content.size
  for (let ch of changes) {
    if (!(ch.fromA >= 0 && ch.toA <= sizeA && ch.fromA <= ch.toA)) continue
    let pos = ch.fromB
    for (let span of ch.inserted || []) {
      let from = mapping.map(pos, 1), to = mapping.map(pos + span.length, -1)
      if (from < to && to <= size) {
        decos.push(Decoration.inline(from, to, {
          class: "pma-inserted", style: `--pma-author: ${colorOf(span.data || "")}`, "data-author": span.data || "",
        }))
      }
      pos += span.length
    }
    let at = mapping.map(ch.fromB, -1), a = ch.fromA, parts = []
    for (let span of ch.deleted || []) {
      let end = Math.min(a + span.length, ch.toA)
      let text = docA.textBetween(a, end, "¶", "▫")
      if (text) parts.push({ text, author: span.data || "" })
      a = end
    }
    if (parts.length && at <= size) {
      decos.push(Decoration.widget(at, () => h("span", { class: "pma-deleted-group" }, parts.map(p =>
        h("del", { class: "pma-deleted", style: `--pma-author: ${colorOf(p.author)}`, "data-author": p.author }, p.text))),
      { side: -1, marks: [], ignoreSelection: true, key: "del:" + at + ":" + parts.map(p => p.author + p.text.length).join(",") }))
    }
  }
  return decos
}

const changesKey = new PluginKey("pma-changes")

// changesPlugin holds the decorations the panel shows, mapped through
// every later change of the document.
export const changesPlugin = new Plugin({
  key: changesKey,
  state: {
    init: () => DecorationSet.empty,
    apply(tr, set) {
      let next = tr.getMeta(changesKey)
      if (next) return next.decorations ? DecorationSet.create(tr.doc, next.decorations) : DecorationSet.empty
      return set.map(tr.mapping, tr.doc)
    },
  },
  props: { decorations: state => changesKey.getState(state) },
})

const formats = [["markdown", "Markdown", "md"], ["html", "HTML", "html"], ["text", "Text", "txt"]]

// timeText is t as a date (when not today) and a time of day.
function timeText(t) {
  let d = new Date(t), today = d.toDateString() == new Date().toDateString()
  let time = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })
  return today ? time : d.toLocaleDateString([], { day: "numeric", month: "short" }) + " " + time
}

// HTTPError is an answer of 400 or more, with the server's message.
class HTTPError extends Error {
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

// HistoryPanel renders into root (the page's history aside) for the
// document id. view() returns the editor view (null before the first
// state); token is the page's token ("" for none). canEdit shows the
// restore and checkpoint controls (the server refuses them below edit).
export class HistoryPanel {
  constructor(root, { id, token, canEdit, view, schema }) {
    this.root = root
    this.id = id
    this.token = token
    this.canEdit = canEdit
    this.view = view
    this.schema = schema
    this.colors = new AuthorColors()
    this.windowSteps = windowSteps // a property, for the browser test
    this.open = false
    this.steps = [] // the steps read, oldest first, versions (loadedFrom, loadedTo]
    this.loadedFrom = -1
    this.loadedTo = -1
    this.oldest = 0
    this.checkpoints = []
    this.selected = null // {version, label}: the entry clicked, whose actions show
    this.shown = null // {version, label, authors, changes}: the changes shown
    this.seq = 0 // counts the clicks, so that only the last one's answer shows
    this.refreshTimer = null
    this.loading = null
    this.seenVersion = -1

    this.list = root.querySelector(".history-list")
    this.legend = root.querySelector(".history-legend")
    this.error = root.querySelector(".history-error")
    this.form = root.querySelector(".history-checkpoint-form")
    this.form.hidden = !canEdit
    this.form.addEventListener("submit", e => {
      e.preventDefault()
      this.addCheckpoint(this.form.elements.name.value.trim())
    })
    root.querySelector(".history-refresh").addEventListener("click", () => this.refresh())
    root.querySelector(".history-close").addEventListener("click", () => this.toggle(false))
    this.onToggle = () => {}
    let downloads = root.querySelector(".history-download")
    downloads.append(...formats.map(([format, label]) =>
      h("button", { type: "button", "data-format": format, title: `Download the current version as ${label}` }, label)))
    downloads.addEventListener("click", e => {
      let format = e.target.closest("button")?.dataset.format
      if (format) this.download(format, null)
    })
  }

  // toggle opens or closes the panel; opening reads the history.
  toggle(open = !this.open) {
    this.open = open
    this.root.hidden = !open
    document.body.classList.toggle("history-open", open)
    this.onToggle(open)
    if (open) this.refresh()
  }

  // update is called with each new state: while the panel is open, a
  // new version reads the history again once the edits pause.
  update(view) {
    if (!this.open || !view) return
    let version = getVersion(view.state)
    if (version == this.seenVersion) return
    this.seenVersion = version
    clearTimeout(this.refreshTimer)
    this.refreshTimer = setTimeout(() => this.refresh(), 1500)
  }

  url(path) {
    return new URL("../docs/" + encodeURIComponent(this.id) + path, location.href).href
  }

  // fetch requests path of the document's API with the token and
  // returns the response; an answer of 400 or more throws an HTTPError
  // with the server's message.
  async fetch(path, init = {}) {
    let headers = { ...(init.headers || {}) }
    if (this.token) headers.Authorization = "Bearer " + this.token
    let res = await fetch(this.url(path), { ...init, headers })
    if (!res.ok) {
      let message = res.statusText
      try { message = (await res.json()).error?.message || message } catch { /* not JSON */ }
      let why = res.status == 401 ? "your token was refused" : res.status == 403 ? "your token does not allow this" : ""
      throw new HTTPError(res.status, `${why ? why + ": " : ""}${message} (${res.status})`)
    }
    return res
  }

  async json(path, init) {
    return (await this.fetch(path, init)).json()
  }

  // readSteps returns the steps after version from up to version to
  // (the current one when null), following the pages' "next", and the
  // document's version and oldest version.
  async readSteps(from, to) {
    let steps = [], page
    for (;;) {
      page = await this.json(`/steps?from=${from}&limit=${this.windowSteps}`)
      for (let st of page.steps) if (to == null || st.version <= to) steps.push(st)
      if (page.next == null || (to != null && page.next >= to) || steps.length >= 2 * this.windowSteps) break
      from = page.next
    }
    return { steps, version: page.version, oldest: page.oldest }
  }

  // refresh reads the steps since the last read (the newest window when
  // there are more of them, or on the first read) and the checkpoints,
  // and draws the list again.
  refresh() {
    if (this.loading) return this.loading.then(() => this.refresh())
    this.loading = (async () => {
      try {
        let head = await this.json("/steps?limit=1")
        this.oldest = head.oldest
        if (this.loadedTo < 0 || head.version - this.loadedTo > this.windowSteps || head.version < this.loadedTo || this.loadedFrom < head.oldest) {
          let from = Math.max(head.oldest, head.version - this.windowSteps)
          let read = await this.readSteps(from, null)
          this.steps = read.steps
          this.loadedFrom = from
          this.loadedTo = read.steps.length ? read.steps[read.steps.length - 1].version : from
        } else if (head.version > this.loadedTo) {
          let read = await this.readSteps(this.loadedTo, null)
          this.steps = this.steps.concat(read.steps)
          if (read.steps.length) this.loadedTo = read.steps[read.steps.length - 1].version
        }
        this.checkpoints = (await this.json("/checkpoints")).checkpoints
        this.fail(null)
      } catch (e) {
        this.fail(e)
      }
      this.render()
    })().finally(() => { this.loading = null })
    return this.loading
  }

  // loadOlder reads the window of steps before the ones read.
  async loadOlder() {
    if (this.loading) await this.loading
    try {
      let from = Math.max(this.oldest, this.loadedFrom - this.windowSteps)
      let read = await this.readSteps(from, this.loadedFrom)
      this.steps = read.steps.concat(this.steps)
      this.loadedFrom = from
      this.fail(null)
    } catch (e) {
      this.fail(e)
    }
    this.render()
  }

  fail(e) {
    this.error.textContent = e ? String(e.message || e) : ""
    this.error.hidden = !e
  }

  // render draws the entries and checkpoints, newest first, and the
  // start of what was read.
  render() {
    let items = groupSteps(this.steps).map(e => ({ kind: "entry", version: e.to, entry: e }))
    for (let cp of this.checkpoints) items.push({ kind: "checkpoint", version: cp.version, checkpoint: cp })
    // Newest first; a checkpoint above the entries of its version.
    items.sort((a, b) => b.version - a.version || (a.kind == "checkpoint" ? -1 : 1) - (b.kind == "checkpoint" ? -1 : 1))
    let rows = items.map(item => item.kind == "entry" ? this.entryRow(item.entry) : this.checkpointRow(item.checkpoint))
    if (this.loadedFrom > this.oldest) {
      rows.push(h("li", { class: "history-more", "data-from": this.loadedFrom }, this.button("Load older", "Read the steps before these", () => this.loadOlder())))
    } else if (this.loadedFrom >= 0) {
      rows.push(this.row({ version: this.oldest, kind: "start", color: "", title: this.oldest == 0 ? "Empty document" : "Oldest version kept", who: "", when: "" }))
    }
    this.list.replaceChildren(...rows)
    this.drawLegend()
  }

  entryRow(e) {
    let who = e.author || "anonymous"
    let when = e.start == e.end ? timeText(e.start) : `${timeText(e.start)} – ${timeText(e.end)}`
    return this.row({
      version: e.to, kind: e.restore ? "restore" : "entry", color: this.colors.of(e.author), who,
      title: e.restore ? `${who} restored a version` : `${who} · ${e.steps} change${e.steps == 1 ? "" : "s"}`, when,
      from: e.from,
    })
  }

  checkpointRow(cp) {
    return this.row({
      version: cp.version, kind: "checkpoint", color: "", checkpoint: cp.name, who: cp.author || "anonymous",
      title: "⚑ " + cp.name, when: `${cp.author || "anonymous"} · ${timeText(Date.parse(cp.time))}`,
    })
  }

  // row is one version of the list: a click shows the changes since it;
  // when it is the one shown, its actions (restore, download).
  row({ version, kind, color, title, when, checkpoint = null, from = null }) {
    let label = checkpoint != null ? `checkpoint “${checkpoint}”` : `version ${version}`
    let active = this.selected && this.selected.version == version && this.selected.label == label
    let li = h("li", {
      class: `history-item history-${kind}${active ? " active" : ""}`, "data-version": version, "data-from": from,
      "data-checkpoint": checkpoint, tabindex: 0, title: `Show the changes since ${label}`,
    },
    h("div", { class: "history-head" },
      color ? h("span", { class: "swatch", style: `background-color: ${color}` }) : null,
      h("span", { class: "history-title" }, title),
      h("span", { class: "history-version" }, "v" + version)),
    when ? h("time", {}, when) : null)
    if (active) {
      li.append(h("div", { class: "history-actions" },
        this.canEdit ? this.button("Restore", `Make the document as it was at ${label} again (a new version: nothing is lost)`,
          () => this.restore(checkpoint != null ? { checkpoint } : { version }), "history-restore") : null,
        h("span", { class: "history-download-version" }, "Download:",
          formats.map(([format, name]) => this.button(name, `Download ${label} as ${name}`, () => this.download(format, version), "", format)))))
    }
    let show = () => this.showChanges(version, label)
    li.addEventListener("click", e => { if (!e.target.closest("button")) show() })
    li.addEventListener("keydown", e => { if (e.key == "Enter" && e.target == li) show() })
    return li
  }

  button(text, title, run, cls = "", format = null) {
    let b = h("button", { type: "button", class: cls, title, "data-format": format }, text)
    b.addEventListener("click", e => { e.stopPropagation(); run() })
    return b
  }

  // showChanges shows the changes from version to the editor's version
  // (GET /changes, and the document at version for the deleted text).
  // A version that moves on meanwhile asks again.
  async showChanges(version, label) {
    this.selected = { version, label }
    let seq = ++this.seq
    this.render()
    try {
      for (let attempt = 0; ; attempt++) {
        let view = this.view()
        if (!view) return
        let to = getVersion(view.state)
        if (version > to) throw new Error(`the editor has not reached ${label} yet`)
        let [answer, old] = await Promise.all([
          this.json(`/changes?from=${version}&to=${to}&simplify=1`),
          this.json(`?version=${version}`),
        ])
        if (seq != this.seq) return // another entry was clicked meanwhile
        view = this.view()
        if (getVersion(view.state) != to) {
          if (attempt < 3) continue
          throw new Error("the document keeps changing: try again")
        }
        let docA = this.schema.nodeFromJSON(old.doc)
        // The editor's own steps the server has not confirmed yet come
        // after version to.
        let mapping = new Mapping((sendableSteps(view.state)?.steps || []).map(s => s.getMap()))
        let decorations = changeDecorations(answer.changes, docA, view.state.doc, a => this.colors.of(a), mapping)
        let authors = [...new Set(answer.changes.flatMap(ch => [...(ch.inserted || []), ...(ch.deleted || [])].map(s => s.data || "")))]
        view.dispatch(view.state.tr.setMeta(changesKey, { decorations }))
        this.shown = { version, label, authors, changes: answer.changes.length }
        this.fail(null)
        break
      }
    } catch (e) {
      if (seq != this.seq) return
      this.hideChanges()
      this.fail(e)
    }
    this.render()
  }

  // hideChanges removes the decorations.
  hideChanges() {
    this.shown = null
    let view = this.view()
    if (view) view.dispatch(view.state.tr.setMeta(changesKey, { decorations: null }))
  }

  // clear removes the changes shown.
  clear() {
    this.selected = null
    this.seq++
    this.hideChanges()
    this.render()
  }

  drawLegend() {
    let s = this.shown
    this.legend.hidden = !s
    if (!s) return this.legend.replaceChildren()
    this.legend.replaceChildren(
      h("div", { class: "history-legend-head" },
        h("span", {}, s.changes ? `Changes since ${s.label}` : `No changes since ${s.label}`),
        this.button("Clear", "Hide the changes", () => this.clear(), "history-clear")),
      h("ul", { class: "history-authors" }, s.authors.map(a =>
        h("li", { "data-author": a }, h("span", { class: "swatch", style: `background-color: ${this.colors.of(a)}` }), a || "anonymous"))))
  }

  // restore makes the document equal to a version or checkpoint again
  // (POST /restore); the editors receive it as a new version.
  async restore(target) {
    try {
      await this.json("/restore", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(target),
      })
      this.clear()
      this.fail(null)
      await this.refresh()
    } catch (e) {
      this.fail(e)
      this.render()
    }
  }

  async addCheckpoint(name) {
    if (!name) return this.fail(new Error("a checkpoint needs a name"))
    try {
      await this.json("/checkpoints", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name }),
      })
      this.form.elements.name.value = ""
      this.fail(null)
      await this.refresh()
    } catch (e) {
      this.fail(e)
    }
  }

  // download saves the document (at version, or the current one when
  // null) in format, as GET /export writes it.
  async download(format, version) {
    try {
      let res = await this.fetch(`/export?format=${format}${version == null ? "" : "&version=" + version}`)
      let blob = await res.blob()
      let ext = formats.find(f => f[0] == format)[2]
      let base = this.id.replace(/[^\p{L}\p{N}._-]+/gu, "_").slice(0, 100) || "document"
      let a = h("a", { href: URL.createObjectURL(blob), download: `${base}${version == null ? "" : "-v" + version}.${ext}` })
      document.body.append(a)
      a.click()
      a.remove()
      setTimeout(() => URL.revokeObjectURL(a.href), 10000)
      this.fail(null)
    } catch (e) {
      this.fail(e)
    }
  }
}
