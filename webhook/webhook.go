package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/model"
)

// The headers of a delivery.
const (
	// SignatureHeader carries "sha256=" and the hex HMAC-SHA256 of the
	// body with Config.Secret as the key.
	SignatureHeader = "X-Pmauthority-Signature"
	// DeliveryHeader carries the delivery id: the same for every attempt
	// at one document version, so that a receiver can drop a notice it
	// already handled.
	DeliveryHeader = "X-Pmauthority-Delivery"
)

// The headers of Standard Webhooks (standardwebhooks.com), which every
// delivery carries too, for receivers that check them with a library
// of that standard.
const (
	// IDHeader carries the delivery id, as DeliveryHeader does.
	IDHeader = "webhook-id"
	// TimestampHeader carries the time of the attempt, in seconds since
	// the Unix epoch.
	TimestampHeader = "webhook-timestamp"
	// StandardSignatureHeader carries "v1," and the base64 HMAC-SHA256,
	// keyed with Config.Secret, of the id, ".", the timestamp, "." and
	// the body (SignStandard).
	StandardSignatureHeader = "webhook-signature"
	// StandardTolerance is how far from the receiver's clock
	// VerifyStandard accepts a timestamp, against replays.
	StandardTolerance = 5 * time.Minute
)

// The defaults of Config.
const (
	DefaultDebounce   = 2 * time.Second
	DefaultMaxDelay   = 10 * time.Second
	DefaultTimeout    = 10 * time.Second
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = time.Minute
	DefaultMaxPending = 10_000
	DefaultWorkers    = 4
)

// Config configures a Sender.
type Config struct {
	// URL is where notices are POSTed (http or https).
	URL string
	// Secret is the HMAC-SHA256 key of the signatures (required).
	Secret []byte
	// Debounce is how long a document must go without changes before its
	// notice is sent (0 means DefaultDebounce).
	Debounce time.Duration
	// MaxDelay bounds the wait of a document that keeps changing: its
	// notice is sent at most this long after its first unsent change (0
	// means DefaultMaxDelay).
	MaxDelay time.Duration
	// Timeout bounds one delivery attempt (0 means DefaultTimeout).
	Timeout time.Duration
	// MinBackoff is the wait after a first failed attempt, doubled after
	// each further failure up to MaxBackoff (0: the defaults). Each wait
	// is jittered by up to a quarter.
	MinBackoff, MaxBackoff time.Duration
	// MaxPending bounds the documents with a notice waiting or being
	// delivered (0 means DefaultMaxPending); a change to another document
	// beyond it is dropped, logged and counted (Stats.Dropped).
	MaxPending int
	// Workers bounds the deliveries at once (0 means DefaultWorkers).
	Workers int
	// Document, when set, gives the document's JSON and its version for
	// the notice's "document" field (the version replaces the notice's
	// when it is later). An error leaves the field out of that notice.
	Document func(ctx context.Context, id string) (version int64, doc []byte, err error)
	// Client sends the requests (nil: a client of its own, which follows
	// no redirects: a 3xx is a failed attempt).
	Client *http.Client
	// Logger gets failed deliveries and drops (nil means slog.Default()).
	Logger *slog.Logger
}

// Stats are a Sender's counts since it was created.
type Stats struct {
	// Delivered counts notices answered 2xx; Failed counts attempts that
	// failed (each retried).
	Delivered, Failed int64
	// Dropped counts changes dropped for Config.MaxPending.
	Dropped int64
	// Pending is the number of documents with a notice waiting or being
	// delivered.
	Pending int
}

// Sender delivers the notices of document changes. Its methods are safe
// for concurrent use.
type Sender struct {
	cfg    Config
	client *http.Client
	log    *slog.Logger
	work   chan *entry
	wg     sync.WaitGroup // the workers
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	docs    map[string]*entry
	closed  bool
	flushed chan struct{} // closed when docs empties after Close began

	delivered, failed, dropped atomic.Int64
}

// entry is one document with a notice waiting or being delivered.
type entry struct {
	id string
	// Guarded by Sender.mu.
	version     int64
	updated     time.Time
	unsent      bool      // version has not been delivered
	first       time.Time // of the first unsent change
	sending     bool      // queued for a worker, or being delivered
	failures    int       // consecutive failed attempts
	backingOff  bool      // the timer is a retry's
	timer       *time.Timer
	lastVersion int64 // the version last delivered
}

// New returns a Sender for cfg, with its workers running. Close stops it.
func New(cfg Config) (*Sender, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("webhook: URL %q: want an http or https URL", cfg.URL)
	}
	if len(cfg.Secret) == 0 {
		return nil, errors.New("webhook: a secret is required")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Debounce, DefaultDebounce)
	def(&cfg.MaxDelay, DefaultMaxDelay)
	def(&cfg.Timeout, DefaultTimeout)
	def(&cfg.MinBackoff, DefaultMinBackoff)
	def(&cfg.MaxBackoff, DefaultMaxBackoff)
	cfg.MaxBackoff = max(cfg.MaxBackoff, cfg.MinBackoff)
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	s := &Sender{cfg: cfg, client: cfg.Client, log: cfg.Logger, docs: map[string]*entry{},
		work: make(chan *entry, cfg.MaxPending)}
	if s.client == nil {
		s.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for range cfg.Workers {
		s.wg.Add(1)
		go s.worker()
	}
	return s, nil
}

