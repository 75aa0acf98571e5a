package collab

import (
	"context"
	"errors"
	"fmt"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/store"
)

// Submission is what a client sends: steps made on the document at
// Version, and comment events (of comments and their threads).
type Submission struct {
	// Version is the version the steps were made on.
	Version int64
	// Steps are the steps' JSON forms.
	Steps [][]byte
	// ClientID identifies the client in Events (required with steps).
	ClientID ClientID
	// Comments are comment events, applied after the steps.
	Comments []CommentEvent
	// Author is the principal submitting (its id, as the server's policy
	// authenticated it; "" when anonymous). It is given to the hooks, and
	// recorded as the author of the steps and of the comments created.
	Author string
	// OwnComments restricts the edits and deletes of comments and
	// replies to those that Author created: changing another's (or an
	// anonymous one) is refused with an error matching ErrForbidden.
	// The server sets it for principals that are not admins.
	OwnComments bool
	// SuggestOnly restricts the steps to suggestions, as the suggest role
	// makes them with @handlewithcare/prosemirror-suggest-changes: the
	// document with its suggestions reverted must stay the same, the
	// suggestion ids brought in must be new (or Author's), and only
	// Author's suggestions may change or go; otherwise the submission is
	// refused with an error matching ErrForbidden that names the rule
	// (see suggestions.go). It needs a schema with the suggestion marks.
	// The server sets it for principals that may suggest but not edit.
	SuggestOnly bool
	// Ref, when not "", makes the submission a commit (commit mode,
	// commit.go): the client's id for it, 1 to 64 bytes, unique per
	// document. Steps made on an older version are rebased onto the
	// current document rather than refused, and a commit submitted again
	// under its Ref is answered as it was, without applying anything.
	Ref string
}

// Result is the answer to an accepted submission.
type Result struct {
	Version, CommentVersion int64
	// Commit is, for a commit (Submission.Ref), what became of its steps;
	// nil otherwise.
	Commit *Committed
}

// Committed is what became of a commit's steps.
type Committed struct {
	// From is the version before the steps that the commit added, which
	// made versions From+1 to Result.Version.
	From int64
	// Steps are the JSON of those steps, as they were applied.
	Steps [][]byte
	// Dropped are the indexes, ascending, of the submitted steps that no
	// longer applied.
	Dropped []int
}

// Submit applies a client's submission to the document id and returns
// its new version and comment version, once the change is durable.
//
// The version is checked first: a version ahead of the document (or
// negative) fails with ErrInvalidVersion, an older one with ErrConflict.
// Then each step is decoded with the document's schema and applied; a step
// that fails either way gives a *transform.StepError naming it. Comments
// are mapped through the steps, then the comment events are applied: a
// created comment's range refers to the document after the steps. A
// submission without steps at the current version changes only comments
// (or nothing) and keeps the version.
//
// Submit is all or nothing: when it fails, neither the document nor the
// store changed. Submissions to one document are applied one at a time;
// submissions to different documents proceed in parallel.
//
// A submission that can only conflict does not wait for those before it:
// one at a version older than the document's fails with ErrConflict at
// once, and one at the version that a store append in flight started from
// waits for that append alone, and fails with ErrConflict as soon as it
// is durable and published. So ErrConflict always means that Events has
// newer steps to show: should the append fail after all, nothing changed,
// and the submission goes on as if it had not been in flight. Likewise,
// when the store is a store.MetaSwapper shared with other writers and the
// append conflicts on the metadata alone (another writer's comment events
// at the same version), the submission's comment events are applied again
// to the latest comments and appended again, a few times at most.
//
// A submission with steps under a client id that belongs to another
// principal on the document (or, anonymous, to another user) fails with
// a *ClientIDError, as does one under RestoreClientID (see HoldClientID
// for how long a client id belongs to whom).
func (a *Authority) Submit(ctx context.Context, id, user string, s Submission) (Result, error) {
	return a.submit(ctx, id, user, s, false)
}

// submit is Submit; a server submission (Restore's, under
// RestoreClientID) is not checked against the owners of client ids. It
// drives the submission core (core.go): the core decides, submit reads
// its inputs and carries out its decision.
func (a *Authority) submit(ctx context.Context, id, user string, s Submission, server bool) (Result, error) {
	lim := a.submitLimits()
	sub, err := prepare(id, user, s, server, lim)
	if err != nil {
		return Result{}, err
	}
	d, err := a.acquire(ctx, id, user) // loaded (or created), and kept loaded until release
	if err != nil {
		return Result{}, err
	}
	defer a.release(d, user)
	// Not d's writer yet: d.mu is only taken for a moment, as readers do.
	d.mu.Lock()
	d.seen(user, a.now(), a.cfg.UsersWindow)
	d.mu.Unlock()

	// lockAt makes this call d's only writer (sem) until it returns: the
	// state it decides on stays d's until it publishes the next one. A
	// commit is rebased on what it finds, so it does not wait for the
	// append in flight to fail early.
	if grouped(sub) {
		return a.submitGrouped(ctx, d, user, sub, lim)
	}
	if s.Ref != "" {
		err = d.lock(ctx)
	} else {
		err = d.lockAt(ctx, s.Version)
	}
	if err != nil {
		return Result{}, err
	}
	defer d.unlock()
	for try := 1; ; try++ {
		res, err := a.submitLocked(ctx, d, user, sub, lim)
		// A commit that lost the race for its version to another node is
		// rebased again on what that node stored, a few times at most.
		if sub.Ref == "" || !errors.Is(err, ErrConflict) {
			return res, err
		}
		if try == maxCommitTries {
			return Result{}, ErrContended
		}
	}
}

// maxCommitTries is how many times Submit decides a commit whose append
// conflicts with other writers before it gives up with ErrContended.
const maxCommitTries = 16

