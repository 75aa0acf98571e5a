package apply

import "github.com/pmauthority/pmauthority/internal/defaults"

// The default document limits (DESIGN.md, "Limits").
const (
	DefaultMaxSteps    = 1000
	DefaultMaxDocSize  = 10_000_000
	DefaultMaxDocBytes = 4 << 20
)

// Limits bound what the steps of one request may do to a document: the
// document limits of the apply request, and of every submission to an
// authority (collab.Limits holds them). Each answers with a clear error
// and changes nothing.
type Limits struct {
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
}

// DefaultLimits returns the default limits.
func DefaultLimits() Limits {
	return Limits{MaxSteps: DefaultMaxSteps, MaxDocSize: DefaultMaxDocSize, MaxDocBytes: DefaultMaxDocBytes}
}

// WithDefaults returns l with its zero (or negative) fields set to the
// defaults.
func (l Limits) WithDefaults() Limits {
	defaults.Fill(&l, DefaultLimits())
	return l
}
