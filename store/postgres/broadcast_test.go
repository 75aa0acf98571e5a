package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/pgtest"
	"github.com/pmauthority/pmauthority/store"
)

type cast struct {
	node, msg string
}

// subscribeCasts subscribes to the broadcasts of topic on s.
func subscribeCasts(t *testing.T, s *Store, topic string) <-chan cast {
	t.Helper()
	ch := make(chan cast, 10000)
	t.Cleanup(s.SubscribeBroadcasts(topic, func(node string, msg []byte) { ch <- cast{node, string(msg)} }))
	return ch
}

// listening waits until the listener of s listens (it has started).
func listening(t *testing.T, s *Store) {
	t.Helper()
	next(t, subscribe(t, s), "after LISTEN", is(store.Notice{}))
}

func nextCast(t *testing.T, ch <-chan cast) cast {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(wait):
		t.Fatalf("no broadcast within %v", wait)
		return cast{}
	}
}

// TestBroadcast checks that the broadcasts of one Store reach the
// subscribers of their topic on another, in order, with the sender's
// node id, and never the sender's own subscribers; and that many
// messages queued at once go in few payloads.
func TestBroadcast(t *testing.T) {
	url := pgtest.URL(t)
	a, b := open(t, url), open(t, url)
	defer a.Close()
	defer b.Close()
	if a.Node() == b.Node() || len(a.Node()) != 16 {
		t.Fatalf("node ids %q and %q: want two different ones", a.Node(), b.Node())
	}
	listening(t, a)
	listening(t, b)
	atB := subscribeCasts(t, b, "presence")
	otherAtB := subscribeCasts(t, b, "users")
	atA := subscribeCasts(t, a, "presence")

	const n = 500
	body := strings.Repeat("x", 90)
	for i := range n {
		if err := a.Broadcast("presence", fmt.Appendf(nil, "%d %s", i, body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Broadcast("users", []byte("u")); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		got := nextCast(t, atB)
		if want := (cast{a.Node(), fmt.Sprintf("%d %s", i, body)}); got != want {
			t.Fatalf("broadcast %d: got %.40v…, want %.40v…", i, got, want)
		}
	}
	if got := nextCast(t, otherAtB); got != (cast{a.Node(), "u"}) {
		t.Errorf("on the other topic: %v", got)
	}
	// Far fewer payloads than messages: 500 of about 100 bytes fit in
	// 7, and the first may go alone before the others are queued.
	if p := a.casts.payloads.Load(); p > 20 {
		t.Errorf("%d messages went in %d payloads, want at most 20", n, p)
	}
	t.Logf("%d messages in %d payloads and %d statements", n+1, a.casts.payloads.Load(), a.casts.statements.Load())

	// b's answer reaches a; a's own messages never did (a heard them
	// before b's, in commit order).
	if err := b.Broadcast("presence", []byte("from b")); err != nil {
		t.Fatal(err)
	}
	if got := nextCast(t, atA); got != (cast{b.Node(), "from b"}) {
		t.Errorf("a heard %.60v first, want b's message", got)
	}
}

// TestBroadcastRefused checks Broadcast's refusals: nothing of them is
// sent.
func TestBroadcastRefused(t *testing.T) {
	s := open(t, pgtest.URL(t))
	for _, tc := range []struct {
		topic, msg string
		want       string
	}{
		{"", "m", "topic"},
		{"a b", "m", "topic"},
		{strings.Repeat("t", 65), "m", "topic"},
		{"t", strings.Repeat("m", store.MaxBroadcast), "at most"},
		{"t", "a\x00b", "UTF-8 text without NUL"},
		{"t", "\xff", "UTF-8 text without NUL"},
	} {
		err := s.Broadcast(tc.topic, []byte(tc.msg))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Broadcast(%.20q, %.20q) = %v, want an error with %q", tc.topic, tc.msg, err, tc.want)
		}
	}
	if err := s.Broadcast("t", []byte(strings.Repeat("m", store.MaxBroadcast-1))); err != nil {
		t.Errorf("a message of the longest length: %v", err)
	}
	s.Close()
	if err := s.Broadcast("t", []byte("m")); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Broadcast after Close = %v, want ErrClosed", err)
	}
	if s.casts.payloads.Load() != 1 {
		t.Errorf("%d payloads sent, want 1 (the longest message, sent by Close)", s.casts.payloads.Load())
	}
}

