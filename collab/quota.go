package collab

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pmauthority/pmauthority/internal/ratelimit"
	"github.com/pmauthority/pmauthority/store"
)

// ErrStorageQuota is matched by the refusal of a change that would take
// a document over Config.MaxDocStorage, or that its client may not store
// under Config.MaxClientStorage (HTTP 507). Nothing changed.
var ErrStorageQuota = errors.New("storage quota exceeded")

// QuotaError is a change refused by a storage quota: Msg names the
// quota and its field, as in "(Limits.MaxDocStorage)". It matches
// ErrStorageQuota.
type QuotaError struct {
	Msg string
	// RetryAfter, for Config.MaxClientStorage, is when the client's
	// quota has room for the change again (0 when it never will: the
	// change is larger than the quota).
	RetryAfter time.Duration
}

func (e *QuotaError) Error() string { return e.Msg }

func (e *QuotaError) Is(target error) bool { return target == ErrStorageQuota }

// clientStorageWindow is the period over which Config.MaxClientStorage
// refills.
const clientStorageWindow = 24 * time.Hour

// quota is the state of the storage quotas.
type quota struct {
	sizer   store.Sizer      // the store, when it is one
	clients *ratelimit.Table // the bytes each client stored lately
}

func newQuota(cfg Config) quota {
	q := quota{clients: ratelimit.NewTable(float64(cfg.MaxClientStorage)/clientStorageWindow.Seconds(), float64(cfg.MaxClientStorage))}
	q.sizer, _ = cfg.Store.(store.Sizer)
	return q
}

// stepBytes returns what records and a metadata entry of meta bytes add
// to the store (as store.Sizer counts it).
func stepBytes(records []store.Step, meta int) int64 {
	n := int64(meta)
	for _, r := range records {
		n += int64(len(r.JSON) + len(r.ClientID) + len(r.Author) + len(r.Commit))
	}
	return n
}

// docStored returns the bytes that the loaded document d holds in the
// store: measured (store.Sizer) when not known since the latest snapshot,
// else counted since. Without a Sizer, it is what was appended since the
// load. It is called with d's writer semaphore held.
func (a *Authority) docStored(ctx context.Context, d *document) (int64, error) {
	d.mu.Lock()
	n := d.stored
	d.mu.Unlock()
	if n >= 0 {
		return n, nil
	}
	n = 0
	if a.quota.sizer != nil {
		var err error
		if n, err = a.quota.sizer.Size(ctx, d.id); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return 0, fmt.Errorf("collab: %q: %w", d.id, ErrNotFound)
			}
			return 0, storeFailed(err, "collab: size of %q", d.id)
		}
	}
	d.mu.Lock()
	if d.stored < 0 {
		d.stored = n
	}
	d.mu.Unlock()
	return n, nil
}

// storedMore counts add bytes appended to the loaded document d.
func (d *document) storedMore(add int64) {
	d.mu.Lock()
	if d.stored >= 0 {
		d.stored += add
	}
	d.mu.Unlock()
}

// allowStorage checks that the document id, which holds stored bytes in
// the store, may take add more, and that user may store them (Config.
// MaxClientStorage, counted when allowed; "" is not counted). It returns
// a *QuotaError when not.
func (a *Authority) allowStorage(id, user string, stored, add int64) error {
	if add <= 0 {
		return nil
	}
	if limit := a.cfg.MaxDocStorage; stored+add > limit {
		return &QuotaError{Msg: fmt.Sprintf("storage quota of the document %q: it holds %d bytes in the store, %d more would go over the limit of %d (Limits.MaxDocStorage)",
			id, stored, add, limit)}
	}
	if user == "" {
		return nil
	}
	if ok, wait := a.quota.clients.TakeN(user, float64(add), a.now()); !ok {
		if add > a.cfg.MaxClientStorage {
			wait = 0
		}
		return &QuotaError{RetryAfter: wait,
			Msg: fmt.Sprintf("storage quota of this client: storing %d bytes more would go over the limit of %d a day (Limits.MaxClientStorage)",
				add, a.cfg.MaxClientStorage)}
	}
	return nil
}
