// Package collab is pmauthority's central authority for collaborative
// editing: for each document it orders the steps that clients submit,
// applies them with the document's schema, keeps them durable in a
// store.Store, and tells every client what changed, as the ProseMirror
// collab demo server does (prosemirror-collab clients work with it
// unchanged).
//
// An Authority holds many documents. Each is loaded on first use from its
// latest snapshot and the steps after it, and unloaded when idle. Submit
// accepts a client's steps made on the current version, all or nothing,
// and answers only once they are durable. A submission with a Ref is a
// commit (commit mode): made on an older version, its steps are rebased
// onto the current document, as prosemirror-collab's rebaseSteps does on
// the client (Rebase), those that no longer apply are dropped, and
// commits that arrive while one is made durable are made durable with it
// in one store append; a commit sent again under its Ref is answered as
// it was. Events returns, or waits for,
// the steps and comment events after a version, and, like the demo, also
// answers waiting clients when the number of users changes. Comments are
// ranges of the document mapped through every step, as the demo keeps
// them; each is the root of a thread (replies, resolved, edited, with
// authors and times the Authority records), whose operations count in a
// thread version of their own, so that the demo's clients see none of
// them. The store keeps comments as a base (written with each snapshot)
// and one metadata entry per submission that changed some: a step stores
// nothing of them, and a load maps the base through the steps after it,
// whatever the number of comments.
//
// An embedding program attaches through Config's hooks: OnLoad gives the
// content of a document asked for before it exists, BeforeSubmit vetoes
// a submission once its steps applied in memory, AfterCommit watches
// durable changes without delaying them, and OnUnload follows documents
// leaving memory. Several Authorities (in one process or on several
// nodes) may share a store that is a store.Notifier and a
// store.MetaSwapper: each then catches its loaded documents up with the
// others' changes, and the store arbitrates their steps (by version) and
// their comments (by the metadata's sequence number).
//
// Like the core of etcd-io/raft, the package does no networking and no
// disk I/O of its own: the server package puts it on HTTP, and the store
// decides where the bytes go.
package collab
