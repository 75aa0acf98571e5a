package collab_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
)

// fakeTimers stands in for time.AfterFunc (Authority.SetTimerFunc): its
// timers run only when the test fires them.
type fakeTimers struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	ft      *fakeTimers
	f       func()
	stopped bool
	fired   bool
}

func (ft *fakeTimers) AfterFunc(_ time.Duration, f func()) interface{ Stop() bool } {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	t := &fakeTimer{ft: ft, f: f}
	ft.timers = append(ft.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.ft.mu.Lock()
	defer t.ft.mu.Unlock()
	if t.stopped || t.fired {
		return false
	}
	t.stopped = true
	return true
}

// Fire runs the timers armed now, as if they were due, and returns how
// many ran.
func (ft *fakeTimers) Fire() int {
	ft.mu.Lock()
	var due []*fakeTimer
	for _, t := range ft.timers {
		if !t.stopped && !t.fired {
			t.fired = true
			due = append(due, t)
		}
	}
	ft.mu.Unlock()
	for _, t := range due {
		t.f()
	}
	return len(due)
}

// Armed returns the number of timers neither stopped nor fired.
func (ft *fakeTimers) Armed() int {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	n := 0
	for _, t := range ft.timers {
		if !t.stopped && !t.fired {
			n++
		}
	}
	return n
}

// newUsersAuthority returns an Authority with a one-minute users window
// on clk and ft's timers.
func newUsersAuthority(t *testing.T, clk *clock, ft *fakeTimers) *collab.Authority {
	t.Helper()
	a := newAuthority(t, nil, collab.Config{Now: clk.Now, UsersWindow: time.Minute})
	a.SetTimerFunc(ft.AfterFunc)
	return a
}

// get counts user as a user of "d".
func get(t *testing.T, a *collab.Authority, user string) {
	t.Helper()
	if _, err := a.Get(context.Background(), "d", user); err != nil {
		t.Fatal(err)
	}
}

// TestEventsUsersWake checks which user-count changes answer a poll of
// u1 at version 0 (with no steps) and which do not. A poll that must not
// answer is then woken by a step, which its answer must hold.
func TestEventsUsersWake(t *testing.T) {
	tests := []struct {
		name   string
		others []string // users seen before the poll, with its user
		// before runs before the poll starts, during runs while it
		// waits; both get the clock and timers.
		before, during func(t *testing.T, a *collab.Authority, clk *clock, ft *fakeTimers)
		user           string // the poll's user ("" is no user)
		want           int    // the users of a users-only answer; 0: not answered until the step
	}{
		{
			name:   "new user",
			during: func(t *testing.T, a *collab.Authority, _ *clock, _ *fakeTimers) { get(t, a, "u2") },
			user:   "u1",
			want:   2,
		},
		{
			name: "new user by Submit",
			during: func(t *testing.T, a *collab.Authority, _ *clock, _ *fakeTimers) {
				if _, err := a.Submit(context.Background(), "d", "u2", collab.Submission{}); err != nil {
					t.Fatal(err)
				}
			},
			user: "u1",
			want: 2,
		},
		{
			name:   "known user again",
			others: []string{"u2"},
			during: func(t *testing.T, a *collab.Authority, clk *clock, ft *fakeTimers) {
				clk.Advance(time.Second)
				get(t, a, "u2")
				get(t, a, "u1")
				ft.Fire()
			},
			user: "u1",
		},
		{
			name:   "expiry, noticed by the timer",
			others: []string{"u2"},
			during: func(t *testing.T, a *collab.Authority, clk *clock, ft *fakeTimers) {
				clk.Advance(59 * time.Second)
				ft.Fire() // early: u2 is still there
				clk.Advance(time.Second)
				if ft.Fire() != 1 {
					t.Error("no users timer armed for u2's expiry")
				}
			},
			user: "u1",
			want: 1,
		},
		{
			name:   "expiry, noticed by List",
			others: []string{"u2"},
			during: func(t *testing.T, a *collab.Authority, clk *clock, _ *fakeTimers) {
				clk.Advance(time.Minute)
				if _, err := a.List(context.Background()); err != nil {
					t.Fatal(err)
				}
			},
			user: "u1",
			want: 1,
		},
		{
			// u3 joins within usersWakeEvery of the wake-up that u4's
			// joining made, so its wake-up waits; u2 expires meanwhile, and
			// the count is back where the poll began.
			name:   "one comes, one goes",
			others: []string{"u2"},
			before: func(t *testing.T, a *collab.Authority, clk *clock, _ *fakeTimers) {
				clk.Advance(time.Minute - 100*time.Millisecond)
				// u2 expires in 100 ms.
				ctx, cancel := context.WithCancel(context.Background())
				ch := poll(t, a, ctx, "u1", 0, 0)
				get(t, a, "u4") // a wake-up now
				r := recv(t, ch)
				cancel()
				if r.err != nil || r.ev.Users != 3 {
					t.Fatalf("setup poll: %+v, %v", r.ev, r.err)
				}
			},
			during: func(t *testing.T, a *collab.Authority, clk *clock, ft *fakeTimers) {
				clk.Advance(50 * time.Millisecond)
				get(t, a, "u3") // 4 users, wake-up in 200 ms
				clk.Advance(50 * time.Millisecond)
				ft.Fire() // u2 expires: 3 users
				clk.Advance(150 * time.Millisecond)
				ft.Fire() // the wake-up
				if at := a.UsersWokenAt("d"); !at.Equal(clk.Now()) {
					t.Errorf("the waiters were not woken (last at %v)", at)
				}
				if n := mustGet(t, a, "d").Users; n != 3 {
					t.Errorf("%d users, want 3", n)
				}
			},
			user: "u1",
		},
		{
			// A subscription without a user (a relay such as the
			// WebSocket hub) is told of the count too.
			name:   "no user: the count too",
			during: func(t *testing.T, a *collab.Authority, _ *clock, _ *fakeTimers) { get(t, a, "u2") },
			user:   "",
			want:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk, ft := newClock(), &fakeTimers{}
			a := newUsersAuthority(t, clk, ft)
			for _, u := range append([]string{tt.user}, tt.others...) {
				get(t, a, u)
			}
			if tt.before != nil {
				tt.before(t, a, clk, ft)
			}
			ch := pollAnyone(t, a, tt.user)
			tt.during(t, a, clk, ft)
			if tt.want == 0 {
				select {
				case r := <-ch:
					t.Fatalf("answered: %+v, %v", r.ev, r.err)
				case <-time.After(20 * time.Millisecond):
				}
				mustSubmit(t, a, "d", collab.Submission{Steps: steps(insert(1, "x"))})
			}
			r := recv(t, ch)
			switch {
			case r.err != nil:
				t.Fatal(r.err)
			case tt.want == 0 && (len(r.ev.Steps) != 1 || r.ev.Version != 1):
				t.Fatalf("answered before the step: %+v", r.ev)
			case tt.want != 0 && (r.ev.Users != tt.want || len(r.ev.Steps) != 0 || len(r.ev.Comment) != 0 || r.ev.Version != 0):
				t.Fatalf("answer %+v, want %d users and no steps", r.ev, tt.want)
			}
			if tt.want != 0 {
				if got, want := string(r.ev.AppendJSON(nil)), `{"version":0,"commentVersion":0,"steps":[],"clientIDs":[],"comment":[],"users":`+strconv.Itoa(tt.want)+`}`; got != want {
					t.Fatalf("JSON %s, want %s", got, want)
				}
			}
		})
	}
}

