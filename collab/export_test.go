package collab

// Hooks for the external tests.

// UnloadIdle runs one round of the janitor.
func (a *Authority) UnloadIdle() { a.unloadIdle() }

// WaitBackground waits for the background snapshots started so far.
func (a *Authority) WaitBackground() { a.bg.Wait() }

// Loaded reports whether the document id is in memory, and how many
// requests (waiters included) use it.
func (a *Authority) Loaded(id string) (loaded bool, refs int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := a.docs[id]
	if d == nil {
		return false, 0
	}
	return d.loaded, d.refs
}

// Waiting returns the number of Events calls waiting on the document id.
func (a *Authority) Waiting(id string) int {
	a.mu.Lock()
	d := a.docs[id]
	a.mu.Unlock()
	if d == nil {
		return 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, u := range d.users {
		n += u.waiting
	}
	return n
}
