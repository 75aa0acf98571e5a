package auth

import (
	"errors"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/server"
)

// tokenError is why a token is refused. It wraps
// server.ErrUnauthenticated, which the server answers with 401.
type tokenError string

func (e tokenError) Error() string { return string(e) }

func (e tokenError) Unwrap() error { return server.ErrUnauthenticated }

// The reasons a token is refused; the errors of Verify wrap one of them
// (with details that never include the token), and each wraps
// server.ErrUnauthenticated.
var (
	ErrNoToken       error = tokenError("missing token")
	ErrTokenTooLong  error = tokenError("invalid token: too long")
	ErrMalformed     error = tokenError("invalid token: malformed")
	ErrAlgorithm     error = tokenError("invalid token: signature algorithm not accepted")
	ErrUnknownKey    error = tokenError("invalid token: unknown key")
	ErrBadSignature  error = tokenError("invalid token: bad signature")
	ErrInvalidClaims error = tokenError("invalid token: invalid claims")
	ErrExpired       error = tokenError("invalid token: expired")
	ErrNotYetValid   error = tokenError("invalid token: not yet valid")
	ErrWrongIssuer   error = tokenError("invalid token: wrong issuer")
	ErrWrongAudience error = tokenError("invalid token: wrong audience")
	ErrRefused       error = tokenError("invalid token: refused by the auth webhook")
)

// ErrUnavailable is matched by the errors of a policy that cannot decide
// now: the auth webhook has no call free in time (Config.WebhookMaxCalls),
// or a token names a key that the key set, unreachable, may have. Those
// errors match collab.ErrOverloaded too, which the server answers with
// 503 and Retry-After.
var ErrUnavailable = errors.New("authentication unavailable")

// unavailableError is an error matching ErrUnavailable.
type unavailableError struct{ msg string }

func (e *unavailableError) Error() string { return e.msg }

func (e *unavailableError) Is(target error) bool {
	return target == ErrUnavailable || target == collab.ErrOverloaded
}