// pollAnyone is poll for any user, "" included: for "", whose
// subscription Authority.Waiting does not count, it subscribes before it
// returns and takes the first update in the background.
func pollAnyone(t *testing.T, a *collab.Authority, user string) <-chan eventsResult {
	t.Helper()
	if user != "" {
		return poll(t, a, context.Background(), user, 0, 0)
	}
	sub, err := a.Subscribe(context.Background(), "d", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	out := make(chan eventsResult, 1)
	go func() {
		ev, err := sub.Next(context.Background())
		out <- eventsResult{ev, err}
	}()
	return out
}

// TestEventsUsersCoalesce checks that user-count changes wake the waiters
// at most once per 250 ms: at once after a quiet time, then together at
// the end of the 250 ms.
func TestEventsUsersCoalesce(t *testing.T) {
	const joining = 100
	clk, ft := newClock(), &fakeTimers{}
	a := newUsersAuthority(t, clk, ft)
	get(t, a, "u0")
	var chs []<-chan eventsResult
	for range 3 {
		chs = append(chs, poll(t, a, context.Background(), "u0", 0, 0))
	}
	start := clk.Now()
	get(t, a, "u1") // at once
	if at := a.UsersWokenAt("d"); !at.Equal(start) {
		t.Fatalf("woken at %v, want at once (%v)", at, start)
	}
	for _, ch := range chs {
		if r := recv(t, ch); r.err != nil || r.ev.Users != 2 {
			t.Fatalf("first wake-up: %+v, %v", r.ev, r.err)
		}
	}
	chs = chs[:0]
	for range 3 {
		chs = append(chs, poll(t, a, context.Background(), "u0", 0, 0))
	}
	// These come within 250 ms of the first: one wake-up at its end. An
	// earlier one would answer fewer users.
	for i := range joining {
		clk.Advance(time.Millisecond)
		get(t, a, "v"+strconv.Itoa(i))
		ft.Fire() // too early: armed again
	}
	if at := a.UsersWokenAt("d"); !at.Equal(start) {
		t.Fatalf("woken again %v after the first wake-up", at.Sub(start))
	}
	clk.Advance(250*time.Millisecond - joining*time.Millisecond)
	if n := ft.Fire(); n != 1 {
		t.Fatalf("%d timers fired, want 1", n)
	}
	if at := a.UsersWokenAt("d"); at.Sub(start) != 250*time.Millisecond {
		t.Fatalf("woken %v after the first wake-up, want 250ms", at.Sub(start))
	}
	for _, ch := range chs {
		if r := recv(t, ch); r.err != nil || r.ev.Users != 2+joining {
			t.Fatalf("coalesced wake-up: %+v, %v", r.ev, r.err)
		}
	}
}

// TestUsersTimers checks that the users timer is armed only while users
// wait and some user can expire, and that none is left once the waiters
// are gone, after unload and after Close.
func TestUsersTimers(t *testing.T) {
	ctx := context.Background()
	clk, ft := newClock(), &fakeTimers{}
	a := newAuthority(t, nil, collab.Config{Now: clk.Now, UsersWindow: time.Minute, IdleUnload: time.Hour})
	a.SetTimerFunc(ft.AfterFunc)
	check := func(what string, want int) {
		t.Helper()
		if n := a.UsersTimers(); n != int64(want) || ft.Armed() != want {
			t.Fatalf("%s: %d users timers (%d fake ones armed), want %d", what, n, ft.Armed(), want)
		}
	}
	get(t, a, "u1")
	check("no waiter", 0)
	pctx, cancel := context.WithCancel(ctx)
	ch := poll(t, a, pctx, "u2", 0, 0)
	check("a waiter, u1 can expire", 1)
	clk.Advance(time.Minute)
	ft.Fire()
	if r := recv(t, ch); r.err != nil || r.ev.Users != 1 {
		t.Fatalf("expiry: %+v, %v", r.ev, r.err)
	}
	check("the waiter is gone", 0)
	// u2 only, waiting: the timer still armed for u2's expiry, from
	// before its wait, finds none and is not armed again.
	ch = poll(t, a, pctx, "u2", 0, 0)
	clk.Advance(time.Minute)
	ft.Fire()
	check("a waiter, no user can expire", 0)
	cancel()
	if r := recv(t, ch); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("canceled poll: %+v, %v", r.ev, r.err)
	}
	check("the waiter left", 0)
	clk.Advance(time.Hour)
	a.UnloadIdle()
	if loaded, _ := a.Loaded("d"); loaded {
		t.Fatal("not unloaded")
	}
	check("unloaded", 0)

	// Close with a waiter and a timer armed.
	get(t, a, "u1")
	ch = poll(t, a, ctx, "u2", 0, 0)
	check("a waiter again", 1)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed", 0)
	if r := recv(t, ch); !errors.Is(r.err, collab.ErrClosed) {
		t.Fatalf("poll at Close: %+v, %v", r.ev, r.err)
	}
	check("closed, the waiter gone", 0)
}

