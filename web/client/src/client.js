// CollabClient connects an editor state to a pmauthority document over
// the WebSocket protocol (docs/protocol.md): prosemirror-collab for the
// steps, the comment events for comments, presence for the cursors.
//
// The client owns the EditorState. Local transactions go through
// dispatch; every new state is handed to onState, which the page uses to
// update its EditorView (a state created from a snapshot has new plugin
// instances, which EditorView.updateState handles).
//
// Two modes (the hello's mode): "commit" (the default) sends the
// unconfirmed steps in commit messages, which the server rebases itself
// (docs/protocol.md, "Commit mode"); "classic" sends steps messages as
// prosemirror-collab's own clients do, and rebases on a conflict.

import { EditorState, NodeSelection, Selection, TextSelection } from "prosemirror-state"
import { Step } from "prosemirror-transform"
import { collab, receiveTransaction, sendableSteps, getVersion } from "prosemirror-collab"
import { commentsKey, commentsPlugin } from "./comments.js"
import { presenceKey, presencePlugin } from "./presence.js"
import { UnsavedStore } from "./persist.js"

const minBackoff = 500 // ms, the first reconnection delay (before jitter)
const maxBackoff = 10000 // while the server cannot be reached
const maxBackoffReached = 3000 // while it answers (the last attempt opened)
const presenceInterval = 100 // ms between two presence messages
const maxSteps = 500 // steps per submission (the server's default limit is 1,000)
const keptMaps = 2000 // step maps kept to map presence from older versions
const pingAfter = 20000 // ms without a message before a ping
const deadAfter = 45000 // ms without a message before the connection is given up
const offlineProbe = 4000 // ms for an answer to the ping sent when the browser goes offline
const refreshLead = 60000 // ms before a token's exp when a token function is asked for a fresh one
const maxTimer = 2 ** 30 // ms, below setTimeout's limit (2^31 − 1)
const saveEvery = 200 // ms between two writes of the unconfirmed changes to IndexedDB

function noop() {}

// collabPlugin returns the collab plugin of state (prosemirror-collab
// exports neither its key nor its state class: both are reached from it).
function collabPlugin(state) {
  let plugin = state.plugins.find(p => p.spec.historyPreserveItems && p.spec.config && "clientID" in p.spec.config)
  if (!plugin) throw new Error("no collab plugin in the editor state")
  return plugin
}

// refSession returns a random prefix for the refs of this client's
// commits: a ref is unique per document, also across page loads reusing a
// client id (the persist option, a fixed clientID option).
function refSession(clientID) {
  let id = String(clientID)
  let random = Math.floor(Math.random() * 2 ** 48).toString(36)
  return (id.length <= 32 ? id + "-" : "") + random
}

// guardNodeSelection works around a crash of prosemirror-state 1.4.4:
// NodeSelection.map builds a NodeSelection at the mapped position unless
// the mapping says the node was deleted, and throws when no node is there
// (seen in the tests' long-poll editors, mapping a node selection through a
// receiveTransaction rebase). tr then gets what NodeSelection.map gives a
// deleted node: Selection.near.
export function guardNodeSelection(state, tr) {
  let sel = state.selection
  if (!(sel instanceof NodeSelection) || !tr.docChanged || tr.selectionSet) return tr
  let { deleted, pos } = tr.mapping.mapResult(sel.anchor)
  let $pos = tr.doc.resolve(pos)
  if (!deleted && !$pos.nodeAfter) tr.setSelection(Selection.near($pos))
  return tr
}

// backoff returns the delay before the next attempt after n failed ones:
// exponential from minBackoff to max, jittered down by up to half.
function backoff(n, max = maxBackoff) {
  let base = Math.min(max, minBackoff * 2 ** Math.min(n, 16))
  return Math.round(base / 2 + Math.random() * base / 2)
}

// truncate cuts s to at most n UTF-16 units without splitting a
// surrogate pair (the server counts names in UTF-16 units).
function truncate(s, n) {
  if (s.length <= n) return s
  let code = s.charCodeAt(n - 1)
  return s.slice(0, code >= 0xd800 && code < 0xdc00 ? n - 1 : n)
}

// tokenExpiry returns the exp of a JWT in milliseconds since 1970, or 0
// when token is not a JWT with a numeric exp (an opaque token).
function tokenExpiry(token) {
  try {
    let part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")
    // atob gives the payload's bytes as Latin-1: exp, a JSON number, reads
    // the same whatever the other claims hold.
    let exp = JSON.parse(atob(part)).exp
    return typeof exp == "number" && isFinite(exp) && exp > 0 ? exp * 1000 : 0
  } catch {
    return 0
  }
}

// randomClientID returns a prosemirror-collab client id: a positive
// integer below 2^32, as the reference client uses.
function randomClientID() {
  return Math.floor(Math.random() * 0xfffffffe) + 1
}

