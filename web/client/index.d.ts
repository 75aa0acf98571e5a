// Types of pmauthority-client (src/index.js).

import type { EditorState, Plugin, PluginKey, Transaction, Command } from "prosemirror-state"
import type { Schema } from "prosemirror-model"
import type { EditorView, DirectEditorProps } from "prosemirror-view"

/** The connection state, given to onStatus. */
export interface Status {
  status: "connecting" | "online" | "offline"
  /** Why, when there is a reason ("connection lost", "server restarting" …). */
  detail: string
  /** Milliseconds until the next attempt while offline, else 0. */
  retryIn: number
}

/** Another client on the document, as onPeers lists it. */
export interface Peer {
  clientID: number | string
  name: string | null
  color: string | null
  /** Its own presence fields (its hello's data), or null. */
  data: Record<string, unknown> | null
}

/**
 * A token, or a function giving one: called before every connection attempt and, when its token is a
 * JWT with an exp, again about a minute before that (the fresh token goes in band on the open connection).
 */
export type TokenSource = string | null | (() => string | null | Promise<string | null>)

/** Why the server refused the token, given to onAuthenticationFailed. */
export interface AuthenticationFailure {
  /** 401 (no valid token) or 403 (a valid token without a role on the document). */
  status: number
  /** The server's message ("invalid token", "token expired" …). */
  reason: string
}

export interface CollabClientOptions {
  /** The WebSocket URL of the document: ws[s]://host/docs/{id}/ws (the id percent-encoded). */
  url: string
  /** The document's schema (the server's, e.g. prosemirror-schema-basic plus lists for "basic"). */
  schema: Schema
  /** The editor's plugins (keymaps, history, menu …); the client adds collab, comments and presence. */
  plugins?: Plugin[]
  /** Shown to the others (at most 64 UTF-16 units). */
  name?: string
  /** Shown to the others: #rrggbb. */
  color?: string
  /**
   * More presence fields shown to the others (Peer.data): a JSON object of at most the server's
   * --max-presence-data (512 bytes of JSON by default), sent in hello.
   */
  data?: Record<string, unknown> | null
  /** The credential sent in hello (docs/auth.md). */
  token?: TokenSource
  /** The prosemirror-collab client id (default: random below 2^32). */
  clientID?: number
  /** A new editor state; replaced is true when it came from a snapshot (new plugin instances). */
  onState?(state: EditorState, replaced: boolean): void
  onStatus?(status: Status): void
  /** users is the server's count of connections, peers the other clients that announced themselves. */
  onPeers?(info: { users: number; peers: Peer[] }): void
  /** Something the user should know (a refused change, a resync). */
  onNotice?(text: string): void
  /**
   * The server has every local change and the connection is up: after the welcome or snapshot, and
   * again each time the last unconfirmed change is confirmed (synced turns true).
   */
  onSynced?(): void
  /** The number of local changes the server does not have yet (unsaved) changed. */
  onUnsyncedChanges?(unsaved: number): void
  /**
   * The server refused the token (error 401 or 403 to the hello, then close 1008; or a string token
   * expired, close 4401). The client stops retrying until setToken (or reconnectNow).
   */
  onAuthenticationFailed?(failure: AuthenticationFailure): void
  /** false: no beforeunload warning while there are unsaved changes (default true). */
  warnOnUnload?: boolean
  /**
   * A name (e.g. the document id) under which the unconfirmed changes are kept in IndexedDB while
   * there are any: a new client with the same name (after a reload) takes them up and sends them.
   */
  persist?: string
  /** Dispatch what the view has not read from the DOM yet, before a server message changes the state. */
  flush?(): void
  /** The WebSocket class (default globalThis.WebSocket; in node, e.g. the ws package's). */
  WebSocket?: typeof WebSocket
  /**
   * "commit" (default): the local steps go in commit messages, which the server rebases itself
   * (docs/protocol.md, "Commit mode"; needs a pmauthority with commit mode). "classic": steps messages,
   * rebased here after a conflict, as prosemirror-collab's own protocol does (its hello is unchanged).
   */
  mode?: "commit" | "classic"
}