// submitLocked decides sub on d, and carries the decision out. It is
// called with sem held.
func (a *Authority) submitLocked(ctx context.Context, d *document, user string, sub submission, lim submitLimits) (Result, error) {
	if a.isClosed() {
		return Result{}, ErrClosed
	}
	// A refused decision answers Result{}; one that changes nothing, its result.
	dec, err := decide(d.view(sub.clientID), sub, lim, a.now())
	if err != nil || !dec.changes() {
		return dec.result, err
	}
	if a.cfg.BeforeSubmit != nil {
		if err := dec.approve(a.cfg.BeforeSubmit(ctx, dec.proposal())); err != nil {
			return Result{}, err
		}
	}
	if err := a.makeRoom(ctx, d, user, dec); err != nil {
		return Result{}, err
	}
	// makeRoom raised d's memory estimate to dec's; publishing accounts
	// what d holds, and so does failing.
	published := false
	defer func() {
		if !published {
			a.account(d, d.state().memSize())
		}
	}()

	// The store is written here and nowhere else; submissions at dec's
	// base wait for the outcome (lockAt). The append must not be
	// abandoned halfway because the client went away: its outcome would
	// be unknown.
	call := d.startAppend(dec.base.version, dec.next.version)
	defer d.endAppend(call)
	if dec, err = a.appendDecision(context.WithoutCancel(ctx), d, dec, lim); err != nil || !dec.changes() {
		return dec.result, err // !changes: remade on other writers' comments, nothing was left
	}
	d.publish(dec.next, false) // durable: readers and subscribers see it now
	published = true
	a.committed(d, dec)
	return dec.result, nil
}

// submitLimits returns the values of a.cfg that decide a submission.
func (a *Authority) submitLimits() submitLimits {
	return submitLimits{
		maxSteps:       a.cfg.MaxSteps,
		maxCommentText: a.cfg.MaxCommentText,
		step:           apply.StepOptions{MaxDocSize: a.cfg.MaxDocSize, MaxDocBytes: a.cfg.MaxDocBytes, Strict: a.cfg.Strict},
		comments:       commentLimits{comments: a.cfg.MaxComments, bytes: a.cfg.MaxCommentBytes},
		history:        a.cfg.History,
		keepSteps:      a.cfg.BeforeSubmit != nil,
	}
}

// makeRoom checks that dec fits the storage quotas (allowStorage) and
// that d, as dec leaves it, fits the memory budget (admit, which raises
// d's estimate to it). It is called with sem held.
func (a *Authority) makeRoom(ctx context.Context, d *document, user string, dec decision) error {
	stored, err := a.docStored(ctx, d)
	if err != nil {
		return err
	}
	if err := a.allowStorage(d.id, user, stored, dec.add()); err != nil {
		return err
	}
	return a.admit(d, dec.next.memSize(), user)
}

// maxMetaTries is how many times Submit appends a submission whose
// appends conflict on the metadata alone (other writers' comments) before
// it gives up with ErrConflict.
const maxMetaTries = 8

// appendDecision appends dec's records, and its comment entry, to the
// store on dec.base (with a store.MetaSwapper, on dec.base's comment
// entries too), counts the bytes in d's storage, and returns the decision
// appended. The store keeps no
// more than that: the comments moved by the steps are mapped again when
// the document is loaded (commentLog.replay), so that a step costs the
// same whatever the comments.
//
// An append that conflicts on the metadata alone (another writer's
// comment events at the same version, with a store.MetaSwapper) is
// remade on the latest comments (decision.recomment) and tried again, a
// few times at most; the decision returned may then change nothing. When
// appendDecision fails, the store did not change, or d catches up with
// what it became. It is called with sem held.
func (a *Authority) appendDecision(ctx context.Context, d *document, dec decision, lim submitLimits) (decision, error) {
	for try := 1; ; try++ {
		var err error
		if a.swapper != nil {
			err = a.swapper.AppendIf(ctx, d.id, dec.base.version, dec.records, dec.base.metaSeq, dec.meta)
		} else {
			err = a.store.Append(ctx, d.id, dec.base.version, dec.records, dec.meta)
		}
		switch {
		case err == nil:
			d.storedMore(dec.add())
			return dec, nil
		case errors.Is(err, store.ErrNotFound):
			a.remove(d)
			return decision{}, fmt.Errorf("collab: %q: %w", d.id, ErrNotFound)
		case !errors.Is(err, store.ErrConflict):
			// The append may have happened nevertheless (a lost
			// acknowledgement): look, now or, the store failing, later
			// (its notice, if it committed, was taken for this append's
			// and dropped).
			if a.catchUp(ctx, d) != nil {
				a.recheck(d.id)
			}
			return decision{}, storeFailed(err, "collab: append to %q", d.id)
		}
		// Another writer moved the document on: catch up (or, the store
		// failing now, later).
		if a.catchUp(ctx, d) != nil {
			a.recheck(d.id)
		}
		v := d.view(nil)
		if v.deleted {
			return decision{}, fmt.Errorf("collab: %q: %w", d.id, ErrNotFound)
		}
		if a.swapper == nil || try == maxMetaTries {
			return decision{}, ErrConflict
		}
		if dec, err = dec.recomment(v.st, lim); err != nil || !dec.changes() {
			return dec, err
		}
	}
}

// committed follows dec's publish: the observer counts its steps, a
// snapshot starts when one is due, and Config.AfterCommit is given it.
func (a *Authority) committed(d *document, dec decision) {
	if a.cfg.Observer != nil && len(dec.records) > 0 {
		a.cfg.Observer.StepsAccepted(len(dec.records))
	}
	a.maybeSnapshot(d)
	if a.commits != nil {
		a.commits.add(dec.commit(a.now()))
	}
}
