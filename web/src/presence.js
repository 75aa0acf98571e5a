// Remote cursors and selections: the other clients' selections, kept in
// this client's document coordinates and mapped through every change,
// drawn as decorations (a caret with the client's name and colour, and
// a tinted range for a non-empty selection).

import { Plugin, PluginKey } from "prosemirror-state"
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
    this.peers = peers // Map of String(clientID) → {clientID, name, color, anchor, head}
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
      ignoreSelection: true,
    }))
  }
  return DecorationSet.create(doc, decos)
}

function renderCaret(key, name, color) {
  let caret = h("span", { class: "pma-cursor", "data-client-id": key, style: `border-color: ${color}` },
    h("span", { class: "pma-cursor-name", style: `background-color: ${color}` }, name))
  // A word joiner gives the caret the height of the line without width.
  caret.appendChild(document.createTextNode("\u2060"))
  return caret
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
    },
  })
}