// AfterCommit records a commit's change: it is a collab.Config.AfterCommit
// hook. Commits of comment events alone (no new version) send nothing.
func (s *Sender) AfterCommit(_ context.Context, c collab.Commit) error {
	if c.To > c.From {
		s.Changed(c.ID, c.To, c.Time)
	}
	return nil
}

// Changed records that document id is at version since updated. It never
// blocks on a delivery.
func (s *Sender) Changed(id string, version int64, updated time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	e := s.docs[id]
	if e == nil {
		if len(s.docs) >= s.cfg.MaxPending {
			n := s.dropped.Add(1)
			s.log.Warn("webhook: too many documents pending, change dropped", "doc", id, "version", version, "max_pending", s.cfg.MaxPending, "dropped", n)
			return
		}
		e = &entry{id: id}
		s.docs[id] = e
	}
	if version <= e.version || version <= e.lastVersion {
		return // an older commit seen late
	}
	e.version, e.updated = version, updated
	now := time.Now()
	if !e.unsent {
		e.unsent, e.first = true, now
	}
	if !e.sending && !e.backingOff {
		s.scheduleLocked(e, now)
	}
}

// scheduleLocked arms e's timer for its debounced notice.
func (s *Sender) scheduleLocked(e *entry, now time.Time) {
	wait := min(s.cfg.Debounce, e.first.Add(s.cfg.MaxDelay).Sub(now))
	s.armLocked(e, wait)
}

// armLocked makes e due after wait.
func (s *Sender) armLocked(e *entry, wait time.Duration) {
	if e.timer == nil {
		e.timer = time.AfterFunc(max(wait, 0), func() { s.due(e) })
		return
	}
	e.timer.Reset(max(wait, 0))
}

// due hands e to a worker.
func (s *Sender) due(e *entry) {
	s.mu.Lock()
	if e.sending || !e.unsent || s.docs[e.id] != e {
		s.mu.Unlock()
		return
	}
	e.sending, e.backingOff = true, false
	s.mu.Unlock()
	s.work <- e // never full: it has room for every pending document
}

// worker delivers the notices of the entries it is handed.
func (s *Sender) worker() {
	defer s.wg.Done()
	for {
		select {
		case e := <-s.work:
			s.deliver(e)
		case <-s.ctx.Done():
			return
		}
	}
}

// deliver makes one attempt at e's notice and schedules what follows.
func (s *Sender) deliver(e *entry) {
	s.mu.Lock()
	version, updated := e.version, e.updated
	e.unsent = false
	s.mu.Unlock()

	body, version := s.notice(e.id, version, updated)
	err := s.post(e.id, version, body)

	s.mu.Lock()
	defer s.mu.Unlock()
	e.sending = false
	now := time.Now()
	if err != nil {
		n := s.failed.Add(1)
		e.failures++
		if e.version <= version {
			e.version = version
		}
		if !e.unsent {
			e.unsent, e.first = true, now
		}
		wait := s.backoff(e.failures)
		s.log.Warn("webhook: delivery failed, will retry", "doc", e.id, "version", version, "attempt", e.failures, "retry_in", wait, "err", err, "failed", n)
		if s.closed {
			s.doneLocked(e)
			return
		}
		e.backingOff = true
		s.armLocked(e, wait)
		return
	}
	s.delivered.Add(1)
	e.failures = 0
	e.lastVersion = max(e.lastVersion, version)
	if e.version <= e.lastVersion {
		e.unsent = false
	}
	if e.unsent && !s.closed {
		s.scheduleLocked(e, now)
		return
	}
	if e.unsent && s.closed {
		e.sending = true
		s.work <- e // flushing: at once
		return
	}
	s.doneLocked(e)
}

// doneLocked forgets e, whose notice is delivered (or given up at Close).
func (s *Sender) doneLocked(e *entry) {
	if e.timer != nil {
		e.timer.Stop()
	}
	delete(s.docs, e.id)
	if s.closed && len(s.docs) == 0 && s.flushed != nil {
		close(s.flushed)
		s.flushed = nil
	}
}

// backoff returns the wait after the given number of consecutive failed
// attempts, jittered.
func (s *Sender) backoff(failures int) time.Duration {
	d := s.cfg.MinBackoff
	for i := 1; i < failures && d < s.cfg.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, s.cfg.MaxBackoff)
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}