// CollabClient keeps one document in sync. Options:
//   url       the WebSocket URL (ws[s]://host/docs/{id}/ws)
//   schema    the document's schema
//   plugins   the editor plugins (menu, keymaps, history …); the client
//             adds collab, comments and presence
//   name, color  shown to the other clients
//   data      more presence fields shown to the other clients: a JSON
//             object, at most the server's --max-presence-data (512 bytes
//             of JSON by default), sent in hello
//   onState(state, replaced)  a new editor state (replaced: from a snapshot)
//   onStatus({status, detail, retryIn})  status is "connecting",
//             "online" or "offline"; detail says why when there is a reason
//   onPeers({users, peers})  users is the server's count, peers the other
//             clients that announced themselves ({clientID, name, color,
//             data})
//   onNotice(text)  something the user should know (a refused change)
//   onSynced()  the server has every local change and the connection is
//             up: after the welcome or snapshot, and again each time the
//             last unconfirmed change is confirmed (synced turns true)
//   onUnsyncedChanges(n)  the number of local changes the server does
//             not have yet (unsaved) changed
//   onAuthenticationFailed({status, reason})  the server refused the
//             token (error 401 or 403 to the hello, then close 1008; or a
//             string token expired, 4401): the client stops retrying
//             until setToken or reconnectNow
//   warnOnUnload  false turns off the beforeunload warning the client
//             adds while there are unsaved changes (default true)
//   persist   a name (e.g. the document id) under which the unconfirmed
//             changes are kept in IndexedDB while there are any: a new
//             client of that name takes them up (its first state is the
//             saved one) and sends them once connected. Default none
//   flush()   called before a server message changes the state, to
//             dispatch what the view has not read from the DOM yet (a
//             native cursor motion such as End is read on the next
//             selectionchange; a remote update before it would undo it)
//   token     the credential sent in hello (docs/auth.md): a string, or
//             a function returning one (or a promise of one), called
//             before every connection attempt and, for a JWT with an exp,
//             again about a minute before it expires, to send the fresh
//             token in band (a token message) on the open connection
//   WebSocket the WebSocket class to connect with (default
//             globalThis.WebSocket; in node, e.g. the ws package's)
//   mode      "commit" (default): the server rebases the local steps
//             (commit messages, docs/protocol.md "Commit mode"); "classic":
//             steps messages, rebased here after a conflict, as with a
//             prosemirror-collab server that has no commit mode
export class CollabClient {
  constructor(options) {
    this.url = options.url
    this.schema = options.schema
    this.plugins = options.plugins || []
    this.name = options.name || ""
    this.color = options.color || ""
    this.data = options.data ?? null
    this.onState = options.onState || noop
    this.onStatus = options.onStatus || noop
    this.onPeers = options.onPeers || noop
    this.onNotice = options.onNotice || noop
    this.onSynced = options.onSynced || noop
    this.onUnsyncedChanges = options.onUnsyncedChanges || noop
    this.onAuthenticationFailed = options.onAuthenticationFailed || noop
    this.warnOnUnload = options.warnOnUnload ?? true
    this.flush = options.flush || noop
    this.token = options.token ?? null
    this.clientID = options.clientID ?? randomClientID()
    this.WebSocket = options.WebSocket || globalThis.WebSocket
    this.mode = options.mode ?? "commit"
    if (this.mode != "commit" && this.mode != "classic") throw new Error(`mode is "commit" or "classic", not ${JSON.stringify(this.mode)}`)

    this.state = null
    this.ws = null
    this.welcomed = false // the server answered hello: messages may be sent
    this.resync = false // the next hello asks for a snapshot
    this.inFlight = null // {id, version, events}: the submission awaiting its answer (classic mode)
    // Commit mode: the commit in flight, {id, ref, version, steps, json,
    // events, sent}, kept across reconnections (sent again under its ref
    // until answered), and the steps pushed since its version, buffered
    // ({version, steps, clientIDs, comment, commentVersion} messages) until
    // its answer says which of them are its own.
    this.commitOut = null
    this.buffer = []
    this.refPrefix = refSession(this.clientID)
    this.commits = 0
    this.blockedAt = -1 // after a conflict at version v, nothing is sent before a version > v
    this.nextID = 1
    this.failures = 0 // connection attempts since the last success
    this.retryTimer = null
    this.sendFailures = 0 // submissions refused in a row by a server failure (5xx)
    this.sendTimer = null // the wait before sending again after such a refusal
    this.heartbeat = null
    this.lastMessageAt = 0
    this.users = 0
    this.sentToken = "" // the token of the connection (its hello's or the last accepted refresh)
    this.refreshTimer = null // the in-band refresh before sentToken expires
    this.tokenRequests = new Map() // id of a token message → {token, resolve}

    // Step maps of the versions [mapsFrom, mapsFrom + maps.length), to
    // map presence sent at an older version.
    this.maps = []
    this.mapsFrom = 0
    this.pending = [] // presence of versions this client has not reached yet
    this.presenceTimer = null
    this.lastPresence = ""
    this.lastPresenceAt = 0

    // What onSynced and onUnsyncedChanges last reported, and whether the
    // beforeunload warning is on.
    this.wasSynced = false
    this.lastUnsaved = 0
    this.warning = false
    // The beforeunload listener, added while there are unsaved changes:
    // the browser asks before the tab closes or navigates away.
    this.unloadWarning = e => {
      e.preventDefault()
      // Older browsers (Chrome before 119) ask only when returnValue is
      // set; an Event that is not a BeforeUnloadEvent has it read-only.
      try { e.returnValue = true } catch { /* not a BeforeUnloadEvent */ }
    }
    // authError: the hello's error 401 or 403, before the close 1008;
    // authFailed: the client stopped after it, until setToken.
    this.authError = null
    this.authFailed = false

    // persist: the IndexedDB store of the unconfirmed changes (null
    // without the option or without IndexedDB). confirmedDoc is the
    // document at the confirmed version, which a saved record needs.
    this.persist = options.persist && UnsavedStore.available() ? new UnsavedStore(String(options.persist), globalThis.indexedDB) : null
    this.confirmedDoc = null
    this.saveTimer = null
    this.saved = false // a record of this client id is in the store
    this.saving = null // the last write (a promise), for tests
    this.restoring = false // restore is reading the store: connect waits
    this.restored = false // the state came from the store, and no welcome or snapshot yet
    this.saveNow = () => {
      if (this.saveTimer) {
        clearTimeout(this.saveTimer)
        this.save()
      }
    }

    this.closed = false
    // gone: the server closed with 4404 (the document was deleted, or
    // does not exist); the client waits for reconnectNow.
    this.gone = false
    this.reached = false // the last connection attempt opened
    // A browser that comes back online, or a tab shown again, reconnects
    // at once instead of waiting out the back-off.
    this.wake = () => {
      if (globalThis.document?.visibilityState == "hidden") return
      if (!this.closed && !this.gone && !this.authFailed && !this.restoring && !this.welcomed && !this.connecting) this.reconnectNow()
    }
    // Gone offline: a connection that still answers a ping is kept (a
    // server on this machine), a silent one is given up at once rather
    // than after deadAfter.
    this.probeTimer = null
    this.probe = () => {
      if (!this.welcomed || this.probeTimer) return
      let sentAt = Date.now()
      this.send({ type: "ping" })
      this.probeTimer = setTimeout(() => {
        this.probeTimer = null
        if (this.welcomed && this.lastMessageAt < sentAt) this.giveUp("the network is down")
      }, offlineProbe)
    }
    globalThis.addEventListener?.("online", this.wake)
    globalThis.addEventListener?.("offline", this.probe)
    globalThis.document?.addEventListener?.("visibilitychange", this.wake)
    if (this.persist) {
      // A page being hidden or closed writes at once what waits.
      globalThis.addEventListener?.("pagehide", this.saveNow)
      globalThis.document?.addEventListener?.("visibilitychange", this.saveNow)
      this.restoring = true
      this.restore().then(() => {
        this.restoring = false
        if (!this.closed) this.connect()
      })
    } else {
      this.connect()
    }
  }

