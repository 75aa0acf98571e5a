// Package sqlite is pmauthority's embedded store.Store: one SQLite file
// (pure Go, modernc.org/sqlite) in WAL mode, so that readers never wait for
// the writer.
//
// All writes go through one writer goroutine that commits whatever has
// queued up meanwhile in one transaction (group commit): under load, many
// documents' appends share one fsync instead of paying one each. One
// failing operation fails alone and the others commit: the store's
// refusals (a conflicting Append, say) come before an operation changes
// anything, and when an operation fails after a change (a constraint
// error, say) the batch is rolled back and run again with a SAVEPOINT
// around each operation, so that the failing one is undone alone. A write
// returns only after COMMIT has returned, that is once it is durable as
// Options.Sync says; when COMMIT fails, every operation of the batch fails
// with its error and none took effect.
//
// The file holds three tables: docs (one row per document: schema name,
// latest version, oldest kept version, metadata), steps (one row per step,
// keyed by document and version) and snapshots (the latest snapshot of each
// document). PRAGMA user_version records the layout's version; Open refuses
// a file written by a newer pmauthority.
package sqlite
