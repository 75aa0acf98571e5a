// pmauthority-client inside a Tiptap editor. Tiptap's extensions give the
// schema and the plugins (keymaps, input rules, commands); the client owns
// the editor state: it gets Tiptap's plugins, and its states are handed to
// Tiptap's view, whose transactions go to the client.
//
// The extensions are named as in pmauthority's "basic" schema (Tiptap's
// bold is "strong" there, italic "em", in that order), so the server's
// default schema takes the steps.

import { Editor } from "@tiptap/core"
import Document from "@tiptap/extension-document"
import Paragraph from "@tiptap/extension-paragraph"
import Text from "@tiptap/extension-text"
import Bold from "@tiptap/extension-bold"
import Italic from "@tiptap/extension-italic"
import { CollabClient } from "pmauthority-client"

const params = new URLSearchParams(location.search)
const docID = params.get("doc") || "tiptap-example"
const server = new URL(params.get("server") || "/", location.href)
const url = new URL("docs/" + encodeURIComponent(docID) + "/ws", server)
url.protocol = url.protocol == "https:" ? "wss:" : "ws:"

const editor = new Editor({
  element: document.querySelector("#editor"),
  extensions: [Document, Paragraph, Text, Italic.extend({ name: "em" }), Bold.extend({ name: "strong" })],
  editable: false, // until the document arrives
})

const client = new CollabClient({
  url: url.href,
  schema: editor.schema,
  plugins: editor.state.plugins,
  name: params.get("name") || "Tiptap user",
  color: "#8e24aa",
  onState(state) {
    editor.view.updateState(state)
    if (!editor.isEditable) editor.setEditable(true, false)
  },
  onStatus({ status }) { document.querySelector("#status").textContent = status },
  onPeers({ peers }) { document.querySelector("#peers").textContent = peers.map(p => p.name).join(", ") },
  // domObserver is internal to prosemirror-view (as in createEditor).
  flush: () => editor.view.domObserver?.flush(),
})
editor.view.setProps({ dispatchTransaction: tr => client.dispatch(tr) })

document.querySelector("#bold").addEventListener("click", () => editor.chain().focus().toggleMark("strong").run())
window.example = { editor, client }