// TestPackCasts checks that payloads hold the messages in order, each
// payload under PostgreSQL's limit, and parse back.
func TestPackCasts(t *testing.T) {
	var msgs []castMsg
	for i := range 300 {
		msgs = append(msgs, castMsg{topic: "t" + fmt.Sprint(i%3), msg: []byte(strings.Repeat("é", i*7%400))})
	}
	msgs = append(msgs, castMsg{topic: "big", msg: []byte(strings.Repeat("b", store.MaxBroadcast-3))}, castMsg{topic: "e", msg: nil})
	payloads := packCasts("0123456789abcdef", msgs)
	var back []castMsg
	total := 0
	for _, p := range payloads {
		if len(p) > maxPayload {
			t.Fatalf("a payload of %d bytes", len(p))
		}
		total += len(p)
		node, got, ok := parseCasts(p)
		if !ok || node != "0123456789abcdef" {
			t.Fatalf("payload %.40q: node %q, ok %v", p, node, ok)
		}
		back = append(back, got...)
	}
	if len(back) != len(msgs) {
		t.Fatalf("%d messages back, want %d", len(back), len(msgs))
	}
	for i := range msgs {
		if back[i].topic != msgs[i].topic || string(back[i].msg) != string(msgs[i].msg) {
			t.Fatalf("message %d changed", i)
		}
	}
	// Packed tight: no payload could have taken the next message.
	if min := total/maxPayload + 1; len(payloads) > min+1 {
		t.Errorf("%d payloads for %d bytes", len(payloads), total)
	}
	for _, bad := range []string{"", "node", "node\n", "node\nt 3\nab", "node\nt x\nab", "node\n 1\na", "node\nt -1\n"} {
		if _, _, ok := parseCasts(bad); ok {
			t.Errorf("parseCasts(%q) accepted a malformed payload", bad)
		}
	}
}

// TestAuthoritiesUsers runs two Authorities on two Stores over one
// database: a waiting Events call on one answers when a user comes on
// the other, with the count of both.
func TestAuthoritiesUsers(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	sa, sb := open(t, url), open(t, url)
	defer sa.Close()
	defer sb.Close()
	listening(t, sa)
	listening(t, sb)
	a, b := newAuthority(t, sa), newAuthority(t, sb)
	st, err := a.Get(ctx, "d", "x")
	if err != nil {
		t.Fatal(err)
	}
	if st.Users != 1 {
		t.Fatalf("%d users, want 1", st.Users)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	sub, err := a.Subscribe(wctx, "d", "x", st.Version, st.CommentVersion)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	answer := make(chan collab.Events, 1)
	go func() {
		ev, err := sub.Next(wctx)
		if err != nil {
			t.Errorf("Next: %v", err)
		}
		answer <- ev
	}()
	if _, err := b.Get(ctx, "d", "y"); err != nil {
		t.Fatal(err)
	}
	if ev := <-answer; ev.Users != 2 {
		t.Errorf("the waiting subscription answered %d users, want 2", ev.Users)
	}
}

// TestBroadcastAfterReconnect terminates the listener's connection: the
// broadcasts sent after it reconnected are heard.
func TestBroadcastAfterReconnect(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	a, b := open(t, url), open(t, url)
	defer a.Close()
	defer b.Close()
	notices := subscribe(t, b)
	next(t, notices, "after LISTEN", is(store.Notice{}))
	casts := subscribeCasts(t, b, "t")
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
	next(t, notices, "after the reconnect", is(store.Notice{}))
	if err := a.Broadcast("t", []byte("after")); err != nil {
		t.Fatal(err)
	}
	if got := nextCast(t, casts); got != (cast{a.Node(), "after"}) {
		t.Errorf("heard %v", got)
	}
}

// BenchmarkAppendBroadcasting is BenchmarkAppendParallel with and
// without two other Stores (nodes) broadcasting all along, as fast as
// their 20 ms pause lets them (a message every millisecond, about the
// size of a presence entry: 20 a payload, 50 payloads a second each),
// for the cost of the lock that their NOTIFYs take at commit beside the
// appends' own notices. Compare the two in one run (-bench
// AppendBroadcasting -count 5, benchstat).
func BenchmarkAppendBroadcasting(b *testing.B) {
	for _, casting := range []bool{false, true} {
		name := "quiet"
		if casting {
			name = "broadcasting"
		}
		b.Run(name, func(b *testing.B) {
			url := pgtest.URL(b)
			s := open(b, url)
			defer s.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if casting {
				msg := []byte(`{"doc":"d","version":12,"clients":[{"clientID":1234567,"name":"editor 1","color":"#a0b1c2","anchor":17,"head":23}],"left":[]}`)
				for range 2 {
					other := open(b, url)
					defer other.Close()
					go func() {
						t := time.NewTicker(time.Millisecond)
						defer t.Stop()
						for {
							select {
							case <-ctx.Done():
								return
							case <-t.C:
								other.Broadcast("presence", msg)
							}
						}
					}()
				}
			}
			var next atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				id := fmt.Sprint("doc", next.Add(1))
				if err := s.Create(ctx, id, "basic", []byte(`{}`), nil); err != nil {
					b.Error(err)
					return
				}
				step := []store.Step{{JSON: []byte(`{"stepType":"replace","from":1,"to":1}`), ClientID: []byte(`1`)}}
				for v := int64(0); pb.Next(); v++ {
					if err := s.Append(ctx, id, v, step, nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
