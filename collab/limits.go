package collab

import (
	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/internal/defaults"
)

// Limits bound the documents of an Authority and what its clients may do
// with them: the document limits of pmauthority (transports bound their
// connections and requests themselves). Zero fields take the defaults
// (WithDefaults); Config embeds Limits. Every limit refuses with an
// error that names it, and changes nothing.
type Limits struct {
	// Limits bound the steps (and the comment events) of one submission,
	// MaxSteps (default apply.DefaultMaxSteps, 1,000), and the document
	// they make, checked after every step and for a new document:
	// MaxDocSize in positions (default 10,000,000) and MaxDocBytes in
	// bytes of its JSON (default 4 MiB). A *LimitError refuses what
	// would go over them.
	apply.Limits
	// MaxMemory is the memory budget of the loaded documents, in bytes
	// (0: none): the estimated memory of each (its nodes, its JSON, the
	// history of steps, the comments) is accounted when it is loaded and
	// whenever it changes. A load or a submission that would go over it
	// first unloads idle documents (without requests, polls or
	// WebSockets), least recently used first, as Config.IdleUnload does, and is
	// refused with an error matching ErrOverloaded (HTTP 503) when that
	// is not enough. A stored document that needs more than MaxDocMemory
	// is not loaded at all (a *LimitError, HTTP 413).
	MaxMemory int64
	// MaxDocMemory is the most memory one document may hold (default
	// MaxMemory/2; ignored without MaxMemory): a submission that would
	// take a document over it, or a load of a stored document over it
	// (written under higher limits), is refused with a *LimitError.
	MaxDocMemory int64
	// MaxClientMemory is the share of MaxMemory that the documents one
	// client has in use may hold together, in bytes (default MaxMemory/4;
	// negative: no share; ignored without MaxMemory). A client is the
	// user of Get, Events, Submit and Hold; a document is in use by it
	// while one of its calls holds it (a request, a Subscription, a
	// Hold), and counts whole for each client using it. Beginning to use
	// a document, or growing one by a load or a submission, that would
	// take the client over its share fails with an error matching
	// ErrOverloaded (HTTP 503), unless the document is the only one the
	// client uses (MaxDocMemory bounds it then). So one client cannot
	// keep the budget in use for everyone (shares.go).
	MaxClientMemory int64
	// MaxCommentBytes bounds the comments of one document: the sum of
	// their texts and their replies' (as JSON strings, with their
	// authors' "author" fields) plus 192 bytes per comment and 120 per
	// reply, which bounds their JSON in Get's answer (default 1 MiB). A
	// create, reply or edit beyond it is refused with a *LimitError.
	MaxCommentBytes int
	// MaxCommentText bounds the text of one comment event (a comment,
	// a reply, an edit), in bytes (default 64 KiB).
	MaxCommentText int
	// MaxComments bounds the number of comments and replies of one
	// document (default 10,000).
	MaxComments int
	// MaxCheckpoints bounds the checkpoints of one document (default
	// 1,000; each at a new version keeps a copy of the document):
	// Checkpoint beyond it fails with a *LimitError (HTTP 413).
	// Concurrent Checkpoint calls may together go a little over it.
	MaxCheckpoints int
	// MaxChangesSteps bounds the steps between the two versions of one
	// Changes call, to-from (default DefaultMaxChangesSteps, 20,000):
	// Changes over it fails with a *LimitError (HTTP 413).
	MaxChangesSteps int
	// MaxChangesDiff bounds the work of the diffs of one Changes call,
	// in tokens read and compared (changeset.Options.MaxDiffWork;
	// default DefaultMaxChangesDiff, 100,000,000): Changes whose diffs
	// would go over it fails with a *LimitError (HTTP 413).
	MaxChangesDiff int64
	// MaxDocuments bounds the documents of the store (default 100,000):
	// creating one more fails with an error matching
	// ErrTooManyDocuments. The store's documents are counted at the
	// first creation, then the Authority's creations and deletions (an
	// approximation when other writers share the store).
	MaxDocuments int
	// MaxDocStorage bounds the bytes one document holds in the store:
	// its steps, snapshots, checkpoints and comments, as store.Sizer
	// counts them (default DefaultMaxDocStorage, 256 MiB). A submission
	// or checkpoint that would go over it is refused with a *QuotaError
	// (HTTP 507); deleting the document frees its bytes. Without a
	// store.Sizer only the bytes appended since the document was loaded
	// count. Concurrent checkpoints, and other writers sharing the store,
	// may take a document a little over it.
	MaxDocStorage int64
	// MaxClientStorage bounds the bytes that one user (the user of
	// Submit, Restore and Checkpoint) adds to the store: that many a day
	// on average and at once (default DefaultMaxClientStorage, 1 GiB).
	// Over it, a change is refused with a *QuotaError (HTTP 507) that
	// says when there is room again. It is counted by this Authority
	// since it started.
	MaxClientStorage int64
	// MaxCreatesPerHour bounds the documents that one user (the user of
	// Get, Events and Submit) creates by using them, with AutoCreate:
	// that many per hour on average and at once (default 1,000). Over
	// it, the request fails with a *RateError. CreateFor counts too.
	MaxCreatesPerHour int
	// MaxClientDocuments is the share of MaxDocuments that one user
	// creates, with AutoCreate or CreateFor (default MaxDocuments/4, at
	// least 1): creating one more fails with an error matching
	// ErrTooManyDocuments, for that user only. The count is of the
	// documents this Authority created for the user and that it has not
	// deleted since; it starts at 0 when the Authority starts (see
	// creations.go).
	MaxClientDocuments int
}

