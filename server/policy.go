package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/pmauthority/pmauthority/collab"
)

// Action is what a route or a WebSocket message does, as the policy
// point authorizes it (Policy.Authorize).
type Action string

// The actions.
const (
	// ActionRead reads a document: its state, its events, its WebSocket
	// pushes, presence; with no document, the list of documents.
	ActionRead Action = "read"
	// ActionComment submits comment events without steps.
	ActionComment Action = "comment"
	// ActionSuggest submits steps that only make suggestions, for a
	// principal refused ActionEdit (collab.Submission.SuggestOnly).
	ActionSuggest Action = "suggest"
	// ActionEdit submits steps.
	ActionEdit Action = "edit"
	// ActionCreate creates a document.
	ActionCreate Action = "create"
	// ActionAdmin deletes and manages documents.
	ActionAdmin Action = "admin"
	// ActionApply uses the stateless apply endpoint and its schema list.
	ActionApply Action = "apply"
	// ActionPage loads the demo pages (Config.Web).
	ActionPage Action = "page"
	// ActionHealth asks whether the server is alive (/healthz) or ready
	// for new clients (/readyz).
	ActionHealth Action = "health"
)

// Principal is who a request or a WebSocket connection acts for, as the
// policy authenticated it. The zero value is anonymous.
type Principal struct {
	// ID identifies the principal; it is recorded as the author of its
	// submissions (collab.Submission.Author).
	ID string
	// Name is a display name (may be empty).
	Name string
	// Expires is when the principal's credentials expire (zero: never).
	Expires time.Time
	// Data is the policy's own record of the principal, such as its
	// verified claims, for its Authorize (nil for none). It must be
	// comparable: a pointer, typically.
	Data any
}

// Credentials are what a request or a WebSocket connection presents to
// the policy.
type Credentials struct {
	// Token is the bearer token of the request's Authorization header, or
	// the "token" of a WebSocket hello ("" when none).
	Token string
	// Request is the HTTP request, or the WebSocket's upgrade request
	// (whose context is done by the time the hello arrives: use its
	// headers and address only). For a WebSocket's later token message,
	// and when its principal expired, it is a GET of the connection's URL
	// with only its path value "id" and its address.
	Request *http.Request
}

// Policy is the server's one policy point: every HTTP route (Server.Routes)
// and every WebSocket message passes it before its handler runs, and
// before a request's body is read. Authenticate tells who presents c;
// Authorize tells whether p may do a on the document docID ("" for routes
// that concern no one document).
//
// Errors are answered by their kind: an error wrapping ErrUnauthenticated
// with 401 (and WWW-Authenticate), one wrapping ErrForbidden with 403,
// both with the error's text as the message; a context error with 503;
// any other error with 500 (logged). Nothing changes on a refusal.
//
// A POST /docs/{id}/events is authorized for ActionComment before its body
// is read, and for ActionEdit too once it is seen to carry steps; refused
// that with ErrForbidden, for ActionSuggest, which makes it a
// suggest-only submission (collab.Submission.SuggestOnly): a policy
// that refuses ActionEdit to a principal must also refuse ActionSuggest
// unless that principal may suggest. A POST
// /docs is authorized for ActionCreate with docID "" before its body is
// read, and with the new document's id once the body gives it (or it is
// generated). A route
// that creates its document by using it (GET /docs/{id}, GET and POST
// /docs/{id}/events, a WebSocket hello) is authorized for ActionCreate
// too when the document does not exist yet (unless the policy is
// AllowAll). A WebSocket upgrade is not authorized (browsers cannot
// give it headers): its hello is, with the hello's token (Authenticate,
// then Authorize for ActionRead), and after it every message with the
// connection's principal: steps for ActionEdit (or ActionSuggest, as
// for POST /docs/{id}/events; ActionComment without steps), presence
// and ping for ActionRead. A token message is
// authenticated and authorized for ActionRead with its own token, which
// must give the connection's principal ID; its principal then replaces
// the connection's. When the connection's principal expires
// (Principal.Expires), its token is authenticated and authorized for
// ActionRead again: a principal of the same ID that has not expired
// replaces it (a policy renews its principals so), else the connection is
// closed (4401 after a 401).
//
// Requests that no route takes (404, 405) and CORS preflights
// (Config.AllowOrigins) are answered without it.
//
// A Policy must be safe for concurrent use.
type Policy interface {
	Authenticate(ctx context.Context, c Credentials) (Principal, error)
	Authorize(ctx context.Context, p Principal, docID string, a Action) error
}

// AllowAll is the default Policy: everyone is anonymous and may do
// everything.
var AllowAll Policy = allowAll{}

type allowAll struct{}

func (allowAll) Authenticate(context.Context, Credentials) (Principal, error) {
	return Principal{}, nil
}

func (allowAll) Authorize(context.Context, Principal, string, Action) error { return nil }

// ReadFilter is implemented by a Policy that tells, without a context,
// whether a principal may read a document: GET /docs then lists only the
// documents that the principal may read.
type ReadFilter interface {
	MayRead(p Principal, docID string) bool
}

// ErrUnauthenticated is wrapped by a policy's errors for missing or
// invalid credentials (HTTP 401 with WWW-Authenticate: Bearer
// error="invalid_token").
var ErrUnauthenticated = errors.New("unauthenticated")

// ErrForbidden is wrapped by a policy's errors for a principal that may
// not do what it asks (HTTP 403). It is collab.ErrForbidden, which a
// collab.Config.BeforeSubmit hook's refusals may wrap too.
var ErrForbidden = collab.ErrForbidden

type principalKey struct{}

// PrincipalFrom returns the principal of a request's context, as the
// policy authenticated it, to handlers below the policy point. It reports
// false for an anonymous request (the zero Principal) and for a context
// that is no request's.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// withPrincipal returns ctx carrying p.
func withPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// bearerToken returns the token of r's "Authorization: Bearer TOKEN"
// header ("" when there is none).
func bearerToken(r *http.Request) string {
	v := r.Header["Authorization"]
	if len(v) == 0 {
		return ""
	}
	scheme, token, ok := strings.Cut(v[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// authorizeSteps authorizes p for a submission with steps on the
// document id: ActionEdit, or, refused that with ErrForbidden,
// ActionSuggest, which makes it suggest-only (the answer true). The
// error is ActionEdit's when both are refused.
func authorizeSteps(ctx context.Context, pol Policy, p Principal, id string) (suggestOnly bool, err error) {
	err = pol.Authorize(ctx, p, id, ActionEdit)
	if err == nil || !errors.Is(err, ErrForbidden) {
		return false, err
	}
	if pol.Authorize(ctx, p, id, ActionSuggest) != nil {
		return false, err
	}
	return true, nil
}

// admit authenticates c with pol and authorizes the principal for a on
// docID.
func admit(ctx context.Context, pol Policy, c Credentials, docID string, a Action) (Principal, error) {
	p, err := pol.Authenticate(ctx, c)
	if err != nil {
		return Principal{}, err
	}
	if err := pol.Authorize(ctx, p, docID, a); err != nil {
		return Principal{}, err
	}
	return p, nil
}
