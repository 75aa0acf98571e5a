package collab

import (
	"context"
	"errors"
	"slices"
)

// Group commit. Commits of steps alone to one document wait in its queue
// (document.commits) in the order they arrive. Whichever of them takes
// the writer semaphore leads: it takes the queue, decides each commit in
// turn on the state that the ones before it leave (each rebased over
// them), and appends all that were accepted in one store append (one
// fsync, one PostgreSQL transaction), then publishes once and answers
// each. A commit that fails is answered at once and leaves the others
// be. First come, first served: a commit is decided in its place in the
// queue, whoever leads.
//
// Commits with comment events, and classic submissions, are decided
// alone (submitLocked): a store append carries one comment entry, at its
// last version.

// maxGroup is the largest number of commits decided together.
const maxGroup = 64

// pendingCommit is a commit waiting in its document's queue.
type pendingCommit struct {
	ctx   context.Context
	user  string
	sub   submission
	taken bool          // a leader decides it (document.mu)
	done  chan struct{} // closed once res and err are set
	res   Result
	err   error
}

func (p *pendingCommit) finish(res Result, err error) {
	p.res, p.err = res, err
	close(p.done)
}

// grouped reports whether sub is decided in a group.
func grouped(sub submission) bool { return sub.Ref != "" && len(sub.Comments) == 0 }

// submitGrouped queues sub, a commit of steps alone, on d, and returns
// its answer once a leader (this call or another) has decided it and
// made it durable.
func (a *Authority) submitGrouped(ctx context.Context, d *document, user string, sub submission, lim submitLimits) (Result, error) {
	p := &pendingCommit{ctx: ctx, user: user, sub: sub, done: make(chan struct{})}
	d.mu.Lock()
	d.commits = append(d.commits, p)
	d.mu.Unlock()
	for {
		select {
		case <-p.done:
			return p.res, p.err
		case d.sem <- struct{}{}:
			select {
			case <-p.done: // decided by the leader before
			default:
				a.commitGroup(d, lim)
			}
			d.unlock()
			<-p.done // the group included p, queued before
			return p.res, p.err
		case <-ctx.Done():
			d.mu.Lock()
			if !p.taken {
				d.commits = slices.DeleteFunc(d.commits, func(q *pendingCommit) bool { return q == p })
				d.mu.Unlock()
				return Result{}, ctx.Err()
			}
			d.mu.Unlock()
			<-p.done // its append is not abandoned halfway
			return p.res, p.err
		}
	}
}

// commitGroup takes the commits queued on d (maxGroup at most), decides
// them in order, and appends those accepted in one store append. It is
// called with sem held, and answers every commit it takes.
func (a *Authority) commitGroup(d *document, lim submitLimits) {
	d.mu.Lock()
	n := min(len(d.commits), maxGroup)
	group := slices.Clone(d.commits[:n])
	d.commits = slices.Delete(d.commits, 0, n)
	for _, p := range group {
		p.taken = true
	}
	d.mu.Unlock()
	for try := 1; len(group) > 0; try++ {
		decs, members := a.decideGroup(d, group, lim)
		if len(decs) == 0 {
			return
		}
		err := a.appendGroup(d, decs, lim)
		if err == nil {
			if o, ok := a.cfg.Observer.(GroupObserver); ok {
				o.CommitsGrouped(len(members))
			}
			for i, p := range members {
				a.committed(d, decs[i])
				p.finish(decs[i].result, nil)
			}
			return
		}
		// Lost to another node: decided again on what it stored, a few
		// times at most.
		if errors.Is(err, ErrConflict) && try == maxCommitTries {
			err = ErrContended
		}
		if !errors.Is(err, ErrConflict) {
			for _, p := range members {
				p.finish(Result{}, err)
			}
			return
		}
		group = members
	}
}

// decideGroup decides the commits of group in order, each on the state
// that the ones accepted before it leave, and returns the decisions that
// change the document with their commits. The others are answered.
func (a *Authority) decideGroup(d *document, group []*pendingCommit, lim submitLimits) ([]decision, []*pendingCommit) {
	var (
		decs    []decision
		members []*pendingCommit
		owners  map[string]owner // the client ids that decs use
	)
	base := d.view(nil)
	st := base.st
	for _, p := range group {
		if a.isClosed() {
			p.finish(Result{}, ErrClosed)
			continue
		}
		v := d.view(p.sub.clientID)
		v.st = st
		cid := string(p.sub.clientID)
		if o, ok := owners[cid]; ok && !p.sub.server && !o.admits(p.sub.by) {
			p.finish(Result{}, &ClientIDError{ClientID: p.sub.clientID})
			continue
		}
		dec, err := decide(v, p.sub, lim, a.now())
		if err == nil && dec.changes() && a.cfg.BeforeSubmit != nil {
			err = dec.approve(a.cfg.BeforeSubmit(p.ctx, dec.proposal()))
		}
		if err == nil && dec.changes() {
			err = a.makeRoom(p.ctx, d, p.user, dec)
		}
		if err != nil || !dec.changes() {
			p.finish(dec.result, err)
			continue
		}
		if owners == nil {
			owners = make(map[string]owner)
		}
		owners[cid] = p.sub.by
		decs, members = append(decs, dec), append(members, p)
		st = dec.next
	}
	return decs, members
}

// appendGroup appends the records of decs, decided one after the other
// on d's state, in one store append, and publishes the state after the
// last. It is called with sem held.
func (a *Authority) appendGroup(d *document, decs []decision, lim submitLimits) error {
	all := decision{base: decs[0].base, next: decs[len(decs)-1].next}
	for _, dec := range decs {
		all.records = append(all.records, dec.records...)
		all.added = append(all.added, dec.added...)
	}
	call := d.startAppend(all.base.version, all.next.version)
	defer d.endAppend(call)
	all, err := a.appendDecision(context.Background(), d, all, lim)
	if err != nil {
		a.account(d, d.state().memSize())
		return err
	}
	d.publish(all.next, false)
	return nil
}
