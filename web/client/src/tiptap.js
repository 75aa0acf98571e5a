// pmauthority-client/tiptap: a Tiptap extension that connects the editor
// to a pmauthority document. The editor keeps its state: the extension
// adds the collaboration plugins (prosemirror-collab, comments, remote
// carets) through addProseMirrorPlugins, and the client (CollabClient,
// with its connection, reconnection, tokens and presence) dispatches what
// it receives to the editor's view, so Tiptap's transaction and update
// events fire for remote changes too, and Tiptap's commands and undo
// (prosemirror-history, which prosemirror-collab keeps to local changes)
// work as without collaboration.

import { Extension } from "@tiptap/core"
import { Plugin, PluginKey, Selection, TextSelection } from "prosemirror-state"
import { Slice } from "prosemirror-model"
import { ReplaceStep } from "prosemirror-transform"
import { collab } from "prosemirror-collab"
import { CollabClient } from "./client.js"
import { commentsKey, commentsPlugin } from "./comments.js"
import { presenceKey, presencePlugin } from "./presence.js"

export { exportSchema } from "./tiptap-schema.js"

// clientKey marks the transactions the client makes (received steps,
// snapshots, presence, comment events) and keeps no state.
const clientKey = new PluginKey("pmauthority")

// isRemoteTransaction tells whether tr was made by the collaboration
// client (steps of others, a snapshot, presence) rather than by this
// editor's user: an update event's transaction, for example.
export function isRemoteTransaction(tr) {
  return tr.getMeta(clientKey) === true
}

function randomClientID() {
  return Math.floor(Math.random() * 0xfffffffe) + 1
}

function sameValue(a, b) {
  return a === b || JSON.stringify(a) === JSON.stringify(b)
}

// TiptapCollabClient is a CollabClient whose state is the Tiptap editor's:
// it applies what it receives by dispatching it to the editor, and sends
// the editor's local changes, which it learns of from its plugin's view.
export class TiptapCollabClient extends CollabClient {
  constructor(editor, collabPlugin, options) {
    super({
      ...options,
      schema: editor.schema,
      plugins: [],
      // domObserver is internal to prosemirror-view (as in createEditor);
      // an unmounted editor has no view (editor.view is a stand-in).
      flush: () => { if (!editor.isDestroyed) editor.view.domObserver?.flush() },
    })
    this.editor = editor
    this.collabPlugin = collabPlugin
    this.loaded = false // the first snapshot is in the editor
    this.dispatching = 0 // inside a dispatch of the client's own
  }

  // state is the editor's, once the first snapshot is in it (before, the
  // client has no document: null).
  get state() {
    return this.loaded && !this.closed ? this.editor.state : null
  }

  set state(state) {
    // The base class assigns what commit returned, the editor's state.
    if (state && state !== this.editor.state) this.editor.view.updateState(state)
  }

  dispatch(tr) {
    if (this.state) this.editor.view.dispatch(tr)
  }

  commit(state, tr) {
    let editor = this.editor
    if (state !== editor.state) return state.apply(tr) // not the editor's: nothing to dispatch to
    tr.setMeta(clientKey, true)
    // Tiptap's TrailingNode would append a paragraph after remote steps
    // in every editor at once (each a local change, so several of them):
    // it waits for a local change.
    tr.setMeta("skipTrailingNode", true)
    this.dispatching++
    try {
      editor.view.dispatch(tr)
    } finally {
      this.dispatching--
    }
    return editor.state
  }