  // restore takes up the unconfirmed changes another client of the
  // persist name saved (claim), as the first state: the saved document
  // at its version with the saved steps applied on top and the comment
  // events queued again. Its client id becomes this client's, so that
  // steps the server took before the page went are recognised as ours.
  async restore() {
    let record
    try {
      record = await this.persist.claim()
    } catch (e) {
      this.onNotice("Could not read the unsaved changes kept in this browser: " + String(e?.message || e))
      return
    }
    if (!record || this.closed || this.state) return
    try {
      let doc = this.schema.nodeFromJSON(record.doc)
      let state = EditorState.create({
        doc,
        plugins: this.plugins.concat(collab({ version: record.version, clientID: record.clientID }), commentsPlugin(), presencePlugin()),
        comments: { version: record.commentVersion, threadVersion: record.threadVersion || 0, comments: record.comments },
      })
      let tr = state.tr
      for (let json of record.steps) {
        let result = tr.maybeStep(Step.fromJSON(this.schema, json))
        if (result.failed) throw new Error(result.failed)
      }
      state = state.apply(tr)
      // A commit the page had in flight: sent again as it was (its answer
      // may have been lost with the page).
      let out = record.commit
      if (this.mode == "commit" && out && typeof out.ref == "string" && Number.isInteger(out.count) && out.count > 0 && out.count <= tr.steps.length) {
        let steps = tr.steps.slice(0, out.count)
        this.commitOut = { id: 0, ref: out.ref, version: record.version, steps, json: steps.map(s => s.toJSON()), events: out.events || [], sent: false }
      }
      // The comment events, in the document after the steps, queued
      // again as the commands queue them.
      for (let e of record.events)
        state = state.apply(state.tr.setMeta(commentsKey, e.type == "create" ? { ...e, type: "add" } : e))
      if (this.clientID !== record.clientID) this.refPrefix = refSession(record.clientID)
      this.clientID = record.clientID
      this.restored = true
      this.confirmedDoc = doc
      this.maps = []
      this.mapsFrom = record.version
      this.state = state
    } catch (e) {
      this.onNotice("The unsaved changes kept in this browser do not fit this document: " + String(e?.message || e))
      return
    }
    this.onState(this.state, true)
    this.onNotice(`Restored ${record.steps.length} unsaved change${record.steps.length == 1 ? "" : "s"} from this browser`)
    this.changed()
  }

  // scheduleSave writes the unconfirmed changes to IndexedDB soon, or
  // deletes the record once there are none.
  scheduleSave() {
    if (!this.persist || !this.state || !this.confirmedDoc) return
    if (this.saveTimer) return
    this.saveTimer = setTimeout(() => this.save(), saveEvery)
  }

  // save writes the record of this client's unconfirmed changes, or
  // deletes it when there are none left.
  save() {
    clearTimeout(this.saveTimer)
    this.saveTimer = null
    let state = this.state
    if (!state || !this.confirmedDoc) return
    let sendable = sendableSteps(state)
    let cs = commentsKey.getState(state)
    let events = cs.unsentEvents()
    let write
    if (!sendable && !events.length) {
      if (!this.saved) return
      this.saved = false
      write = this.persist.delete(this.clientID)
    } else {
      let created = new Set(events.filter(e => e.type == "create").map(e => e.id))
      let comments = cs.all().filter(c => !created.has(c.id)).map(c => ({
        ...c, from: this.toConfirmed(state, c.from), to: this.toConfirmed(state, c.to),
      })).filter(c => c.from < c.to)
      this.saved = true
      write = this.persist.put(this.clientID, {
        version: getVersion(state), doc: this.confirmedDoc.toJSON(), steps: sendable ? sendable.steps.map(s => s.toJSON()) : [],
        commentVersion: cs.version, threadVersion: cs.threadVersion, comments, events, savedAt: Date.now(),
        commit: this.commitOut ? { ref: this.commitOut.ref, count: this.commitOut.steps.length, events: this.commitOut.events } : null,
      })
    }
    this.saving = write.catch(e => this.onNotice("Could not keep the unsaved changes in this browser: " + String(e?.message || e)))
  }

  // connecting tells whether an attempt is under way (the socket is
  // open or opening, not yet welcomed).
  get connecting() {
    return !!this.ws && !this.welcomed
  }

  // unsaved is the number of local changes the server does not have
  // yet: unconfirmed steps and unsent comment events.
  get unsaved() {
    if (!this.state) return 0
    let sendable = sendableSteps(this.state)
    return (sendable ? sendable.steps.length : 0) + commentsKey.getState(this.state).unsentEvents().length
  }

  // hasUnsyncedChanges tells whether there are local changes the server
  // does not have yet (unsaved > 0).
  get hasUnsyncedChanges() {
    return this.unsaved > 0
  }

  // synced tells whether the server has every local change (steps and
  // comments) and the connection is up.
  get synced() {
    return this.welcomed && !this.inFlight && !this.commitOut && !!this.state && !sendableSteps(this.state) &&
      commentsKey.getState(this.state).unsentEvents().length == 0
  }

  // changed reports what a change of state or connection did to synced
  // and unsaved: onSynced when synced turns true, onUnsyncedChanges when
  // unsaved changes, and the beforeunload warning on while unsaved.
  changed() {
    let unsaved = this.unsaved
    let warn = unsaved > 0 && this.warnOnUnload && !this.closed
    if (warn != this.warning) {
      this.warning = warn
      if (warn) globalThis.addEventListener?.("beforeunload", this.unloadWarning)
      else globalThis.removeEventListener?.("beforeunload", this.unloadWarning)
    }
    if (unsaved != this.lastUnsaved) {
      this.lastUnsaved = unsaved
      this.onUnsyncedChanges(unsaved)
    }
    if (this.persist && (unsaved > 0 || this.saved)) this.scheduleSave()
    let synced = this.synced
    if (synced != this.wasSynced) {
      this.wasSynced = synced
      if (synced) this.onSynced()
    }
  }

  // dispatch applies a local transaction.
  dispatch(tr) {
    if (!this.state) return
    this.state = this.state.apply(tr)
    this.onState(this.state, false)
    if (tr.docChanged || tr.getMeta(commentsKey)) this.trySend()
    if (tr.docChanged || tr.selectionSet) this.schedulePresence()
    this.changed()
  }

