package apply

import "github.com/pmauthority/pmauthority/internal/jsonscan"

// The default limits (DESIGN.md, "Limits").
const (
	DefaultMaxBodyBytes   = 8 << 20
	DefaultMaxSteps       = 1000
	DefaultMaxDocSize     = 10_000_000
	DefaultMaxDocBytes    = 4 << 20
	DefaultMaxDepth       = jsonscan.DefaultMaxDepth
	DefaultMaxHeaderBytes = 64 << 10
	DefaultMaxConns       = 10_000
	DefaultMaxClientConns = 256
	DefaultMaxWSMessages  = 200
	DefaultMaxPresence    = 20
	DefaultMaxSubmissions = 500
)

// DefaultMaxPresenceData is the default Limits.MaxPresenceData, and
// MaxPresenceDataLimit its largest value: a presence entry must fit in
// one message between nodes (store.MaxBroadcast).
const (
	DefaultMaxPresenceData = 512
	MaxPresenceDataLimit   = 4096
)

// Limits bound the work one request may ask for. Every limit answers with
// a clear error and changes nothing.
type Limits struct {
	// MaxBodyBytes is the largest request body, in bytes.
	MaxBodyBytes int64
	// MaxSteps is the most steps a request may carry.
	MaxSteps int
	// MaxDocSize is the largest document content size (in positions,
	// doc.content.size) accepted, checked for the given document and
	// after every step: a step may duplicate content (a replace with
	// from > to), so that a few steps could otherwise grow a document
	// exponentially.
	MaxDocSize int
	// MaxDocBytes is the largest document accepted, in bytes of its JSON
	// (Node.JSONSize), checked like MaxDocSize for the given document
	// and after every step. It bounds what a document costs in memory
	// and in the store, which the content size does not: a position may
	// stand for a node with many attributes, or for several bytes of
	// text.
	MaxDocBytes int64
	// MaxDepth is the deepest nesting of arrays and objects in a request.
	// Steps are decoded with jsonscan's own limit (DefaultMaxDepth) as
	// well, so a larger MaxDepth does not let deeper steps through.
	MaxDepth int
	// MaxHeaderBytes is the largest request header, in bytes.
	MaxHeaderBytes int

	// The server's connection and rate limits (the apply request does
	// not use them). A client is the principal when the policy
	// authenticated one, else the client's address.

	// MaxConns is the most WebSocket connections and waiting long polls
	// the server holds at once, from all clients.
	MaxConns int
	// MaxClientConns is the most of them one client holds at once.
	MaxClientConns int
	// MaxWSMessages is how many messages a WebSocket client may send per
	// second, on average (twice as many in a burst).
	MaxWSMessages int
	// MaxPresence is how many presence messages of a WebSocket are
	// handled per second (as many in a burst); those beyond are
	// coalesced: the latest is handled once the rate allows.
	MaxPresence int
	// MaxPresenceData is the largest "data" of a WebSocket hello, in
	// bytes of its JSON: the client's own presence fields, sent to the
	// others in its presence entries. At most MaxPresenceDataLimit (a
	// larger value counts as that).
	MaxPresenceData int
	// MaxSubmissions is how many submissions (POST /docs/{id}/events,
	// WebSocket steps) one client may make per second, on average (twice
	// as many in a burst).
	MaxSubmissions int
}

// DefaultLimits returns the default limits.
func DefaultLimits() Limits {
	return Limits{
		MaxBodyBytes:   DefaultMaxBodyBytes,
		MaxSteps:       DefaultMaxSteps,
		MaxDocSize:     DefaultMaxDocSize,
		MaxDocBytes:    DefaultMaxDocBytes,
		MaxDepth:       DefaultMaxDepth,
		MaxHeaderBytes: DefaultMaxHeaderBytes,
		MaxConns:       DefaultMaxConns,
		MaxClientConns: DefaultMaxClientConns,
		MaxWSMessages:  DefaultMaxWSMessages,
		MaxPresence:    DefaultMaxPresence,
		MaxSubmissions: DefaultMaxSubmissions,

		MaxPresenceData: DefaultMaxPresenceData,
	}
}

// WithDefaults returns l with its zero (or negative) fields set to the
// defaults.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = d.MaxBodyBytes
	}
	if l.MaxSteps <= 0 {
		l.MaxSteps = d.MaxSteps
	}
	if l.MaxDocSize <= 0 {
		l.MaxDocSize = d.MaxDocSize
	}
	if l.MaxDocBytes <= 0 {
		l.MaxDocBytes = d.MaxDocBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	if l.MaxConns <= 0 {
		l.MaxConns = d.MaxConns
	}
	if l.MaxClientConns <= 0 {
		l.MaxClientConns = d.MaxClientConns
	}
	if l.MaxWSMessages <= 0 {
		l.MaxWSMessages = d.MaxWSMessages
	}
	if l.MaxPresence <= 0 {
		l.MaxPresence = d.MaxPresence
	}
	if l.MaxPresenceData <= 0 {
		l.MaxPresenceData = d.MaxPresenceData
	}
	l.MaxPresenceData = min(l.MaxPresenceData, MaxPresenceDataLimit)
	if l.MaxSubmissions <= 0 {
		l.MaxSubmissions = d.MaxSubmissions
	}
	return l
}
