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
	return l
}