  // setIdentity changes the name and colour shown to the others; they
  // travel in hello, so the client reconnects.
  setIdentity(name, color) {
    if (name == this.name && color == this.color) return
    this.name = name
    this.color = color
    if (this.ws || this.retryTimer) this.reconnectNow()
  }

  // setPresenceData replaces the data option (the presence fields shown
  // to the others); it travels in hello, so the client reconnects.
  setPresenceData(data) {
    data = data ?? null
    if (JSON.stringify(data) == JSON.stringify(this.data)) return
    this.data = data
    if (this.ws || this.retryTimer) this.reconnectNow()
  }

  // setToken replaces the token option: the next connection's hello
  // carries it, and an open connection is sent it in band at once
  // (refreshToken). It returns refreshToken's promise. After an
  // authentication failure it connects again, with the new token (the
  // promise then resolves to false: nothing went in band).
  setToken(token) {
    this.token = token ?? null
    if (this.authFailed) {
      this.reconnectNow()
      return Promise.resolve(false)
    }
    return this.refreshToken()
  }

  // refreshToken sends the open connection the token option's token (a
  // function's is asked for a fresh one) in a token message: the server
  // takes it when it is valid and for the connection's principal, and the
  // connection then expires with it instead of its hello's token
  // (docs/protocol.md). It resolves to true when the server took it, and
  // to false when it refused it (a notice says why), when there is no
  // connection that has been welcomed (the next hello carries the token),
  // or when the connection was lost before the answer.
  async refreshToken() {
    let ws = this.ws
    if (!ws || !this.welcomed) return false
    let token
    try {
      token = typeof this.token == "function" ? await this.token() : this.token
    } catch (e) {
      this.onNotice("Could not get a fresh token: " + String(e?.message || e))
      return false
    }
    if (ws !== this.ws || !this.welcomed || typeof token != "string" || !token) return false
    let id = this.nextID++
    let answer = new Promise(resolve => this.tokenRequests.set(id, { token, resolve }))
    this.send({ type: "token", id, token })
    return answer
  }

  // tokenAnswered settles the token message id: accepted, the token is
  // the connection's, and the next refresh is planned by its exp.
  tokenAnswered(id, accepted, text) {
    let req = this.tokenRequests.get(id)
    if (!req) return false
    this.tokenRequests.delete(id)
    if (accepted) {
      let later = tokenExpiry(req.token) > tokenExpiry(this.sentToken)
      this.sentToken = req.token
      // A token no later than the previous one would only be asked for
      // again and again: the server closes with 4401 at its exp, and the
      // reconnection asks the token function for a fresh one.
      if (later) this.scheduleRefresh()
    } else {
      this.onNotice("The server refused the new token: " + text)
    }
    req.resolve(accepted)
    return true
  }

