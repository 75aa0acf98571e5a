package auth

import (
	"container/list"
	"sync"
)

// lru is a map of at most max entries that forgets the least recently
// used one to make room. It is safe for concurrent use.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *lruEntry, most recently used first
	items map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	key K
	val V
}

// newLRU returns an empty lru of at most n entries (at least 1).
func newLRU[K comparable, V any](n int) *lru[K, V] {
	return &lru[K, V]{max: max(n, 1), order: list.New(), items: map[K]*list.Element{}}
}

// get returns the value of k, marking it used.
func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry[K, V]).val, true
}

// put sets the value of k, forgetting the least recently used entry when
// the cache is full.
func (c *lru[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		e.Value.(*lruEntry[K, V]).val = v
		c.order.MoveToFront(e)
		return
	}
	if c.order.Len() >= c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruEntry[K, V]).key)
	}
	c.items[k] = c.order.PushFront(&lruEntry[K, V]{key: k, val: v})
}

// remove forgets k.
func (c *lru[K, V]) remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.order.Remove(e)
		delete(c.items, k)
	}
}

// len returns the number of entries.
func (c *lru[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
