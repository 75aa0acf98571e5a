// pmauthority-client inside a Tiptap editor: Tiptap's StarterKit with the
// PmAuthority extension (pmauthority-client/tiptap), which adds the
// collaboration plugins through Tiptap. The editor keeps its state, so
// Tiptap's events, commands and undo work as without collaboration.
//
// The server must know StarterKit's schema (its names are not those of
// pmauthority's "basic": bold, italic, bulletList …): schema.json beside
// this file is exportSchema(editor) of this editor, served with
// `pmauthority serve --schema tiptap=schema.json --default-schema tiptap`.

import { Editor } from "@tiptap/core"
import StarterKit from "@tiptap/starter-kit"
import { PmAuthority, exportSchema, isRemoteTransaction } from "pmauthority-client/tiptap"

const params = new URLSearchParams(location.search)
const docID = params.get("doc") || "tiptap-example"
const server = new URL(params.get("server") || "/", location.href)
const url = new URL("docs/" + encodeURIComponent(docID) + "/ws", server)
url.protocol = url.protocol == "https:" ? "wss:" : "ws:"

const $ = selector => document.querySelector(selector)
const updates = { local: 0, remote: 0 } // Tiptap's update events, by origin

const editor = new Editor({
  element: $("#editor"),
  extensions: [
    // StarterKit's undoRedo (prosemirror-history) stays: with
    // prosemirror-collab it undoes only this editor's changes.
    StarterKit,
    PmAuthority.configure({
      url: url.href,
      name: params.get("name") || "Tiptap user",
      color: params.get("color") || "#8e24aa",
      onStatus({ status, detail }) {
        $("#status").textContent = detail ? `${status}: ${detail}` : status
        $("#status").dataset.status = status
      },
      onPeers({ peers }) { $("#peers").textContent = peers.map(p => p.name).join(", ") },
      // Refused changes and unreadable documents (a server with another
      // schema says here what it did not take).
      onNotice(text) {
        $("#notice").textContent = text
        $("#notice").hidden = false
      },
    }),
  ],
  onUpdate({ transaction }) { updates[isRemoteTransaction(transaction) ? "remote" : "local"]++ },
})

$("#bold").addEventListener("click", () => editor.chain().focus().toggleBold().run())
$("#undo").addEventListener("click", () => editor.chain().focus().undo().run())
window.example = { editor, updates, exportSchema: () => exportSchema(editor), get client() { return editor.storage.pmauthority.client } }