  // scheduleRefresh plans the in-band refresh of a token function's
  // token: refreshLead before its exp (half its remaining life when that
  // is shorter). Nothing for a string token, which only the app can
  // replace (setToken), or one without exp.
  scheduleRefresh() {
    clearTimeout(this.refreshTimer)
    this.refreshTimer = null
    let exp = tokenExpiry(this.sentToken)
    if (typeof this.token != "function" || !exp || !this.welcomed) return
    let left = exp - Date.now()
    let wait = left - Math.min(refreshLead, left / 2)
    if (wait > maxTimer) {
      this.refreshTimer = setTimeout(() => this.scheduleRefresh(), maxTimer)
      return
    }
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null
      this.refreshToken()
    }, Math.max(0, wait))
  }

  // reconnectNow drops the connection, or the wait for the next attempt,
  // and connects at once (e.g. when the browser comes back online).
  reconnectNow() {
    if (this.closed || this.restoring) return // it connects once restored
    this.gone = false
    this.authFailed = false
    this.drop()
    this.connect()
  }

  // close disconnects for good.
  close() {
    this.closed = true
    globalThis.removeEventListener?.("online", this.wake)
    globalThis.removeEventListener?.("offline", this.probe)
    globalThis.document?.removeEventListener?.("visibilitychange", this.wake)
    if (this.persist) {
      globalThis.removeEventListener?.("pagehide", this.saveNow)
      globalThis.document?.removeEventListener?.("visibilitychange", this.saveNow)
      this.saveNow()
    }
    this.drop()
    this.changed() // the warning off
  }

  // drop closes the connection without scheduling a new one.
  drop() {
    clearTimeout(this.retryTimer)
    this.retryTimer = null
    let ws = this.ws
    if (ws) {
      this.ws = null
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null
      ws.close(1000)
    }
    this.lost()
  }

  connect() {
    this.retryTimer = null
    this.status("connecting")
    let ws
    try {
      ws = new this.WebSocket(this.url, "pmauthority.v1")
    } catch (e) {
      this.disconnected(String(e.message || e))
      return
    }
    this.ws = ws
    this.reached = false
    this.authError = null
    ws.onopen = async () => {
      if (ws !== this.ws) return
      this.reached = true
      let token = this.token
      if (typeof token == "function") {
        try {
          token = await token()
        } catch (e) {
          if (ws !== this.ws) return
          this.giveUp("no token: " + String(e?.message || e))
          return
        }
      }
      if (ws !== this.ws) return
      let hello = { type: "hello", version: null, clientID: this.clientID, name: truncate(this.name, 64) }
      // Classic is the server's default: its hello is as it always was.
      if (this.mode == "commit") hello.mode = "commit"
      if (typeof token == "string" && token) hello.token = token
      this.sentToken = hello.token || ""
      if (/^#[0-9a-fA-F]{6}$/.test(this.color)) hello.color = this.color
      // The server takes an object only (and refuses the hello otherwise).
      if (this.data && typeof this.data == "object" && !Array.isArray(this.data)) hello.data = this.data
      if (this.state && !this.resync) {
        hello.version = getVersion(this.state)
        hello.commentVersion = commentsKey.getState(this.state).version
        hello.threadVersion = commentsKey.getState(this.state).threadVersion
      }
      this.lastMessageAt = Date.now()
      this.send(hello)
    }
    ws.onmessage = e => {
      if (ws !== this.ws) return
      this.lastMessageAt = Date.now()
      let msg
      try {
        msg = JSON.parse(e.data)
      } catch {
        this.restart("the server sent a malformed message")
        return
      }
      this.handle(msg)
    }
    ws.onclose = e => {
      if (ws !== this.ws) return
      this.ws = null
      this.closedWith(e.code, e.reason)
    }
  }

  closedWith(code, reason) {
    // 4404: the document was deleted, or does not exist. Reconnecting
    // would create it again on a server that creates documents when they
    // are used, so the client stays offline until reconnectNow (the
    // app's decision).
    if (code == 4404) {
      this.gone = true
      this.lost()
      this.status("offline", reason || "document deleted")
      return
    }
    // The hello's token was refused (error 401 or 403, then 1008), or a
    // string token expired (4401: sending it again would be refused):
    // retrying with the same token cannot succeed, so the client waits
    // for a new one (setToken). A token function's token that expired is
    // asked for again instead, by reconnecting.
    let auth = code == 1008 ? this.authError : null
    if (code == 4401 && typeof this.token != "function") auth = { status: 401, message: reason || "token expired" }
    if (auth) {
      this.authFailed = true
      this.lost()
      this.status("offline", "authentication failed: " + auth.message)
      this.onAuthenticationFailed({ status: auth.status, reason: auth.message })
      return
    }
    // 4400: our version is ahead of the server's; 1009: our message is
    // too big to ever be accepted. Both: start over from its document.
    if (code == 4400 || code == 1009) this.resync = true
    // A policy refusal (1008) is not a server that answers: back off fully.
    // 4401 (the connection's token expired) reconnects as soon as the
    // server answers, with the token option's token.
    if (code == 1008) this.reached = false
    let detail = reason || (code == 1006 ? "connection lost" : "closed (" + code + ")")
    if (code == 4401) detail = "token expired"
    // 1012 (service restart): the server drains; reconnect (to it once it
    // is back, or to another behind the same address) with the
    // unconfirmed steps, which the next welcome confirms or which are
    // sent again.
    if (code == 1001 || code == 1012) detail = "server restarting"
    this.disconnected(detail)
  }

  // disconnected schedules the next attempt, with jittered exponential
  // back-off.
  disconnected(detail) {
    this.lost()
    if (this.closed) return
    let delay = backoff(this.failures++, this.reached ? maxBackoffReached : maxBackoff)
    this.retryTimer = setTimeout(() => this.connect(), delay)
    this.status("offline", detail, delay)
  }

  // lost forgets what belonged to the connection.
  lost() {
    this.welcomed = false
    this.inFlight = null
    // A commit in flight stays, to be sent again (same ref) after the
    // next welcome, which brings the pushes it had buffered again.
    if (this.commitOut) this.commitOut.sent = false
    this.buffer = []
    this.blockedAt = -1
    clearTimeout(this.sendTimer) // a new connection sends after its welcome
    this.sendTimer = null
    this.pending = []
    this.lastPresence = ""
    clearTimeout(this.presenceTimer)
    this.presenceTimer = null
    clearInterval(this.heartbeat)
    this.heartbeat = null
    clearTimeout(this.probeTimer)
    this.probeTimer = null
    clearTimeout(this.refreshTimer)
    this.refreshTimer = null
    let requests = [...this.tokenRequests.values()]
    this.tokenRequests.clear()
    for (let req of requests) req.resolve(false)
    if (this.state && presenceKey.getState(this.state).peers.size) {
      this.state = this.commit(this.state, this.state.tr.setMeta(presenceKey, { reset: true }))
      this.onState(this.state, false)
    }
    this.peersChanged()
    this.changed()
  }

  // restart reconnects asking for a snapshot, which replaces the local
  // state (unconfirmed local changes are lost).
  restart(reason) {
    this.onNotice(reason + "; reloading the document")
    this.resync = true
    if (this.ws) {
      let ws = this.ws
      this.ws = null
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null
      ws.close(1000)
      this.disconnected(reason)
    }
  }

  send(msg) {
    if (this.ws && this.ws.readyState == this.WebSocket.OPEN) this.ws.send(JSON.stringify(msg))
  }

  status(status, detail, retryIn) {
    this.onStatus({ status, detail: detail || "", retryIn: retryIn || 0 })
  }

  handle(msg) {
    if (this.state && msg.type != "ack" && msg.type != "conflict" && msg.type != "pong" && msg.type != "token") this.flush()
    switch (msg.type) {
      case "snapshot": this.loadSnapshot(msg); break
      case "welcome": this.welcome(msg); break
      case "steps":
        if (!this.welcomed) break
        if (this.commitOut) this.hold(msg)
        else if (this.receive(msg)) this.afterChange()
        break
      case "ack": this.ack(msg); break
      case "committed": this.committed(msg); break
      case "conflict":
        if (this.inFlight && msg.id == this.inFlight.id) {
          // Wait for the steps that beat ours, then send again (rebased).
          this.blockedAt = this.inFlight.version
          this.inFlight = null
          this.trySend()
        }
        break
      case "error": this.refused(msg); break
      case "token": this.tokenAnswered(msg.id, true); break
      case "presence":
        if (this.welcomed) {
          this.setPeers(msg.version, msg.clients || [], msg.left || [], false)
          this.peersChanged()
        }
        break
    }
  }

  loadSnapshot(msg) {
    let doc
    try {
      doc = this.schema.nodeFromJSON(msg.doc)
    } catch (e) {
      this.onNotice("The server sent a document this editor cannot read: " + e.message)
      this.close()
      this.status("offline", "unreadable document")
      return
    }
    let config = {
      doc,
      plugins: this.plugins.concat(collab({ version: msg.version, clientID: this.clientID }), commentsPlugin(), presencePlugin()),
      comments: { version: msg.commentVersion || 0, threadVersion: msg.threadVersion || 0, comments: msg.comments || [] },
    }
    let old = this.state
    // Changes taken up from the browser (restore) that the server cannot
    // take any more (its history no longer reaches their version).
    let lost = old && this.restored ? sendableSteps(old)?.steps.length || 0 : 0
    if (lost) this.onNotice(`${lost} unsaved change${lost == 1 ? " was" : "s were"} kept in this browser but lost: the server sent the whole document`)
    this.restored = false
    // The snapshot replaces the local changes, a commit in flight among them.
    this.commitOut = null
    this.buffer = []
    if (old) {
      // Keep the cursor near where it was.
      let size = doc.content.size
      config.selection = TextSelection.between(doc.resolve(Math.min(old.selection.anchor, size)),
        doc.resolve(Math.min(old.selection.head, size)))
    }
    this.state = this.createState(config, msg)
    this.confirmedDoc = doc
    this.maps = []
    this.mapsFrom = msg.version
    this.resync = false
    this.online(msg)
    this.onState(this.state, true)
    this.setPeers(msg.version, msg.presence || [], [], false)
    this.peersChanged()
    this.afterChange()
  }

  welcome(msg) {
    if (!this.state) {
      this.restart("the server answered with a welcome instead of a snapshot")
      return
    }
    this.restored = false
    this.online(msg)
    if (this.commitOut) {
      // Its steps may hold the commit's (applied before the connection
      // was lost): they wait for its answer.
      if (!this.hold(msg)) return
    } else if (!this.receive(msg)) return
    this.setPeers(msg.version, msg.presence || [], [], true)
    this.peersChanged()
    this.afterChange()
  }

  online(msg) {
    this.welcomed = true
    this.failures = 0
    if (typeof msg.users == "number") this.users = msg.users
    this.status("online")
    clearInterval(this.heartbeat)
    this.heartbeat = setInterval(() => this.checkAlive(), pingAfter / 2)
    this.scheduleRefresh()
  }

  // checkAlive pings a quiet connection and gives up on a dead one (a
  // laptop that slept, a proxy that dropped the connection silently).
  checkAlive() {
    let quiet = Date.now() - this.lastMessageAt
    if (quiet > deadAfter) this.giveUp("no answer from the server")
    else if (quiet > pingAfter) this.send({ type: "ping" })
  }

  // giveUp drops a connection that stopped answering and schedules the
  // next attempt.
  giveUp(detail) {
    if (this.ws) {
      let ws = this.ws
      this.ws = null
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null
      ws.close(1000)
    }
    this.disconnected(detail)
  }

  // receive applies the steps and comment events of a welcome or a
  // push. It returns false when it had to restart.
  receive(msg) {
    let state = this.state
    let ours = getVersion(state)
    let json = msg.steps || [], clientIDs = msg.clientIDs || []
    let base = msg.version - json.length
    if (!Number.isInteger(msg.version) || base > ours) {
      this.restart(`missed the steps between versions ${ours} and ${base}`)
      return false
    }
    if (base < ours) { // some were already received
      json = json.slice(ours - base)
      clientIDs = clientIDs.slice(ours - base)
    }
    if (json.length) {
      let steps, tr
      try {
        steps = json.map(j => Step.fromJSON(this.schema, j))
        tr = receiveTransaction(state, steps, clientIDs, { mapSelectionBackward: true })
        // Steps clear the stored marks: keep a pending Mod-b across
        // someone else's typing.
        if (state.storedMarks) tr.setStoredMarks(state.storedMarks)
      } catch (e) {
        this.restart("a step from the server does not apply here (" + e.message + ")")
        return false
      }
      for (let step of steps) this.maps.push(step.getMap())
      // The server's steps apply to the document at our confirmed
      // version, ours among them: the next confirmed document (which a
      // record of the persist option holds).
      if (this.persist) {
        let confirmed = this.confirmedDoc
        for (let step of steps) {
          let result = confirmed && step.apply(confirmed)
          confirmed = result && !result.failed ? result.doc : null
        }
        this.confirmedDoc = confirmed
      }
      if (this.maps.length > keptMaps) {
        let drop = this.maps.length - keptMaps
        this.maps.splice(0, drop)
        this.mapsFrom += drop
      }
      state = this.commit(state, guardNodeSelection(state, tr))
    }
    let events = msg.comment || [], threads = Array.isArray(msg.threads) ? msg.threads : []
    let commentVersion = msg.commentVersion, threadVersion = msg.threadVersion
    let known = commentsKey.getState(state)
    if (events.length || threads.length || commentVersion > known.version || threadVersion > known.threadVersion) {
      // Positions of new comments (and of threads) are in the server's
      // document: move them over the local changes it does not have yet.
      let toLocal = e => ({ ...e, from: this.toLocal(state, e.from, 1), to: this.toLocal(state, e.to, -1) })
      let local = events.map(e => e.type != "create" ? e : toLocal(e))
      state = this.commit(state, state.tr.setMeta(commentsKey, { type: "receive", events: local, threads: threads.map(toLocal), version: commentVersion, threadVersion }))
    }
    if (typeof msg.users == "number") this.users = msg.users
    this.state = state
    this.onState(state, false)
    this.takePending()
    this.peersChanged()
    return true
  }

  // takePending sets the presence that waited for the version reached.
  takePending() {
    if (this.pending.length) {
      let pending = this.pending
      this.pending = []
      for (let p of pending) this.setPeers(p.version, p.clients, [], false)
    }
  }

  ack(msg) {
    let sent = this.inFlight
    if (!sent || msg.id != sent.id) return
    this.inFlight = null
    this.sendFailures = 0
    // The steps were confirmed by their push, which comes before the ack;
    // the comment events are known to the server now.
    if (sent.events.length)
      this.dispatchInternal(this.state.tr.setMeta(commentsKey, { type: "sent", events: sent.events }))
    this.trySend()
    this.changed()
  }

  refused(msg) {
    let text = `${msg.message || "error"} (${msg.status || "?"})`
    if (msg.id != null && this.tokenAnswered(msg.id, false, text)) return
    // Refused before the welcome: the policy refused the hello's token
    // (or its client id), and the close 1008 follows.
    if (msg.id == null && (msg.status == 401 || msg.status == 403) && !this.welcomed) {
      this.authError = { status: msg.status, message: msg.message || "refused" }
      return
    }
    // A 401 without id on a welcomed connection: its token expired, and
    // the close (4401) that follows says so in the status.
    if (msg.id == null && msg.status == 401 && this.welcomed) return
    let out = this.commitOut && this.commitOut.sent ? this.commitOut : null
    if (msg.id == null || !(this.inFlight || out) || msg.id != (out || this.inFlight).id) {
      this.onNotice("Server: " + text)
      return
    }
    this.inFlight = null
    if (out) out.sent = false // sent again (same ref) after the back-off, or dropped by the restart
    if (msg.status >= 500 || msg.status == 429) {
      // The server could not take the change (its storage failed, say),
      // or not yet (429: over its submission rate): nothing is wrong with
      // the steps, which stay and go again later.
      this.sendLater(text)
      return
    }
    if (msg.status == 400 && /invalid version/i.test(msg.message || "")) this.restart("The server is behind this editor")
    else this.restart("The server refused a change: " + text)
  }

  // sendLater sends the unconfirmed changes again after a back-off.
  sendLater(text) {
    let delay = backoff(this.sendFailures++)
    this.onNotice(`The server could not save a change: ${text}; trying again in ${Math.ceil(delay / 1000)} s`)
    clearTimeout(this.sendTimer)
    this.sendTimer = setTimeout(() => {
      this.sendTimer = null
      this.trySend()
    }, delay)
  }

  dispatchInternal(tr) {
    this.state = this.commit(this.state, tr)
    this.onState(this.state, false)
  }

  // commit applies tr, a transaction of the client's own (received
  // steps, presence, comment events), to state, the current state, and
  // returns the new state. A client that does not own the state (the
  // Tiptap extension's, tiptap.js) dispatches tr to its editor instead.
  commit(state, tr) {
    return state.apply(tr)
  }

  // createState returns the state of a snapshot: config is for
  // EditorState.create (the Tiptap extension's client, which is also
  // given the snapshot message, loads it into its editor instead).
  createState(config) {
    return EditorState.create(config)
  }

  afterChange() {
    this.trySend()
    this.schedulePresence()
    this.changed()
  }

  // trySend submits the unconfirmed steps and unsent comment events,
  // one submission at a time.
  trySend() {
    if (this.mode == "commit") return this.trySendCommit()
    if (!this.welcomed || this.inFlight || this.sendTimer || !this.state) return
    let state = this.state
    let version = getVersion(state)
    if (version <= this.blockedAt) return
    this.blockedAt = -1
    let sendable = sendableSteps(state)
    let steps = sendable ? sendable.steps : []
    let events = commentsKey.getState(state).unsentEvents()
    if (!steps.length && !events.length) return
    if (steps.length > maxSteps) {
      // The server takes a bounded number of steps per submission (a long
      // time offline makes many). Comment positions refer to the document
      // after all the steps: they wait for the last part.
      steps = steps.slice(0, maxSteps)
      events = []
    }
    let id = this.nextID++
    this.inFlight = { id, version, events }
    this.send({ type: "steps", id, version, steps: steps.map(s => s.toJSON()), clientID: this.clientID, comment: events })
  }

  // trySendCommit sends the commit in flight again (after a reconnection
  // or a back-off: same ref, version, steps and comment events), or a new
  // commit of what is sendable: at most one at a time.
  trySendCommit() {
    if (!this.welcomed || this.sendTimer || !this.state) return
    let c = this.commitOut
    if (!c) {
      let sendable = sendableSteps(this.state)
      let steps = sendable ? sendable.steps.slice() : []
      let events = commentsKey.getState(this.state).unsentEvents()
      if (!steps.length && !events.length) return
      if (steps.length > maxSteps) {
        // As for classic submissions: bounded, comments with the last part.
        steps = steps.slice(0, maxSteps)
        events = []
      }
      c = this.commitOut = {
        id: 0, ref: `${this.refPrefix}-${++this.commits}`, version: getVersion(this.state),
        steps, json: steps.map(s => s.toJSON()), events, sent: false,
      }
    }
    if (c.sent) return
    c.id = this.nextID++
    c.sent = true
    this.send({ type: "commit", id: c.id, version: c.version, ref: c.ref, clientID: this.clientID, steps: c.json, comment: c.events })
  }

  // hold buffers the steps of a push (or welcome) that came while a
  // commit is in flight. It returns false when it had to restart (a gap).
  hold(msg) {
    let known = this.commitOut.version
    for (let m of this.buffer) known = Math.max(known, m.version)
    let n = (msg.steps || []).length
    if (!Number.isInteger(msg.version) || msg.version - n > known) {
      this.restart(`missed the steps between versions ${known} and ${msg.version - n}`)
      return false
    }
    if (typeof msg.users == "number") this.users = msg.users
    this.buffer.push({
      version: msg.version, steps: msg.steps || [], clientIDs: msg.clientIDs || [],
      comment: msg.comment || [], threads: Array.isArray(msg.threads) ? msg.threads : [], commentVersion: msg.commentVersion, threadVersion: msg.threadVersion,
    })
    return true
  }

  // committed takes the answer to the commit in flight, {from F, version
  // W, steps, dropped}: its steps, as the server applied them, are the
  // pushed steps F+1 to W, in place of the unconfirmed ones sent (which
  // prosemirror-collab's receiveTransaction would take as confirmed, and
  // which the server may have rebased or dropped). One transaction goes
  // from the local document to the server's at W with the later local
  // steps on top: the inverses of all the unconfirmed steps, the others'
  // steps V+1 to F, the commit's as answered, then the unconfirmed steps
  // made after the commit, mapped as prosemirror-collab's rebaseSteps
  // maps them (with mirrors). The pushes after W are then received as
  // usual.
  committed(msg) {
    let c = this.commitOut
    if (!c || !c.sent || msg.id != c.id) return
    let V = c.version, F = msg.from, W = msg.version, k = c.steps.length
    let answer = Array.isArray(msg.steps) ? msg.steps : null, dropped = Array.isArray(msg.dropped) ? msg.dropped : null
    if (!Number.isInteger(F) || !Number.isInteger(W) || F < V || !answer || !dropped || W != F + answer.length ||
        answer.length + dropped.length != k) {
      this.restart("the server answered a commit with " + JSON.stringify({ from: F, version: W, kept: answer?.length, dropped: dropped?.length }))
      return
    }
    // The server's steps V+1 … known, from the buffered pushes.
    let json = [], clientIDs = []
    for (let m of this.buffer) {
      let base = m.version - m.steps.length, have = V + json.length
      let skip = Math.max(0, have - base)
      json.push(...m.steps.slice(skip))
      clientIDs.push(...m.clientIDs.slice(skip))
    }
    if (V + json.length < W) {
      this.restart(`the answer of a commit came before its steps (versions ${V + json.length} to ${W})`)
      return
    }
    let state = this.state
    let tr, remaining = [], others
    try {
      if (getVersion(state) != V) throw new Error(`the editor is at version ${getVersion(state)}, the commit at ${V}`)
      let plugin = collabPlugin(state), cs = plugin.getState(state), unconf = cs.unconfirmed, n = unconf.length
      if (n < k || c.steps.some((s, i) => unconf[i].step !== s)) throw new Error("the commit's steps are not the first unconfirmed ones")
      let kept = []
      for (let i = 0; i < k; i++) if (!dropped.includes(i)) kept.push(i)
      if (kept.length != answer.length) throw new Error("dropped is not a list of the commit's steps")
      others = json.slice(0, F - V).map(j => Step.fromJSON(this.schema, j))
      let ours = answer.map(j => Step.fromJSON(this.schema, j))
      tr = state.tr
      for (let i = n - 1; i >= 0; i--) tr.step(unconf[i].inverted)
      for (let step of others) tr.step(step)
      ours.forEach((step, m) => {
        tr.step(step) // throws when it does not apply: the restart below
        // The server's step is the committed one, rebased: its mirror.
        tr.mapping.setMirror(n - 1 - kept[m], tr.steps.length - 1)
      })
      let Rebaseable = n ? unconf[0].constructor : null
      for (let i = k; i < n; i++) {
        let mapped = unconf[i].step.map(tr.mapping.slice(n - i))
        if (mapped && !tr.maybeStep(mapped).failed) {
          tr.mapping.setMirror(n - 1 - i, tr.steps.length - 1)
          remaining.push(new Rebaseable(mapped, mapped.invert(tr.docs[tr.docs.length - 1]), unconf[i].origin))
        }
      }
      // Comments created by the pushes up to W: their positions are in the
      // server's document at the push's version, here tr.docs[n + X - V].
      let events = [], threads = [], commentVersion, threadVersion
      for (let m of this.buffer) {
        if (m.version > W) break
        let map = tr.mapping.slice(n + Math.max(0, m.version - V))
        for (let e of m.comment) {
          if (e.type != "create") { events.push(e); continue }
          events.push({ ...e, from: map.map(e.from, 1), to: map.map(e.to, -1) })
        }
        for (let c of m.threads) threads.push({ ...c, from: map.map(c.from, 1), to: map.map(c.to, -1) })
        if (m.commentVersion != null) commentVersion = m.commentVersion
        if (m.threadVersion != null) threadVersion = m.threadVersion
      }
      if (events.length || threads.length || commentVersion != null || threadVersion != null)
        tr.setMeta(commentsKey, { type: "receive", events, threads, version: commentVersion, threadVersion })
      tr.setMeta(plugin, new cs.constructor(W, remaining)).setMeta("rebased", n).setMeta("addToHistory", false)
      if (state.storedMarks) tr.setStoredMarks(state.storedMarks)
      for (let step of others.concat(ours)) this.maps.push(step.getMap())
      if (this.persist) {
        let confirmed = this.confirmedDoc
        for (let step of others.concat(ours)) {
          let result = confirmed && step.apply(confirmed)
          confirmed = result && !result.failed ? result.doc : null
        }
        this.confirmedDoc = confirmed
      }
    } catch (e) {
      this.restart("the answer of a commit does not apply here (" + e.message + ")")
      return
    }
    if (this.maps.length > keptMaps) {
      let drop = this.maps.length - keptMaps
      this.maps.splice(0, drop)
      this.mapsFrom += drop
    }
    state = this.commit(state, guardNodeSelection(state, tr))
    if (c.events.length) state = this.commit(state, state.tr.setMeta(commentsKey, { type: "sent", events: c.events }))
    this.state = state
    this.commitOut = null
    this.sendFailures = 0
    let rest = this.buffer.filter(m => m.version > W)
    this.buffer = []
    this.onState(state, false)
    for (let m of rest) if (!this.receive(m)) return
    this.takePending()
    this.peersChanged()
    this.afterChange()
  }

  schedulePresence() {
    if (this.presenceTimer || !this.welcomed) return
    let wait = Math.max(0, this.lastPresenceAt + presenceInterval - Date.now())
    this.presenceTimer = setTimeout(() => {
      this.presenceTimer = null
      this.sendPresence()
    }, wait)
  }

  // sendPresence sends the selection, in the document at the confirmed
  // version (the server does not have the unconfirmed steps yet).
  sendPresence() {
    if (!this.welcomed || !this.state) return
    let state = this.state
    let version = getVersion(state)
    let anchor = this.toConfirmed(state, state.selection.anchor)
    let head = this.toConfirmed(state, state.selection.head)
    let key = version + ":" + anchor + ":" + head
    if (key == this.lastPresence) return
    this.lastPresence = key
    this.lastPresenceAt = Date.now()
    this.send({ type: "presence", version, anchor, head })
  }

  // toConfirmed maps a local position back over the unconfirmed steps.
  toConfirmed(state, pos) {
    let sendable = sendableSteps(state)
    if (!sendable) return pos
    for (let i = sendable.steps.length - 1; i >= 0; i--) pos = sendable.steps[i].getMap().invert().map(pos, -1)
    return pos
  }

  // toLocal maps a position of the confirmed version over the
  // unconfirmed steps.
  toLocal(state, pos, assoc) {
    let sendable = sendableSteps(state)
    if (sendable) for (let step of sendable.steps) pos = step.getMap().map(pos, assoc)
    return pos
  }

  // setPeers records other clients' selections, given at version, in
  // the local document; presence of a version not reached yet waits.
  setPeers(version, clients, left, reset) {
    let state = this.state
    let ours = getVersion(state)
    if (version > ours) {
      this.pending.push({ version, clients })
      clients = []
    }
    let set = []
    for (let c of clients) {
      if (c.clientID == this.clientID) continue
      let peer = { clientID: c.clientID, name: c.name, color: c.color, data: c.data ?? null, anchor: null, head: null }
      if (Number.isInteger(c.anchor) && Number.isInteger(c.head) && version >= this.mapsFrom) {
        let anchor = c.anchor, head = c.head
        for (let i = version - this.mapsFrom; i < this.maps.length; i++) {
          anchor = this.maps[i].map(anchor)
          head = this.maps[i].map(head)
        }
        peer.anchor = this.toLocal(state, anchor, 1)
        peer.head = this.toLocal(state, head, 1)
      }
      set.push(peer)
    }
    if (!set.length && !left.length && !reset) return
    this.dispatchInternal(state.tr.setMeta(presenceKey, { reset, set, remove: left }))
  }

  peersChanged() {
    let peers = []
    if (this.state) {
      for (let p of presenceKey.getState(this.state).peers.values())
        peers.push({ clientID: p.clientID, name: p.name, color: p.color, data: p.data ?? null })
    }
    this.onPeers({ users: this.welcomed ? this.users : 0, peers })
  }
}
