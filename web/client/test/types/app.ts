// An app written against pmauthority-client's types: tsc -p . must
// accept it (and would reject a wrong use, see the @ts-expect-error lines).
import { Schema } from "prosemirror-model"
import { schema as basic } from "prosemirror-schema-basic"
import { EditorView } from "prosemirror-view"
import {
  CollabClient, createEditor, createComment, deleteComment, commentsOf, formatComment, parseComment,
  setCommentDraft, clearCommentDraft, commentDraft, replyToComment, editComment, resolveComment, reopenComment, deleteReply,
  type CommentReply, type Status, type Peer, type Comment, type AuthenticationFailure,
} from "pmauthority-client"

const schema = new Schema({ nodes: basic.spec.nodes, marks: basic.spec.marks })
let view: EditorView | null = null
const client: CollabClient = new CollabClient({
  url: "ws://localhost:8080/docs/x/ws",
  schema,
  name: "Ada",
  color: "#1a73e8",
  token: async () => "jwt",
  onState(state, replaced: boolean) {
    if (view) view.updateState(state)
    else view = new EditorView(document.body, { state, dispatchTransaction: tr => client.dispatch(tr) })
  },
  onStatus(s: Status) { console.log(s.status, s.detail, s.retryIn) },
  onPeers({ users, peers }: { users: number; peers: Peer[] }) { console.log(users, peers.map(p => p.name)) },
  onSynced() { console.log("saved") },
  onUnsyncedChanges(unsaved: number) { console.log(unsaved) },
  onAuthenticationFailed({ status, reason }: AuthenticationFailure) { console.log(status, reason) },
  warnOnUnload: false,
  persist: "x",
  flush: () => {},
})
const n: number = client.unsaved
const unsynced: boolean = client.hasUnsyncedChanges || client.authFailed
const ok: boolean = client.synced
const taken: Promise<boolean> = client.setToken("other")
client.refreshToken().then((accepted: boolean) => console.log(accepted, taken))
client.setIdentity("Ada", "#000000")
client.setPresenceData({ avatar: "/ada.png" })
new CollabClient({ url: "ws://x", schema, data: { role: "reviewer" }, onPeers: ({ peers }) => console.log(peers[0]?.data?.role) })
// @ts-expect-error: data is an object
new CollabClient({ url: "ws://x", schema, data: "reviewer" })
const classic: "commit" | "classic" = new CollabClient({ url: "ws://x", schema, mode: "classic" }).mode
// @ts-expect-error: mode is "commit" or "classic"
new CollabClient({ url: "ws://x", schema, mode: "rebase" })

const editor = createEditor(document.body, { url: "ws://x/docs/y/ws", schema, viewProps: { editable: () => true } })
const v: EditorView | null = editor.view
editor.destroy()

if (client.state) {
  const comments: Comment[] = commentsOf(client.state)
  createComment(formatComment("hi", "Ada"), { from: 1, to: 2 })(client.state, tr => client.dispatch(tr))
  deleteComment(comments[0].id)(client.state)
  const thread: Comment = comments[0]
  const replies: CommentReply[] = thread.replies
  const when: string | null = thread.time ?? replies[0]?.edited
  const byWhom: string | null = thread.author
  const resolved: boolean = thread.resolved
  replyToComment(thread.id, "me too", { author: "Ada" })(client.state, tr => client.dispatch(tr))
  editComment(replies[0].id, "me three")(client.state)
  ;(resolved ? reopenComment(thread.id) : resolveComment(thread.id))(client.state)
  deleteReply(replies[0].id)(client.state)
  console.log(when, byWhom)
  setCommentDraft()(client.state)
  clearCommentDraft(client.state)
  const d: { from: number; to: number } | null = commentDraft(client.state)
  const { author, time } = parseComment(comments[0].text)
  console.log(n, ok, unsynced, v, d, author, time?.toISOString())
}

// @ts-expect-error: url is required
new CollabClient({ schema })
// @ts-expect-error: onSynced takes no argument
new CollabClient({ url: "ws://x", schema, onSynced(x: string) { console.log(x) } })
// @ts-expect-error: status is a fixed set of strings
const bad: Status = { status: "gone", detail: "", retryIn: 0 }
console.log(bad)
