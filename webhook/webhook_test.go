package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/store/memstore"
)

var secret = []byte("a test secret of some length")

// notice is a delivery as the receiver got it.
type notice struct {
	Doc      string          `json:"doc"`
	Version  int64           `json:"version"`
	Updated  time.Time       `json:"updated"`
	Document json.RawMessage `json:"document"`

	delivery string
}

// receiver is a webhook endpoint that checks signatures and records
// notices; answer, when set, decides each request's status (before the
// notice is recorded, which only a 2xx is).
type receiver struct {
	t      *testing.T
	mu     sync.Mutex
	got    []notice
	bad    int // requests with a bad signature or body
	calls  int
	answer func(call int) int
	latest map[string]int64
	done   map[string]chan struct{} // closed when a document's notice reaches a version
	want   map[string]int64
}

func newReceiver(t *testing.T) *receiver {
	return &receiver{t: t, latest: map[string]int64{}, done: map[string]chan struct{}{}, want: map[string]int64{}}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.calls++
	call := rc.calls
	answer := rc.answer
	rc.mu.Unlock()
	if answer != nil {
		if status := answer(call); status < 200 || status > 299 {
			w.WriteHeader(status)
			return
		}
	}
	var n notice
	ok := err == nil && r.Method == "POST" && r.Header.Get("Content-Type") == "application/json" &&
		Verify(secret, body, r.Header.Get(SignatureHeader)) && VerifyStandard(secret, r.Header, body, time.Now()) == nil &&
		r.Header.Get(IDHeader) == r.Header.Get(DeliveryHeader) && json.Unmarshal(body, &n) == nil
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !ok {
		rc.bad++
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	n.delivery = r.Header.Get(DeliveryHeader)
	rc.got = append(rc.got, n)
	if n.Version > rc.latest[n.Doc] {
		rc.latest[n.Doc] = n.Version
	}
	if c, ok := rc.done[n.Doc]; ok && rc.latest[n.Doc] >= rc.want[n.Doc] {
		close(c)
		delete(rc.done, n.Doc)
	}
}

// reached returns a channel closed once doc's notices reach version.
func (rc *receiver) reached(doc string, version int64) <-chan struct{} {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	c := make(chan struct{})
	if rc.latest[doc] >= version {
		close(c)
		return c
	}
	rc.done[doc], rc.want[doc] = c, version
	return c
}

// wait waits until doc's notices reach version, failing the test after
// a generous bound.
func (rc *receiver) wait(doc string, version int64) {
	rc.t.Helper()
	select {
	case <-rc.reached(doc, version):
	case <-time.After(30 * time.Second):
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.t.Fatalf("%s: the notices reached version %d, want %d (%d calls)", doc, rc.latest[doc], version, rc.calls)
	}
}

// check checks what every run must show: signatures all good, each
// document's notices in increasing versions with the delivery id of
// their version.
func (rc *receiver) check() {
	rc.t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.bad > 0 {
		rc.t.Errorf("%d notices with a bad signature or body", rc.bad)
	}
	last := map[string]int64{}
	for _, n := range rc.got {
		if n.Version < last[n.Doc] {
			rc.t.Errorf("%s: version %d delivered after %d", n.Doc, n.Version, last[n.Doc])
		}
		last[n.Doc] = n.Version
		if n.delivery != DeliveryID(n.Doc, n.Version) {
			rc.t.Errorf("%s at %d: delivery id %q, want %q", n.Doc, n.Version, n.delivery, DeliveryID(n.Doc, n.Version))
		}
		if n.Updated.IsZero() {
			rc.t.Errorf("%s at %d: no updated time", n.Doc, n.Version)
		}
	}
}

// editor is an authority whose commits go to a Sender.
type editor struct {
	t    *testing.T
	a    *collab.Authority
	s    *Sender
	vers map[string]int64
}

func newEditor(t *testing.T, cfg Config) *editor {
	t.Helper()
	if cfg.Secret == nil {
		cfg.Secret = secret
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := collab.New(collab.Config{
		Store: memstore.New(),
		Schemas: func(name string) (*model.Schema, bool) {
			sc, err := schemas.Get(name)
			return sc, err == nil
		},
		DefaultSchema: "basic",
		AutoCreate:    true,
		AfterCommit:   s.AfterCommit,
		Logger:        slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s.Close(ctx)
	})
	return &editor{t: t, a: a, s: s, vers: map[string]int64{}}
}

// edit submits n steps to doc, one at a time, and returns how many were
// accepted.
func (e *editor) edit(doc string, n int) int {
	e.t.Helper()
	accepted := 0
	for range n {
		step := `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"x"}]}}`
		res, err := e.a.Submit(context.Background(), doc, "", collab.Submission{
			Version: e.vers[doc], Steps: [][]byte{[]byte(step)}, ClientID: collab.ClientID("1")})
		if err != nil {
			e.t.Fatalf("submit to %s at %d: %v", doc, e.vers[doc], err)
		}
		e.vers[doc] = res.Version
		accepted++
	}
	return accepted
}

func fast(url string) Config {
	return Config{URL: url, Secret: secret, Debounce: 5 * time.Millisecond, MaxDelay: 50 * time.Millisecond,
		MinBackoff: 5 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, Timeout: 5 * time.Second}
}

// TestDeliver: changes to several documents reach the receiver, signed,
// coalesced (fewer notices than commits), the last at the final version.
func TestDeliver(t *testing.T) {
	rc := newReceiver(t)
	ts := httptest.NewServer(rc)
	defer ts.Close()
	e := newEditor(t, fast(ts.URL))
	docs := []string{"a", "b", "c"}
	for range 5 {
		for _, d := range docs {
			e.edit(d, 20)
		}
	}
	for _, d := range docs {
		rc.wait(d, 100)
	}
	rc.check()
	for e.s.Stats().Pending > 0 {
		time.Sleep(5 * time.Millisecond)
	}
	rc.mu.Lock()
	n := len(rc.got)
	rc.mu.Unlock()
	if n >= 300 {
		t.Errorf("%d notices for 300 commits: not coalesced", n)
	}
	st := e.s.Stats()
	if st.Delivered != int64(n) || st.Dropped != 0 {
		t.Errorf("stats %+v, want %d delivered, none dropped", st, n)
	}
}

// TestSlowReceiver: while the receiver holds its first request, editing
// goes on: every submission is accepted, and no commit is dropped from
// the authority's AfterCommit queue, which a hook that waited for the
// receiver would overflow (more commits than DefaultAfterCommitQueue).
// Once the receiver answers, the final versions arrive.
func TestSlowReceiver(t *testing.T) {
	rc := newReceiver(t)
	release := make(chan struct{})
	held := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() {
			close(held)
			<-release
		})
		rc.ServeHTTP(w, r)
	}))
	defer ts.Close()
	defer once.Do(func() {})
	e := newEditor(t, fast(ts.URL))
	e.edit("d", 1)
	<-held
	if got := e.edit("d", 1500) + e.edit("other", 200); got != 1700 {
		t.Fatalf("%d submissions accepted while the receiver hung, want 1700", got)
	}
	if n := e.a.DroppedCommits(); n != 0 {
		t.Fatalf("%d commits dropped on the way to the webhook", n)
	}
	close(release)
	rc.wait("d", 1501)
	rc.wait("other", 200)
	rc.check()
}

