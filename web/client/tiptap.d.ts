// Types of pmauthority-client/tiptap (src/tiptap.js).

import type { Editor, Extension } from "@tiptap/core"
import type { Plugin, Transaction } from "prosemirror-state"
import type { Schema } from "prosemirror-model"
import { CollabClient, type CollabClientOptions, type Peer, type Status } from "./index.js"

/** The options of the PmAuthority extension: CollabClient's, less what the editor gives. */
export type PmAuthorityOptions = Omit<CollabClientOptions, "schema" | "plugins" | "onState" | "flush" | "clientID"> & {
  /** The prosemirror-collab client id (default: random below 2^32). */
  clientID?: number | null
}

/** What the extension keeps in editor.storage.pmauthority. */
export interface PmAuthorityStorage {
  /** The client, from the editor's mount to its destruction (null otherwise). */
  client: TiptapCollabClient | null
  /** The last status given to onStatus. */
  status: Status
  /** The other clients that announced themselves, as onPeers gives them. */
  peers: Peer[]
  /** The server's count of connections. */
  users: number
}

/**
 * The Tiptap extension: adds the collaboration plugins (prosemirror-collab, comments, remote carets) to the
 * editor, which keeps its state; the client connects when the editor is mounted and closes when it is destroyed.
 * Keep StarterKit's undoRedo: with prosemirror-collab it undoes only this editor's changes.
 */
export declare const PmAuthority: Extension<PmAuthorityOptions, PmAuthorityStorage>
export default PmAuthority

/** A CollabClient whose state is the Tiptap editor's (what it receives is dispatched to the editor). */
export declare class TiptapCollabClient extends CollabClient {
  constructor(editor: Editor, collabPlugin: Plugin, options: Omit<CollabClientOptions, "schema">)
  readonly editor: Editor
  /** The first snapshot is in the editor. */
  readonly loaded: boolean
}

/** Whether tr was made by the collaboration client (others' steps, a snapshot, presence), not this editor's user. */
export function isRemoteTransaction(tr: Transaction): boolean

/**
 * The JSON text of the schema spec of a Tiptap editor (or of a Schema), to save and give to the server:
 * `pmauthority serve --schema NAME=FILE`. Throws on a value JSON cannot hold (an attribute default of undefined).
 */
export function exportSchema(editor: Editor | { schema: Schema } | Schema): string

declare module "@tiptap/core" {
  interface Storage {
    pmauthority: PmAuthorityStorage
  }
}
