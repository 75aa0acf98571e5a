// pmauthority-client: connects ProseMirror editors to a pmauthority
// server over its WebSocket protocol (docs/protocol.md): collaborative
// editing (prosemirror-collab), remote cursors and selections, comments,
// reconnection, and an optional auth token.

import { EditorView } from "prosemirror-view"
import { CollabClient } from "./client.js"

export { CollabClient, guardNodeSelection } from "./client.js"
export {
  commentsKey, commentsPlugin, commentsOf, commentDraft, setCommentDraft, clearCommentDraft,
  createComment, deleteComment, replyToComment, editComment, resolveComment, reopenComment, deleteReply,
  formatComment, parseComment, commentIcon,
} from "./comments.js"
export { presenceKey, presencePlugin, safeColor, peerName } from "./presence.js"

// createEditor connects an EditorView in place (a DOM element, as
// EditorView takes it) to a document: options are CollabClient's, plus
// viewProps for the EditorView (everything but state and
// dispatchTransaction). The view is created on the first state from the
// server and updated on every later one. It returns {client, view (null
// until then), destroy()}.
export function createEditor(place, options) {
  let view = null
  let client = new CollabClient({
    ...options,
    onState(state, replaced) {
      if (view) view.updateState(state)
      else view = new EditorView(place, { ...options.viewProps, state, dispatchTransaction: tr => client.dispatch(tr) })
      options.onState?.(state, replaced)
    },
    // domObserver is internal to prosemirror-view: without the flush a
    // remote change may undo a cursor motion the view has not read yet.
    flush: () => view?.domObserver?.flush(),
  })
  return {
    client,
    get view() { return view },
    destroy() {
      client.close()
      view?.destroy()
    },
  }
}