// TestReceiverDown: a receiver that refuses connections for a while, then
// comes up on the same address, gets the final versions.
func TestReceiverDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // connection refused from now on
	e := newEditor(t, fast("http://"+addr))
	if got := e.edit("d", 100) + e.edit("e", 100); got != 200 {
		t.Fatalf("%d submissions accepted with the receiver down, want 200", got)
	}
	for e.s.Stats().Failed < 3 {
		time.Sleep(5 * time.Millisecond)
	}
	e.edit("d", 50)
	rc := newReceiver(t)
	if ln, err = net.Listen("tcp", addr); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rc}
	go srv.Serve(ln)
	defer srv.Close()
	rc.wait("d", 150)
	rc.wait("e", 100)
	rc.check()
	if st := e.s.Stats(); st.Failed < 3 || st.Dropped != 0 {
		t.Errorf("stats %+v: want failures counted, none dropped", st)
	}
}

// TestReceiverErrors: a receiver answering 500 to its first 10 requests
// gets every document's final version; retries of one version carry one
// delivery id.
func TestReceiverErrors(t *testing.T) {
	rc := newReceiver(t)
	var mu sync.Mutex
	ids := map[string]int{}
	rc.answer = func(call int) int {
		if call <= 10 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ids[r.Header.Get(DeliveryHeader)]++
		mu.Unlock()
		rc.ServeHTTP(w, r)
	}))
	defer ts.Close()
	e := newEditor(t, fast(ts.URL))
	e.edit("d", 1)
	for e.s.Stats().Failed < 3 {
		time.Sleep(5 * time.Millisecond)
	}
	// Retried at version 1 so far, under one delivery id.
	mu.Lock()
	if n := ids[DeliveryID("d", 1)]; n < 3 {
		t.Errorf("version 1 attempted %d times under its id, want the 3 failures", n)
	}
	mu.Unlock()
	for range 10 {
		e.edit("d", 10)
		e.edit("f", 10)
	}
	rc.wait("d", 101)
	rc.wait("f", 100)
	rc.check()
	if st := e.s.Stats(); st.Failed < 10 {
		t.Errorf("stats %+v: want the 10 failures counted", st)
	}
}

