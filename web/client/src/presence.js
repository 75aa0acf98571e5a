// Remote cursors and selections: the other clients' selections, kept in
// this client's document coordinates and mapped through every change,
// drawn as decorations (a caret with the client's name and colour, and
// a tinted range for a non-empty selection).

import { Plugin, PluginKey, Selection, TextSelection } from "prosemirror-state"
import { Decoration, DecorationSet } from "prosemirror-view"
import { h } from "./dom.js"

export const presenceKey = new PluginKey("presence")

const colorPattern = /^#[0-9a-fA-F]{6}$/

// safeColor returns color when it is #rrggbb, else a neutral grey.
export function safeColor(color) {
  return typeof color == "string" && colorPattern.test(color) ? color : "#888888"
}

// peerName returns a client's display name.
export function peerName(peer) {
  let name = typeof peer.name == "string" ? peer.name.trim() : ""
  return name || "Anonymous"
}

class PresenceState {
  constructor(peers, decos) {
    this.peers = peers // Map of String(clientID) → {clientID, name, color, data, anchor, head}
    this.decos = decos
  }

  apply(tr) {
    let action = tr.getMeta(presenceKey)
    if (!action && !tr.docChanged) return this
    let peers = this.peers
    if (tr.docChanged) {
      peers = new Map()
      for (let [key, p] of this.peers) {
        if (p.anchor == null) peers.set(key, p)
        else peers.set(key, { ...p, anchor: tr.mapping.map(p.anchor), head: tr.mapping.map(p.head) })
      }
    }
    if (action) {
      peers = action.reset ? new Map() : new Map(peers)
      for (let p of action.set || []) peers.set(String(p.clientID), p)
      for (let id of action.remove || []) peers.delete(String(id))
    }
    return new PresenceState(peers, buildDecos(tr.doc, peers))
  }
}

function clamp(pos, doc) {
  return Math.max(0, Math.min(pos, doc.content.size))
}

function buildDecos(doc, peers) {
  let decos = []
  for (let [key, p] of peers) {
    if (p.anchor == null) continue
    let color = safeColor(p.color), name = peerName(p)
    let anchor = clamp(p.anchor, doc), head = clamp(p.head, doc)
    let from = Math.min(anchor, head), to = Math.max(anchor, head)
    if (from < to)
      decos.push(Decoration.inline(from, to, { class: "pma-remote-selection", style: `background-color: ${color}33` }))
    decos.push(Decoration.widget(head, () => renderCaret(key, name, color), {
      key: `cursor:${key}:${color}:${name}`,
      side: 10,
    }))
  }
  return DecorationSet.create(doc, decos)
}

// renderCaret draws a remote caret as an empty span: its border is the
// caret, and the name is CSS generated content (::after, from
// data-name). The widget has no text node, so no DOM position inside it
// can take the local caret: typing there would go nowhere (a widget is
// contenteditable=false, and the view does not read input inside it).
function renderCaret(key, name, color) {
  return h("span", { class: "pma-cursor", "data-client-id": key, "data-name": name, style: `--pma-peer: ${color}` })
}

// presencePlugin keeps the remote selections. Change them with a
// transaction whose presenceKey meta is {reset?, set?, remove?}: reset
// forgets every peer, set adds or replaces peers ({clientID, name,
// color, anchor, head} with positions in the transaction's document, or
// a null anchor for a client without a cursor), remove drops peers by
// client id.
export function presencePlugin() {
  return new Plugin({
    key: presenceKey,
    state: {
      init: () => new PresenceState(new Map(), DecorationSet.empty),
      apply: (tr, prev) => prev.apply(tr),
    },
    props: {
      decorations(state) { return presenceKey.getState(state).decos },
      handleKeyDown: arrowPastCaret,
    },
  })
}

// arrowPastCaret moves the selection's head one position left or right
// (ArrowLeft, ArrowRight, with Shift extending) when a remote caret sits
// where the head is. The browser's own motion would step over the
// caret's element instead, a keypress with no visible effect, and at the
// end of a textblock it does not leave the block at all. Elsewhere it
// returns false and the browser moves the caret.
function arrowPastCaret(view, event) {
  if (event.key != "ArrowLeft" && event.key != "ArrowRight") return false
  if (event.ctrlKey || event.metaKey || event.altKey) return false
  let state = view.state, sel = state.selection
  if (!(sel instanceof TextSelection) || !sel.$head.parent.inlineContent) return false
  // An arrow without Shift collapses a range where it is: no motion.
  if (!sel.empty && !event.shiftKey) return false
  let head = sel.head, doc = state.doc
  let here = false
  for (let p of presenceKey.getState(state).peers.values())
    if (p.anchor != null && clamp(p.head, doc) == head) here = true
  if (!here) return false
  // Visual left is backward in left-to-right text, the page's direction.
  let dir = event.key == "ArrowRight" ? 1 : -1
  let target = step(doc, sel.$head, dir)
  if (target == null) return false
  let next = event.shiftKey ? TextSelection.create(doc, sel.anchor, target) : TextSelection.create(doc, target)
  view.dispatch(state.tr.setSelection(next).scrollIntoView())
  return true
}

// step returns the position one character (or inline node) from $pos in
// direction dir, crossing into the neighbouring textblock at its edge,
// or null when there is none.
function step(doc, $pos, dir) {
  let parent = $pos.parent
  if (dir > 0 ? $pos.parentOffset == parent.content.size : $pos.parentOffset == 0) {
    let found = Selection.findFrom(doc.resolve(dir > 0 ? $pos.after() : $pos.before()), dir, true)
    return found ? found.head : null
  }
  let node = dir > 0 ? $pos.nodeAfter : $pos.nodeBefore
  if (!node) return null
  if (!node.isText) return $pos.pos + dir * node.nodeSize
  // Keep surrogate pairs (an emoji is two UTF-16 units) together.
  let text = node.text, i = dir > 0 ? 0 : text.length - 1 // nodeBefore/After are cut at $pos
  let code = text.charCodeAt(i)
  let pair = dir > 0 ? code >= 0xd800 && code < 0xdc00 : code >= 0xdc00 && code < 0xe000
  return $pos.pos + dir * (pair ? 2 : 1)
}
