// A Tiptap app written against pmauthority-client/tiptap's types: tsc -p .
// must accept it (and would reject a wrong use, see the @ts-expect-error
// lines). Tiptap comes from client/example-tiptap's node_modules,
// TypeScript from client/test/types'.
import { Editor, getSchema } from "@tiptap/core"
import StarterKit from "@tiptap/starter-kit"
import { PmAuthority, exportSchema, isRemoteTransaction, type PmAuthorityStorage } from "pmauthority-client/tiptap"

const editor = new Editor({
  element: document.body,
  extensions: [
    StarterKit,
    PmAuthority.configure({
      url: "ws://localhost:8080/docs/x/ws",
      name: "Ada",
      color: "#1a73e8",
      token: async () => "jwt",
      onStatus: ({ status, detail }) => console.log(status, detail),
      onNotice: (text: string) => console.log(text),
    }),
  ],
  onUpdate: ({ transaction }) => console.log(isRemoteTransaction(transaction)),
})
const storage: PmAuthorityStorage = editor.storage.pmauthority
const unsaved: number | undefined = storage.client?.unsaved
const loaded: boolean | undefined = storage.client?.loaded
console.log(unsaved, loaded, storage.peers.map(p => p.name), storage.status.status)
const json: string = exportSchema(editor)
const json2: string = exportSchema(getSchema([StarterKit]))
console.log(json, json2)

// @ts-expect-error: the schema comes from the editor
PmAuthority.configure({ url: "ws://x", schema: getSchema([StarterKit]) })
// @ts-expect-error: a number is not a URL
PmAuthority.configure({ url: 5 })