// TestMaxPending: with the receiver hung, changes to more documents than
// MaxPending are dropped and counted, never blocking, and the documents
// kept are delivered.
func TestMaxPending(t *testing.T) {
	rc := newReceiver(t)
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		rc.ServeHTTP(w, r)
	}))
	defer ts.Close()
	cfg := fast(ts.URL)
	cfg.MaxPending = 3
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.log = slog.New(slog.DiscardHandler)
	now := time.Now()
	for i := range 10 {
		s.Changed("doc"+strconv.Itoa(i), 1, now)
	}
	s.Changed("doc0", 2, now) // a kept document takes further changes
	st := s.Stats()
	if st.Dropped != 7 || st.Pending != 3 {
		t.Fatalf("stats %+v, want 7 dropped, 3 pending", st)
	}
	close(release)
	for _, d := range []string{"doc0", "doc1", "doc2"} {
		want := int64(1)
		if d == "doc0" {
			want = 2
		}
		rc.wait(d, want)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rc.check()
}

// TestIncludeDoc: with Config.Document the notice carries the document
// and its version.
func TestIncludeDoc(t *testing.T) {
	rc := newReceiver(t)
	ts := httptest.NewServer(rc)
	defer ts.Close()
	cfg := fast(ts.URL)
	var e *editor
	cfg.Document = func(ctx context.Context, id string) (int64, []byte, error) {
		st, err := e.a.Get(ctx, id, "")
		return st.Version, st.DocJSON, err
	}
	e = newEditor(t, cfg)
	e.edit("d", 3)
	rc.wait("d", 3)
	rc.mu.Lock()
	last := rc.got[len(rc.got)-1]
	rc.mu.Unlock()
	want := `{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"xxx"}]}]}`
	if string(last.Document) != want {
		t.Fatalf("document %s, want %s", last.Document, want)
	}
	rc.check()
}

// TestClose: Close delivers what is pending at once, without waiting for
// the debounce.
func TestClose(t *testing.T) {
	rc := newReceiver(t)
	ts := httptest.NewServer(rc)
	defer ts.Close()
	cfg := fast(ts.URL)
	cfg.Debounce, cfg.MaxDelay = time.Hour, time.Hour
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Changed("d", 7, time.Now())
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rc.wait("d", 7)
	rc.check()
	s.Changed("d", 8, time.Now()) // after Close: ignored
	if st := s.Stats(); st.Pending != 0 || st.Delivered != 1 {
		t.Fatalf("stats %+v after Close", st)
	}
}

func TestVerify(t *testing.T) {
	body := []byte(`{"doc":"d","version":1,"updated":"2026-01-01T00:00:00Z"}`)
	sig := Sign(secret, body)
	for _, tc := range []struct {
		secret []byte
		body   string
		sig    string
		want   bool
	}{
		{secret, string(body), sig, true},
		{[]byte("another secret"), string(body), sig, false},
		{secret, string(body) + " ", sig, false},
		{secret, string(body), sig[len("sha256="):], false},
		{secret, string(body), "sha256=zz", false},
		{secret, string(body), "", false},
	} {
		if got := Verify(tc.secret, []byte(tc.body), tc.sig); got != tc.want {
			t.Errorf("Verify(%q, %q, %q) = %v, want %v", tc.secret, tc.body, tc.sig, got, tc.want)
		}
	}
	if _, err := New(Config{URL: "ftp://x", Secret: secret}); err == nil {
		t.Error("New took an ftp URL")
	}
	if _, err := New(Config{URL: "http://127.0.0.1:1/"}); err == nil {
		t.Error("New took no secret")
	}
}

// TestMaxDelay: a document that keeps changing, never quiet for the
// debounce, still gets its notices, MaxDelay after its first unsent
// change.
func TestMaxDelay(t *testing.T) {
	rc := newReceiver(t)
	ts := httptest.NewServer(rc)
	defer ts.Close()
	cfg := fast(ts.URL)
	cfg.Debounce, cfg.MaxDelay = time.Hour, 10*time.Millisecond
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	got := rc.reached("d", 1)
	deadline := time.After(30 * time.Second)
	for v := int64(1); ; v++ {
		s.Changed("d", v, time.Now())
		select {
		case <-got:
			rc.check()
			return
		case <-deadline:
			t.Fatalf("no notice after %d changes within the debounce", v)
		case <-time.After(time.Millisecond):
		}
	}
}