// TestUsersRealTimer runs the expiry of a user on the real clock and
// timers: the waiting poll answers once the other user's window passed.
func TestUsersRealTimer(t *testing.T) {
	const window = 50 * time.Millisecond
	a := newAuthority(t, nil, collab.Config{UsersWindow: window})
	get(t, a, "u1")
	start := time.Now()
	ch := poll(t, a, context.Background(), "u2", 0, 0)
	r := recv(t, ch)
	if d := time.Since(start); r.err != nil || r.ev.Users != 1 || len(r.ev.Steps) != 0 || d < window/2 {
		t.Fatalf("after %v: %+v, %v", d, r.ev, r.err)
	}
	if n := a.UsersTimers(); n != 0 {
		t.Fatalf("%d users timers after the poll answered", n)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := a.UsersTimers(); n != 0 {
		t.Fatalf("%d users timers after Close", n)
	}
}

// TestSubscriptionUsers checks a subscription without a user, as the
// WebSocket hub holds: Next answers a new user, the expiry of users (with
// the users timer the subscription arms, as a waiting user would) and a
// change of the document, each with the count; ctx's error when ctx is
// done.
func TestSubscriptionUsers(t *testing.T) {
	ctx := context.Background()
	clk, ft := newClock(), &fakeTimers{}
	a := newAuthority(t, nil, collab.Config{Now: clk.Now, UsersWindow: time.Minute, IdleUnload: time.Hour})
	a.SetTimerFunc(ft.AfterFunc)
	get(t, a, "u1")
	sub, err := a.Subscribe(ctx, "d", "", -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	type result struct {
		ev  collab.Events
		err error
	}
	next := func(ctx context.Context) <-chan result {
		out := make(chan result, 1)
		go func() {
			ev, err := sub.Next(ctx)
			out <- result{ev, err}
		}()
		return out
	}
	wait := func(what string, ch <-chan result, users int, version int64) {
		t.Helper()
		select {
		case r := <-ch:
			if r.ev.Users != users || r.ev.Version != version || r.err != nil {
				t.Fatalf("%s: %+v, %v; want %d users at version %d", what, r.ev, r.err, users, version)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Next did not return", what)
		}
	}
	if ft.Armed() == 0 {
		t.Fatal("the subscription armed no users timer") // the expiry of u1
	}

	ch := next(ctx)
	get(t, a, "u2")
	clk.Advance(time.Second) // past the wake-up delay
	ft.Fire()
	wait("a new user", ch, 2, 0)

	ch = next(ctx)
	clk.Advance(time.Minute)
	ft.Fire()
	wait("both expired", ch, 0, 0)

	ch = next(ctx)
	mustSubmit(t, a, "d", collab.Submission{Version: 0, Steps: steps(insert(1, "x")), ClientID: collab.ClientID("1")})
	wait("a change of the document", ch, 0, 1)

	cctx, cancel := context.WithCancel(ctx)
	ch = next(cctx)
	cancel()
	select {
	case r := <-ch:
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("canceled: %+v, %v", r.ev, r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next did not return after its ctx was done")
	}
}