// notice returns the body of the notice for document id at version (or
// the later version of its document, with Config.Document).
func (s *Sender) notice(id string, version int64, updated time.Time) ([]byte, int64) {
	var doc []byte
	if s.cfg.Document != nil {
		ctx, cancel := context.WithTimeout(s.ctx, s.cfg.Timeout)
		v, d, err := s.cfg.Document(ctx, id)
		cancel()
		if err != nil {
			s.log.Warn("webhook: document unavailable, notice sent without it", "doc", id, "version", version, "err", err)
		} else if v >= version {
			version, doc = v, d
		}
	}
	b := []byte(`{"doc":`)
	b = model.AppendJSONString(b, id)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, version, 10)
	b = append(b, `,"updated":"`...)
	b = updated.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if doc != nil {
		b = append(b, `,"document":`...)
		b = append(b, doc...)
	}
	return append(b, '}'), version
}

// post sends one notice.
func (s *Sender) post(id string, version int64, body []byte) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "pmauthority-webhook")
	req.Header.Set(SignatureHeader, Sign(s.cfg.Secret, body))
	delivery := DeliveryID(id, version)
	req.Header.Set(DeliveryHeader, delivery)
	ts := time.Now().Unix()
	// Set would canonicalize the names; Standard Webhooks writes them in
	// lower case (HTTP/1.1 header names are case-insensitive).
	req.Header[IDHeader] = []string{delivery}
	req.Header[TimestampHeader] = []string{strconv.FormatInt(ts, 10)}
	req.Header[StandardSignatureHeader] = []string{SignStandard(s.cfg.Secret, delivery, ts, body)}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("answered %s", resp.Status)
	}
	return nil
}

// Sign returns the SignatureHeader value of body: "sha256=" and the hex
// HMAC-SHA256 of body keyed with secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature (a SignatureHeader value) is body's
// signature with secret, comparing in constant time.
func Verify(secret, body []byte, signature string) bool {
	got, ok := strings.CutPrefix(signature, "sha256=")
	if !ok {
		return false
	}
	mac, err := hex.DecodeString(got)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hmac.Equal(mac, m.Sum(nil))
}

// SignStandard returns the StandardSignatureHeader value of a delivery:
// "v1," and the base64 HMAC-SHA256 of id, ".", timestamp (seconds since
// the Unix epoch, in decimal), "." and body, keyed with secret.
func SignStandard(secret []byte, id string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, secret)
	io.WriteString(m, id)
	m.Write([]byte{'.'})
	io.WriteString(m, strconv.FormatInt(timestamp, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// VerifyStandard checks the Standard Webhooks headers of a delivery of
// body received at now: a signature of StandardSignatureHeader (which
// may list several, space-separated) must be SignStandard's with secret,
// compared in constant time, and the timestamp within
// StandardTolerance of now.
func VerifyStandard(secret []byte, header http.Header, body []byte, now time.Time) error {
	id, tsText := header.Get(IDHeader), header.Get(TimestampHeader)
	if id == "" || tsText == "" {
		return fmt.Errorf("webhook: no %s or %s header", IDHeader, TimestampHeader)
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook: %s %q is not a number of seconds", TimestampHeader, tsText)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > StandardTolerance || d < -StandardTolerance {
		return fmt.Errorf("webhook: %s %d is %v from now, beyond %v", TimestampHeader, ts, d.Round(time.Second), StandardTolerance)
	}
	want := SignStandard(secret, id, ts, body)
	for sig := range strings.FieldsSeq(header.Get(StandardSignatureHeader)) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return fmt.Errorf("webhook: no valid v1 signature in %s", StandardSignatureHeader)
}

// DeliveryID returns the delivery id of document id's notice at version:
// the first 32 hex digits of SHA-256 of the id, a zero byte and the
// decimal version. Every attempt at it, by any Sender, carries it.
func DeliveryID(id string, version int64) string {
	h := sha256.New()
	io.WriteString(h, id)
	h.Write([]byte{0})
	io.WriteString(h, strconv.FormatInt(version, 10))
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Stats returns the Sender's counts.
func (s *Sender) Stats() Stats {
	s.mu.Lock()
	n := len(s.docs)
	s.mu.Unlock()
	return Stats{Delivered: s.delivered.Load(), Failed: s.failed.Load(), Dropped: s.dropped.Load(), Pending: n}
}

// Close stops taking changes and delivers the notices still pending at
// once, each attempted once more (a failure is given up), until they are
// done or ctx is done; then it stops the workers. It returns ctx's error
// when notices were left undelivered.
func (s *Sender) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var flushed chan struct{}
	if len(s.docs) > 0 {
		flushed = make(chan struct{})
		s.flushed = flushed
	}
	for _, e := range s.docs {
		if e.timer != nil {
			e.timer.Stop()
		}
		e.backingOff = false
		if !e.sending {
			if e.unsent {
				e.sending = true
				s.work <- e
			} else {
				s.doneLocked(e)
			}
		}
	}
	s.mu.Unlock()
	var err error
	if flushed != nil {
		select {
		case <-flushed:
		case <-ctx.Done():
			err = fmt.Errorf("webhook: %d notices undelivered at close: %w", s.Stats().Pending, ctx.Err())
		}
	}
	s.cancel()
	s.wg.Wait()
	return err
}