// TestStandardSignature: a delivery's Standard Webhooks headers are what
// the standard says, the signature computed here from its definition:
// "v1," and the base64 HMAC-SHA256 of "id.timestamp.body" keyed with the
// secret; VerifyStandard takes them and refuses changed ones.
func TestStandardSignature(t *testing.T) {
	type delivery struct {
		header http.Header
		body   []byte
		at     time.Time
	}
	got := make(chan delivery, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case got <- delivery{r.Header, body, time.Now()}:
		default:
		}
	}))
	defer ts.Close()
	s, err := New(fast(ts.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	before := time.Now().Unix()
	s.Changed("d", 3, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	var d delivery
	select {
	case d = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery")
	}
	id, tsText, sig := d.header.Get("webhook-id"), d.header.Get("webhook-timestamp"), d.header.Get("webhook-signature")
	if id != DeliveryID("d", 3) || id != d.header.Get(DeliveryHeader) {
		t.Errorf("webhook-id %q, want the delivery id %q", id, DeliveryID("d", 3))
	}
	stamp, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil || stamp < before || stamp > d.at.Unix() {
		t.Errorf("webhook-timestamp %q, want the seconds of the attempt (%d to %d)", tsText, before, d.at.Unix())
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(id + "." + tsText + "." + string(d.body)))
	if want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil)); sig != want {
		t.Errorf("webhook-signature %q, want %q", sig, want)
	}
	if err := VerifyStandard(secret, d.header, d.body, d.at); err != nil {
		t.Errorf("VerifyStandard: %v", err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(h http.Header)
		body  string
		at    time.Time
		error string
	}{
		{"another body", nil, string(d.body) + " ", d.at, "no valid v1 signature"},
		{"another id", func(h http.Header) { h.Set(IDHeader, "x") }, string(d.body), d.at, "no valid v1 signature"},
		{"another timestamp", func(h http.Header) { h.Set(TimestampHeader, strconv.FormatInt(stamp+1, 10)) }, string(d.body), d.at, "no valid v1 signature"},
		{"stale", nil, string(d.body), d.at.Add(StandardTolerance + time.Minute), "beyond 5m0s"},
		{"several, one good", func(h http.Header) { h.Set(StandardSignatureHeader, "v1,bad "+sig) }, string(d.body), d.at, ""},
		{"no timestamp", func(h http.Header) { h.Del(TimestampHeader) }, string(d.body), d.at, "no webhook-id or webhook-timestamp"},
		{"another secret", nil, string(d.body), d.at, "no valid v1 signature"},
	} {
		h := d.header.Clone()
		if tc.edit != nil {
			tc.edit(h)
		}
		key := secret
		if tc.name == "another secret" {
			key = []byte("another secret")
		}
		err := VerifyStandard(key, h, []byte(tc.body), tc.at)
		if (tc.error == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.error)) {
			t.Errorf("%s: VerifyStandard: %v, want %q", tc.name, err, tc.error)
		}
	}
}

// TestStandardWebhooksNode: the npm standardwebhooks package (pinned in
// testdata/standardwebhooks) verifies a delivery's headers, and refuses
// them for another body. It needs node and that folder's npm ci, which
// scripts/test runs; without them it is skipped, unless CI=true.
func TestStandardWebhooksNode(t *testing.T) {
	dir := filepath.Join("testdata", "standardwebhooks")
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks")); err != nil || serr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node (%v) or %s/node_modules (%v) missing, and CI=true", err, dir, serr)
		}
		t.Skipf("node (%v) or %s/node_modules (%v) missing: npm ci there", err, dir, serr)
	}
	got := make(chan http.Header, 1)
	var body []byte
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		got <- r.Header
	}))
	defer ts.Close()
	s, err := New(fast(ts.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	s.Changed("notes", 7, time.Now())
	var h http.Header
	select {
	case h = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery")
	}
	headers := map[string]string{}
	for _, k := range []string{IDHeader, TimestampHeader, StandardSignatureHeader} {
		headers[k] = h.Get(k)
	}
	type delivery struct {
		Secret  string            `json:"secret"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	key := base64.StdEncoding.EncodeToString(secret)
	in, _ := json.Marshal([]delivery{{key, headers, string(body)}, {key, headers, string(body) + " "}})
	cmd := exec.Command(node, "verify.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node verify.mjs: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] != "ok" || lines[1] == "ok" {
		t.Errorf("standardwebhooks verify: %q, want ok for the delivery and an error for another body", lines)
	}
}
