package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmauthority/pmauthority/internal/pgtest"
	"github.com/pmauthority/pmauthority/store"
)

// wait is how long a test waits for a notice before failing.
const wait = 30 * time.Second

// subscribe subscribes to s, returning the channel of its notices.
func subscribe(t *testing.T, s *Store) <-chan store.Notice {
	ch := make(chan store.Notice, 1000)
	cancel := s.Subscribe(func(n store.Notice) { ch <- n })
	t.Cleanup(cancel)
	return ch
}

// next returns the next notice of ch for which ok holds, skipping the
// others, and fails when none comes.
func next(t *testing.T, ch <-chan store.Notice, what string, ok func(store.Notice) bool) store.Notice {
	t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case n := <-ch:
			if ok(n) {
				return n
			}
		case <-timeout:
			t.Fatalf("no notice %s within %v", what, wait)
		}
	}
}

func is(want store.Notice) func(store.Notice) bool {
	return func(n store.Notice) bool { return n == want }
}

// TestNotify checks that the commits of one Store reach the subscribers
// of another on the same database, in commit order, with what
// store.Notice says.
func TestNotify(t *testing.T) {
	url := pgtest.URL(t)
	a, b := open(t, url), open(t, url)
	defer a.Close()
	defer b.Close()
	ch := subscribe(t, b)
	// The first notice says that what came before LISTEN was not heard.
	next(t, ch, "after LISTEN", is(store.Notice{}))
	ctx := context.Background()
	if err := a.Create(ctx, "d", "basic", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, "d", 0, []store.Step{{JSON: []byte(`{}`)}, {JSON: []byte(`{}`)}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, "d", 2, nil, []byte(`"m"`)); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, "d", 0, []store.Step{{JSON: []byte(`{}`)}}, nil); err == nil {
		t.Fatal("a stale append succeeded")
	}
	if err := a.Delete(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []store.Notice{
		{ID: "d", Version: 0},
		{ID: "d", Version: 2},
		{ID: "d", Version: 2, MetaOnly: true},
		{ID: "d", Version: -1},
	} {
		select {
		case got := <-ch:
			if got != want {
				t.Errorf("notice %+v, want %+v", got, want)
			}
		case <-time.After(wait):
			t.Fatalf("no notice %+v within %v", want, wait)
		}
	}
	// The store's own commits are noticed too.
	own := subscribe(t, a)
	next(t, own, "after LISTEN", is(store.Notice{}))
	if err := a.Create(ctx, "e", "basic", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	next(t, own, "of an own Create", is(store.Notice{ID: "e"}))
}

// TestListenerReconnect terminates the listener's connection: the
// listener reconnects, tells its subscribers to check everything, and
// hears the commits after.
func TestListenerReconnect(t *testing.T) {
	url := pgtest.URL(t)
	a, b := open(t, url), open(t, url)
	defer a.Close()
	defer b.Close()
	ch := subscribe(t, b)
	next(t, ch, "after LISTEN", is(store.Notice{}))
	ctx := context.Background()
	if err := a.Create(ctx, "d", "basic", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	next(t, ch, "of the Create", is(store.Notice{ID: "d"}))

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var killed int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN `+channel+`' AND pid <> pg_backend_pid()`).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d listeners (%v), want 1", killed, err)
	}
	// A commit while the listener may be away: it is either heard, or
	// covered by the check of everything after the reconnect.
	if err := a.Append(ctx, "d", 0, []store.Step{{JSON: []byte(`{}`)}}, nil); err != nil {
		t.Fatal(err)
	}
	next(t, ch, "after the reconnect", is(store.Notice{}))
	if err := a.Append(ctx, "d", 1, []store.Step{{JSON: []byte(`{}`)}}, nil); err != nil {
		t.Fatal(err)
	}
	next(t, ch, "of the append after the reconnect", is(store.Notice{ID: "d", Version: 2}))
}

// TestListenerPing lets the listener ping its idle connection many
// times: the connection stays, and no notice is lost or made up.
func TestListenerPing(t *testing.T) {
	url := pgtest.URL(t)
	a, b := open(t, url), open(t, url)
	defer a.Close()
	defer b.Close()
	b.notes.ping = time.Millisecond
	ch := subscribe(t, b)
	next(t, ch, "after LISTEN", is(store.Notice{}))
	ctx := context.Background()
	var pid uint32
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	listener := func() uint32 {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
			WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
			AND query IN ('LISTEN `+channel+`', '-- ping')`).Scan(&pid); err != nil {
			t.Fatalf("the listener's backend: %v", err)
		}
		return pid
	}
	first := listener()
	for i := range 20 {
		time.Sleep(5 * time.Millisecond) // idle: the listener pings
		if err := a.Create(ctx, fmt.Sprint("d", i), "basic", []byte(`{}`), nil); err != nil {
			t.Fatal(err)
		}
		if got := <-ch; got != (store.Notice{ID: fmt.Sprint("d", i)}) {
			t.Fatalf("notice %+v, want the Create of d%d", got, i)
		}
	}
	if pid := listener(); pid != first {
		t.Errorf("the listener's backend changed from %d to %d: it reconnected", first, pid)
	}
}
