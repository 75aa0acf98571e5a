// The editor page, /edit/{id}: a ProseMirror editor with the example
// setup's menu, collaborating live through CollabClient. Its URLs are
// relative to the page, so that it works under any prefix.

import "prosemirror-view/style/prosemirror.css"
import "prosemirror-menu/style/menu.css"
import "prosemirror-example-setup/style/style.css"
import "./style.css"

import { TextSelection } from "prosemirror-state"
import { EditorView } from "prosemirror-view"
import { keymap, keydownHandler } from "prosemirror-keymap"
import { MenuItem, Dropdown, DropdownSubmenu } from "prosemirror-menu"
import { exampleSetup, buildMenuItems } from "prosemirror-example-setup"

import { schema } from "./schema.js"
import { CollabClient } from "../client/src/client.js"
import { commentIcon } from "../client/src/comments.js"
import { CommentsPanel } from "./panel.js"
import { HistoryPanel, changesPlugin } from "./history.js"
import { safeColor, peerName } from "../client/src/presence.js"
import { loadIdentity, saveIdentity, isColor, pickColor } from "./identity.js"
import { validDocID } from "./docid.js"
import { loadToken, roleOf, mayEdit, mayComment, nameOf, subOf } from "./token.js"
import { h } from "../client/src/dom.js"

const $ = id => document.getElementById(id)