// The defaults of Limits besides apply.DefaultLimits.
const (
	DefaultMaxCommentBytes = 1 << 20
	DefaultMaxCommentText  = 64 << 10
	DefaultMaxComments     = 10_000
	// DefaultMaxDocuments is Limits.MaxDocuments' default.
	DefaultMaxDocuments = 100_000
	// DefaultMaxCheckpoints is Limits.MaxCheckpoints' default.
	DefaultMaxCheckpoints = 1000
	// DefaultMaxChangesSteps is Limits.MaxChangesSteps' default: about
	// a second of work (reading, replaying and condensing the steps) on
	// a small machine, for a day of one person's typing.
	DefaultMaxChangesSteps = 20_000
	// DefaultMaxChangesDiff is Limits.MaxChangesDiff's default: a
	// second or less of diffing on a small machine, dozens of long
	// paragraphs rewritten with a different text.
	DefaultMaxChangesDiff = 100_000_000
	// DefaultMaxCreatesPerHour is Limits.MaxCreatesPerHour' default.
	DefaultMaxCreatesPerHour = 1000
	// DefaultMaxDocStorage is Limits.MaxDocStorage's default (256 MiB).
	DefaultMaxDocStorage = 256 << 20
	// DefaultMaxClientStorage is Limits.MaxClientStorage's default
	// (1 GiB a day).
	DefaultMaxClientStorage = 1 << 30
	// DefaultClientMemoryShare and DefaultClientDocumentsShare make the
	// defaults of Limits.MaxClientMemory (MaxMemory divided by it) and
	// Limits.MaxClientDocuments (MaxDocuments divided by it).
	DefaultClientMemoryShare    = 4
	DefaultClientDocumentsShare = 4
)

// DefaultLimits returns the default limits. MaxMemory has none (no
// budget); MaxDocMemory, MaxClientMemory and MaxClientDocuments default
// to shares of MaxMemory and MaxDocuments, which WithDefaults computes.
func DefaultLimits() Limits {
	return Limits{
		Limits:            apply.DefaultLimits(),
		MaxCommentBytes:   DefaultMaxCommentBytes,
		MaxCommentText:    DefaultMaxCommentText,
		MaxComments:       DefaultMaxComments,
		MaxCheckpoints:    DefaultMaxCheckpoints,
		MaxChangesSteps:   DefaultMaxChangesSteps,
		MaxChangesDiff:    DefaultMaxChangesDiff,
		MaxDocuments:      DefaultMaxDocuments,
		MaxDocStorage:     DefaultMaxDocStorage,
		MaxClientStorage:  DefaultMaxClientStorage,
		MaxCreatesPerHour: DefaultMaxCreatesPerHour,
	}
}

// WithDefaults returns l with its zero (or negative) fields set to the
// defaults, and the shares of MaxMemory and MaxDocuments computed: the
// limits an Authority of l runs with.
func (l Limits) WithDefaults() Limits {
	defaults.Fill(&l, DefaultLimits())
	if l.MaxMemory <= 0 {
		l.MaxMemory, l.MaxDocMemory = 0, 0
	} else if l.MaxDocMemory <= 0 || l.MaxDocMemory > l.MaxMemory {
		l.MaxDocMemory = l.MaxMemory / 2
	}
	switch {
	case l.MaxMemory == 0 || l.MaxClientMemory < 0:
		l.MaxClientMemory = 0
	case l.MaxClientMemory == 0:
		l.MaxClientMemory = l.MaxMemory / DefaultClientMemoryShare
	case l.MaxClientMemory > l.MaxMemory:
		l.MaxClientMemory = l.MaxMemory
	}
	if l.MaxClientDocuments <= 0 {
		l.MaxClientDocuments = max(1, l.MaxDocuments/DefaultClientDocumentsShare)
	}
	return l
}

// Limits returns the limits in effect (the defaults filled in).
func (a *Authority) Limits() Limits { return a.cfg.Limits }
