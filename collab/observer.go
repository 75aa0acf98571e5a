package collab

// Observer is told what an Authority does, for metrics: an embedding
// program implements it (package metrics does, with Prometheus) without
// the authority knowing how it is counted. Its methods are called on the
// paths of submissions and loads, some with the Authority's locks held,
// so they must be quick and must not block or call the Authority.
// Nothing is said about a document's id: counts only.
type Observer interface {
	// StepsAccepted is told that n steps of a submission to this
	// Authority are durable (steps of other writers sharing the store,
	// which this Authority only follows, are not counted).
	StepsAccepted(n int)
	// DocumentsLoaded is told that the number of documents loaded in
	// memory changed by delta (+1 for a load or a creation, -1 for an
	// unload or a deletion).
	DocumentsLoaded(delta int)
}

// A GroupObserver is an Observer that is told about group commits too
// (commit mode, group.go): an Authority's Observer that implements it is.
type GroupObserver interface {
	// CommitsGrouped is told that n commits to one document were made
	// durable by one store append.
	CommitsGrouped(n int)
}