function docIDFromPath() {
  let m = /\/edit\/([^/]+)$/.exec(location.pathname)
  if (!m) return null
  let id
  try { id = decodeURIComponent(m[1]) } catch { return null }
  return validDocID(id) ? id : null
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

// showAuthFailure says why the server refused the page, until reload.
function showAuthFailure(text) {
  clearTimeout(noticeTimer)
  let el = $("notice")
  el.textContent = text
  el.dataset.kind = "auth"
  el.hidden = false
}

let lastStatus = { status: "connecting", detail: "", retryIn: 0 }, shownUnsaved = -1

// showStatus shows the connection state and, while the server does not
// have them, how many local changes are not saved yet.
function showStatus(status) {
  lastStatus = status
  let el = $("status")
  el.dataset.status = status.status
  let text = status.status == "online" ? "Online" : status.status == "connecting" ? "Connecting…" : "Offline"
  if (status.status == "offline") {
    if (status.detail) text += ": " + status.detail
    if (status.retryIn) text += `, retrying in ${Math.max(1, Math.round(status.retryIn / 1000))} s`
  }
  $("status-text").textContent = text
  shownUnsaved = -1
  showUnsaved()
}

function showUnsaved() {
  let client = window.pma?.client
  let n = client ? client.unsaved : 0
  // While online, changes in flight are saved within moments: say it
  // only when the connection is down.
  if (lastStatus.status == "online") n = 0
  if (n == shownUnsaved) return
  shownUnsaved = n
  let el = $("unsaved")
  el.textContent = n ? `${n} change${n == 1 ? "" : "s"} not saved yet` : ""
  el.dataset.count = String(n)
  el.hidden = !n
}

let shownPeers = ""
function showPeers({ users, peers }) {
  let key = users + "|" + peers.map(p => `${p.clientID}:${p.name}:${p.color}`).join("|")
  if (key == shownPeers) return
  shownPeers = key
  // The server's count, the one the list page shows: with a token its
  // sub, else its address, is one user however many tabs it has open
  // (the peers list shows every tab).
  let n = users || 0
  $("users").textContent = n ? `${n} user${n == 1 ? "" : "s"}` : ""
  let list = $("peers")
  list.replaceChildren(...peers.map(p =>
    h("li", { class: "peer", title: peerName(p) },
      h("span", { class: "swatch", style: `background-color: ${safeColor(p.color)}` }), peerName(p))))
}

// menu is the example setup's menu plus the comment button, which is
// always there (greyed out without a selection), so the bar never shifts.
// With readOnly every item but the comment button is disabled.
function menu(comment, readOnly) {
  let items = buildMenuItems(schema)
  let full = readOnly ? items.fullMenu.map(group => group.map(disabled)) : items.fullMenu
  full[0].push(new MenuItem({
    title: "Comment the selection (Ctrl-Alt-M)",
    run: comment,
    enable: state => comment(state),
    icon: commentIcon,
  }))
  return full
}

// disabled returns the menu element el with its items disabled (shown
// greyed out, never run). A dropdown's content and options are internal
// to prosemirror-menu (pinned).
function disabled(el) {
  if (el instanceof MenuItem) return new MenuItem({ ...el.spec, enable: () => false })
  if (el instanceof Dropdown) return new Dropdown(el.content.map(disabled), el.options)
  if (el instanceof DropdownSubmenu) return new DropdownSubmenu(el.content.map(disabled), el.options)
  return el
}

// roleHint is what the page says a token's role allows.
function roleHint(role) {
  if (role == "read") return "You can read this document: editing and comments need another token."
  if (role == "comment") return "You can read and comment: select text, then press the speech bubble or Ctrl-Alt-M. Editing needs another token."
  return "Your token gives no access to this document."
}

function start() {
  let id = docIDFromPath()
  if (!id) {
    $("docname").textContent = "invalid document name"
    notice("This is not a valid document name: a name is 1 to 512 bytes of text without control characters, and not . or ..")
    showStatus({ status: "offline", detail: "no document" })
    return
  }
  document.title = id + " · pmauthority"
  $("docname").textContent = id

  // With a token, a role below edit makes the page read-only (the
  // server refuses such a connection's steps anyway).
  let token = loadToken()
  let readOnly = false, noComments = false, role = ""
  if (token) {
    role = roleOf(token, id)
    readOnly = !mayEdit(role)
    noComments = !mayComment(role)
    if (readOnly) {
      let badge = h("span", { id: "role", class: "badge", title: "Your token does not allow editing this document" },
        role == "comment" ? "comment only" : role == "read" ? "read-only" : "no access")
      $("docname").after(badge)
      document.body.classList.add("read-only")
      $("hint").textContent = roleHint(role)
    }
  }

  let identity = loadIdentity()
  let nameInput = $("name"), colorInput = $("color")
  // With a token, others see the name it gives (the server ignores the
  // one in hello): show that one, not to be changed here.
  let tokenName = token ? nameOf(token) : "", ownName = identity.name
  if (tokenName) {
    identity.name = tokenName
    nameInput.readOnly = true
    nameInput.title = "The name your token gives; others see this one"
  }
  nameInput.value = identity.name
  colorInput.value = identity.color
  let applyIdentity = () => {
    // A token's name is not kept as the default name of new tabs.
    saveIdentity(tokenName ? ownName : identity.name, identity.color, identity.chosen)
    client.setIdentity(identity.name, identity.color)
  }

  // For the browser test and for poking around in the console.
  let pma = window.pma = { client: null, view: null, history: null, prosemirror: { TextSelection } }
  let view = null
  let panel = new CommentsPanel($("comments"), () => identity.name, {
    readOnly: noComments, principal: token ? subOf(token) : "", admin: !!token && roleOf(token, id) == "admin",
  })
  let historyPanel = new HistoryPanel($("history"), { id, token, canEdit: !readOnly, view: () => view, schema })
  pma.history = historyPanel
  let historyToggle = $("history-toggle")
  historyToggle.addEventListener("click", () => historyPanel.toggle())
  historyPanel.onToggle = open => historyToggle.setAttribute("aria-expanded", String(open))
  // A view that is not editable runs no keymaps: the comment key of a
  // comment-only page is handled here (keydown of the view's DOM).
  let commentKey = keydownHandler({ "Mod-Alt-m": panel.start })
  let client = new CollabClient({
    url: socketURL(id),
    schema,
    plugins: [
      keymap({ "Mod-Alt-m": panel.start }),
      ...exampleSetup({ schema, menuContent: menu(panel.start, readOnly) }),
      changesPlugin,
    ],
    name: identity.name,
    color: identity.color,
    token,
    onState(state) {
      showUnsaved()
      if (view) {
        view.updateState(state)
      } else {
        view = new EditorView($("editor"), {
          state,
          editable: () => !readOnly,
          // Focusable when not editable, so that it gets the comment key.
          attributes: readOnly ? { tabindex: "0" } : {},
          handleDOMEvents: {
            keydown(view, e) {
              if (view.editable || !commentKey(view, e)) return false
              e.preventDefault()
              return true
            },
          },
          // The menu's commands too: no local change of a read-only doc.
          dispatchTransaction: tr => { if (!(readOnly && tr.docChanged)) client.dispatch(tr) },
        })
        pma.view = view
        view.focus()
      }
      panel.update(view)
      historyPanel.update(view)
    },
    onStatus: showStatus,
    onPeers(info) {
      showPeers(info)
      // A colour nobody else on the document has (unless the user chose it).
      if (identity.chosen || !info.users) return
      let color = pickColor(client.clientID, identity.color, info.peers)
      if (color == identity.color) return
      identity.color = colorInput.value = color
      applyIdentity()
    },
    onNotice: notice,
    // The token was refused (401, 403): the client stops retrying until
    // the page gets another token.
    onAuthenticationFailed({ status, reason }) {
      let why = status == 401 ? "The server did not accept your token" : "Your token does not allow this document"
      showAuthFailure(`${why} (${status}: ${reason}). Open the page with a valid token (#token=…).`)
    },
    // domObserver is internal to prosemirror-view (pinned); without it a
    // remote change may undo a cursor motion the view has not read yet.
    flush: () => view?.domObserver?.flush(),
  })
  pma.client = client

  let identityTimer = null
  // A new name or colour reconnects (they travel in hello): wait until
  // the typing or the dragging in the colour picker pauses.
  let identityChanged = () => {
    clearTimeout(identityTimer)
    identityTimer = setTimeout(() => {
      let name = nameInput.value.trim().slice(0, 64)
      if (!name) return
      identity.name = name
      applyIdentity()
    }, 600)
  }
  if (!tokenName) nameInput.addEventListener("input", identityChanged)
  colorInput.addEventListener("input", () => {
    if (!isColor(colorInput.value)) return
    identity.color = colorInput.value
    identity.chosen = true
    identityChanged()
  })
  $("identity").addEventListener("submit", e => {
    e.preventDefault()
    view?.focus()
  })
}

start()
