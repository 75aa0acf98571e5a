// The editor page, /edit/{id}: a ProseMirror editor with the example
// setup's menu, collaborating live through CollabClient. Its URLs are
// relative to the page, so that it works under any prefix.

import "prosemirror-view/style/prosemirror.css"
import "prosemirror-menu/style/menu.css"
import "prosemirror-example-setup/style/style.css"
import "./style.css"

import { EditorView } from "prosemirror-view"
import { keymap } from "prosemirror-keymap"
import { MenuItem } from "prosemirror-menu"
import { exampleSetup, buildMenuItems } from "prosemirror-example-setup"

import { schema } from "./schema.js"
import { CollabClient } from "./client.js"
import { addComment, commentIcon, commentTooltip } from "./comments.js"
import { safeColor, peerName } from "./presence.js"
import { loadIdentity, saveIdentity, isColor } from "./identity.js"
import { docIDPattern } from "./docid.js"
import { loadToken, roleOf, mayEdit } from "./token.js"
import { h } from "./dom.js"

const $ = id => document.getElementById(id)

function docIDFromPath() {
  let m = /\/edit\/([^/]+)$/.exec(location.pathname)
  if (!m) return null
  let id
  try { id = decodeURIComponent(m[1]) } catch { return null }
  return docIDPattern.test(id) ? id : null
}

// socketURL is the WebSocket URL of document id: ../docs/{id}/ws from
// the page at /edit/{id}, with the ws or wss scheme.
function socketURL(id) {
  let url = new URL("../docs/" + encodeURIComponent(id) + "/ws", location.href)
  url.protocol = url.protocol == "https:" ? "wss:" : "ws:"
  return url.href
}

let noticeTimer = null
function notice(text) {
  let el = $("notice")
  el.textContent = text
  el.hidden = false
  clearTimeout(noticeTimer)
  noticeTimer = setTimeout(() => { el.hidden = true }, 10000)
}

function showStatus({ status, detail, retryIn }) {
  let el = $("status")
  el.dataset.status = status
  let text = status == "online" ? "Online" : status == "connecting" ? "Connecting…" : "Offline"
  if (status == "offline") {
    if (detail) text += ": " + detail
    if (retryIn) text += `, retrying in ${Math.max(1, Math.round(retryIn / 1000))} s`
  }
  $("status-text").textContent = text
}

let shownPeers = ""
function showPeers({ users, peers }) {
  let key = users + "|" + peers.map(p => `${p.clientID}:${p.name}:${p.color}`).join("|")
  if (key == shownPeers) return
  shownPeers = key
  // The server counts users by address; every open editor announces
  // itself with presence, so the larger number is the better one.
  let n = users ? Math.max(users, peers.length + 1) : 0
  $("users").textContent = n ? `${n} user${n == 1 ? "" : "s"}` : ""
  let list = $("peers")
  list.replaceChildren(...peers.map(p =>
    h("li", { class: "peer", title: peerName(p) },
      h("span", { class: "swatch", style: `background-color: ${safeColor(p.color)}` }), peerName(p))))
}

function menu() {
  let items = buildMenuItems(schema)
  items.fullMenu[0].push(new MenuItem({
    title: "Comment the selection (Ctrl-Alt-M)",
    run: addComment,
    select: state => addComment(state),
    icon: commentIcon,
  }))
  return items.fullMenu
}

function start() {
  let id = docIDFromPath()
  if (!id) {
    $("docname").textContent = "invalid document name"
    notice("This is not a valid document name. Names are 1 to 128 letters, digits or . _ ~ -")
    showStatus({ status: "offline", detail: "no document" })
    return
  }
  document.title = id + " · pmauthority"
  $("docname").textContent = id

  // With a token, a role below edit makes the page read-only (the
  // server refuses such a connection's steps anyway).
  let token = loadToken()
  let readOnly = false
  if (token) {
    let role = roleOf(token, id)
    readOnly = !mayEdit(role)
    if (readOnly) {
      let badge = h("span", { id: "role", class: "badge", title: "Your token does not allow editing this document" },
        role == "comment" ? "comment only" : role == "read" ? "read-only" : "no access")
      $("docname").after(badge)
      document.body.classList.add("read-only")
    }
  }

  let identity = loadIdentity()
  let nameInput = $("name"), colorInput = $("color")
  nameInput.value = identity.name
  colorInput.value = identity.color

  // For the browser test and for poking around in the console.
  let pma = window.pma = { client: null, view: null }
  let view = null
  let client = new CollabClient({
    url: socketURL(id),
    schema,
    plugins: [
      keymap({ "Mod-Alt-m": addComment }),
      ...exampleSetup({ schema, menuContent: menu() }),
      commentTooltip(),
    ],
    name: identity.name,
    color: identity.color,
    token,
    onState(state) {
      if (view) {
        view.updateState(state)
      } else {
        view = new EditorView($("editor"), {
          state,
          editable: () => !readOnly,
          // The menu's commands too: no local change of a read-only doc.
          dispatchTransaction: tr => { if (!(readOnly && tr.docChanged)) client.dispatch(tr) },
        })
        pma.view = view
        view.focus()
      }
    },
    onStatus: showStatus,
    onPeers: showPeers,
    onNotice: notice,
    // domObserver is internal to prosemirror-view (pinned); without it a
    // remote change may undo a cursor motion the view has not read yet.
    flush: () => view?.domObserver?.flush(),
  })
  pma.client = client

  let identityTimer = null
  let identityChanged = () => {
    clearTimeout(identityTimer)
    identityTimer = setTimeout(() => {
      let name = nameInput.value.trim().slice(0, 64)
      let color = isColor(colorInput.value) ? colorInput.value : identity.color
      if (!name) return
      saveIdentity(name, color)
      client.setIdentity(name, color)
    }, 600)
  }
  nameInput.addEventListener("input", identityChanged)
  colorInput.addEventListener("input", identityChanged)
  $("identity").addEventListener("submit", e => {
    e.preventDefault()
    view?.focus()
  })
  addEventListener("online", () => { if (!client.welcomed) client.reconnectNow() })
}

start()
