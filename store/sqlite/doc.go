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
// The file holds eight tables: docs (one row per document: schema name,
// latest version, oldest kept version, number of the latest metadata
// entry), snapshots (each document's snapshots from its oldest kept
// version on, the latest last), checkpoints (named versions, each with
// the document there), meta_bases (each document's metadata base, its
// version and the last entry folded into it), meta_log (the metadata
// entries after the base, keyed by document and number), steps (one row
// per step, keyed by document and version), tombstones (the last version
// of each deleted document, by id: a document created again under its id
// starts after it) and log, where Append writes steps in commit order, so
// that a commit of many documents' steps writes a few pages rather than
// one per document. Between batches, once the log holds a few thousand steps, the
// writer folds it into steps in one transaction (and Open folds what a
// previous run left); readers look in both. PRAGMA user_version records
// the layout's version: Open upgrades a file written by an older
// pmauthority and refuses one written by a newer one.
//
// The write-ahead log's file stays below 64 MiB plus one fold or a few
// batches: SQLite checkpoints it every 1000 pages, and when readers that
// overlap without pause keep a checkpoint from finishing, the writer
// holds off new reads for the moment it takes to finish one.
//
// A full disk refuses every write, a Delete too, but for the room of a
// spare file (Options.Reserve) kept allocated next to the database, which
// a Delete that finds no room removes. After every Delete the writer
// gives the pages it freed back to the file system (a new file is made
// with PRAGMA auto_vacuum=INCREMENTAL) and allocates the spare file again.
package sqlite