  // createState loads a snapshot into the editor by a transaction that
  // replaces the whole document (not added to the undo history), sets the
  // collab version, and replaces the comments and the remote carets.
  createState(config, msg) {
    let state = this.editor.state, doc = config.doc
    let collabState = this.collabPlugin.getState(state)
    if (!collabState) throw new Error("pmauthority: the editor has no collab plugin (is the extension's editor mounted?)")
    this.loaded = true
    let tr = state.tr
    if (tr.maybeStep(new ReplaceStep(0, state.doc.content.size, new Slice(doc.content, 0, 0))).failed) {
      // Content the schema does not allow at the top (the server does not
      // check it unless --strict): load the document as it is.
      this.editor.view.updateState(state.constructor.create({ doc, plugins: state.plugins, comments: config.comments }))
      state = this.editor.state
      tr = state.tr
    }
    for (let name in doc.attrs) if (!sameValue(doc.attrs[name], tr.doc.attrs[name])) tr.setDocAttribute(name, doc.attrs[name])
    let sel = config.selection
    tr.setSelection(sel ? TextSelection.between(tr.doc.resolve(sel.anchor), tr.doc.resolve(sel.head)) : Selection.atStart(tr.doc))
    tr.setMeta(this.collabPlugin.spec.key, new collabState.constructor(msg.version, []))
    tr.setMeta(presenceKey, { reset: true })
    let comments = (config.comments.comments || []).map(c => ({ type: "create", id: c.id, text: c.text, from: c.from, to: c.to }))
    tr.setMeta(commentsKey, { type: "receive", events: comments, version: config.comments.version })
    tr.setMeta("addToHistory", false)
    return this.commit(state, tr)
  }

  // viewUpdated is called by the plugin's view after every state change:
  // the editor's own changes are sent (the client's are sent by the base
  // class when it is done with a message).
  viewUpdated(view, prev) {
    if (this.dispatching || !this.state) return
    let state = view.state
    if (state.doc != prev.doc || commentsKey.getState(state) != commentsKey.getState(prev)) this.trySend()
    if (state.doc != prev.doc || !state.selection.eq(prev.selection)) this.schedulePresence()
  }
}

// PmAuthority is the Tiptap extension. Options are CollabClient's (url,
// name, color, token, clientID, onStatus, onPeers, onNotice, WebSocket …;
// schema, plugins, onState and flush come from the editor). The client
// connects when the editor is mounted and closes when it is destroyed;
// editor.storage.pmauthority holds it ({client, status, peers}).
export const PmAuthority = Extension.create({
  name: "pmauthority",

  addOptions() {
    return {
      url: "",
      name: "",
      color: "",
      token: null,
      clientID: null,
      mode: "commit", // or "classic" (CollabClient's mode option)
      onStatus: null,
      onPeers: null,
      onNotice: null,
    }
  },

  addStorage() {
    return {
      client: null,
      status: { status: "connecting", detail: "", retryIn: 0 },
      peers: [],
      users: 0,
      plugins: null,
    }
  },

  addProseMirrorPlugins() {
    // Tiptap may ask again (a remount): the same instances keep their state.
    if (this.storage.plugins) return this.storage.plugins
    let ext = this, storage = this.storage, editor = this.editor
    let clientID = this.options.clientID ?? randomClientID()
    let collabPlugin = collab({ clientID })
    let bridge = new Plugin({
      key: clientKey,
      // Until the first snapshot there is no document to change.
      filterTransaction: tr => !!storage.client?.loaded || !tr.docChanged || isRemoteTransaction(tr),
      view(view) {
        if (!storage.client && !editor.isDestroyed) storage.client = startClient(ext, editor, collabPlugin, clientID)
        return {
          update(view, prev) { storage.client?.viewUpdated(view, prev) },
        }
      },
    })
    storage.plugins = [collabPlugin, commentsPlugin(), presencePlugin(), bridge]
    return storage.plugins
  },

  onDestroy() {
    this.storage.client?.close()
    this.storage.client = null
  },
})

function startClient(ext, editor, collabPlugin, clientID) {
  let options = ext.options, storage = ext.storage
  if (!options.url) throw new Error("pmauthority: the url option is required (ws[s]://host/docs/{id}/ws)")
  return new TiptapCollabClient(editor, collabPlugin, {
    ...options,
    clientID,
    onStatus(status) {
      storage.status = status
      options.onStatus?.(status)
    },
    onPeers(info) {
      storage.peers = info.peers
      storage.users = info.users
      options.onPeers?.(info)
    },
    onNotice: text => options.onNotice ? options.onNotice(text) : console.warn("pmauthority:", text),
  })
}

export default PmAuthority