/** Keeps one document in sync with a pmauthority server. */
export class CollabClient {
  constructor(options: CollabClientOptions)
  /** The current editor state (null before the first snapshot). */
  readonly state: EditorState | null
  readonly clientID: number
  /** The mode option. */
  readonly mode: "commit" | "classic"
  /** The server answered hello: changes are being sent. */
  readonly welcomed: boolean
  /** The server has every local change and the connection is up. */
  readonly synced: boolean
  /** Local changes the server does not have yet (unconfirmed steps and comment events). */
  readonly unsaved: number
  /** unsaved > 0. */
  readonly hasUnsyncedChanges: boolean
  /** The server refused the token: the client waits for setToken. */
  readonly authFailed: boolean
  /** Applies a local transaction (the view's dispatchTransaction). */
  dispatch(tr: Transaction): void
  /** Changes the name and colour shown to the others (reconnects). */
  setIdentity(name: string, color: string): void
  /** Changes the presence fields shown to the others (reconnects). */
  setPresenceData(data: Record<string, unknown> | null): void
  /**
   * Replaces the token: the next hello carries it, and an open connection is sent it in band at once
   * (refreshToken's promise). After an authentication failure it connects again (the promise then
   * resolves to false).
   */
  setToken(token: TokenSource): Promise<boolean>
  /**
   * Sends the open connection the token option's token in band (a function is asked for a fresh one);
   * true when the server took it (the connection then expires with it), false when it refused it or
   * there is no welcomed connection.
   */
  refreshToken(): Promise<boolean>
  /** Drops the connection or the wait for the next attempt and connects at once. */
  reconnectNow(): void
  /** Disconnects for good. */
  close(): void
}

/** Connects an EditorView, created in place on the first state from the server. */
export function createEditor(
  place: ConstructorParameters<typeof EditorView>[0],
  options: Omit<CollabClientOptions, "flush"> & { viewProps?: Omit<DirectEditorProps, "state" | "dispatchTransaction"> },
): { client: CollabClient; readonly view: EditorView | null; destroy(): void }

export function guardNodeSelection(state: EditorState, tr: Transaction): Transaction

/** A reply in a comment's thread. Times are RFC 3339 strings from the server, null until it has the reply. */
export interface CommentReply {
  id: number
  text: string
  author: string | null
  time: string | null
  edited: string | null
}

/** A comment, the root of a thread: its id, text, current range, and what the server recorded. */
export interface Comment {
  id: number
  text: string
  from: number
  to: number
  /** The principal that created it (null when anonymous, or until the server has it). */
  author: string | null
  /** When the server accepted it (null for comments stored before times, or until then). */
  time: string | null
  resolved: boolean
  /** When its text was last edited, or null. */
  edited: string | null
  replies: CommentReply[]
}

export const commentsKey: PluginKey
export function commentsPlugin(): Plugin
/** The comments in document order. */
export function commentsOf(state: EditorState): Comment[]
/** The range of the comment being written, or null. */
export function commentDraft(state: EditorState): { from: number; to: number } | null
/** Marks a range (default the selection) as the comment being written. */
export function setCommentDraft(range?: { from: number; to: number }): Command
export const clearCommentDraft: Command
/** Comments a range (default the draft, else the selection) with text; author is shown until the server's comes. */
export function createComment(text: string, range?: { from: number; to: number }, options?: { author?: string }): Command
/** Deletes a comment with its thread (the server allows it for its author and admins). */
export function deleteComment(id: number): Command
/** Replies text to the thread of the comment id. */
export function replyToComment(id: number, text: string, options?: { author?: string }): Command
/** Sets the text of a comment or a reply (the server allows it for its author and admins). */
export function editComment(id: number, text: string): Command
export function resolveComment(id: number): Command
export function reopenComment(id: number): Command
/** Deletes a reply (the server allows it for its author and admins). */
export function deleteReply(id: number): Command
/** The text of a comment with its author and time as a last line. */
export function formatComment(body: string, author: string, time?: Date): string
/** Splits a comment's text into body, author and time (null when the text has no such line). */
export function parseComment(text: string): { body: string; author: string | null; time: Date | null }
export const commentIcon: { width: number; height: number; path: string }

export const presenceKey: PluginKey
export function presencePlugin(): Plugin
/** color when it is #rrggbb, else a neutral grey. */
export function safeColor(color: unknown): string
/** A peer's display name ("Anonymous" without one). */
export function peerName(peer: { name?: unknown }): string
