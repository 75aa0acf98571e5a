package server

import (
	"context"
	"net/http"

	"github.com/pmauthority/pmauthority/apply"
)

// largeRequest is the body size from which apply requests take turns.
const largeRequest = 16 << 10

// apply answers an apply request (POST / and POST /v1/apply).
func (s *api) apply(x *exchange, r *http.Request, _ string) {
	body, err := s.readJSONBody(x, r)
	if err != nil {
		s.fail(x, err)
		return
	}
	out, n, err := s.applyBody(r.Context(), x.out[:0], body)
	x.steps = n
	if err != nil {
		s.fail(x, err)
		return
	}
	x.out = out
	s.write(x, http.StatusOK, out)
}

// applyBody runs the request in body. Large requests take turns (see
// Config.ApplyWorkers); the turn ends before the answer is written, so
// that a client slow to read it holds no worker. Its errors are
// *apply.Failure values.
func (s *api) applyBody(ctx context.Context, buf, body []byte) ([]byte, int, error) {
	if len(body) >= largeRequest {
		select {
		case s.workers <- struct{}{}:
			defer func() { <-s.workers }()
		case <-ctx.Done():
			return buf, 0, &apply.Failure{Step: -1, Message: "request canceled while waiting for a worker", Err: apply.ErrCanceled}
		}
	}
	return s.app.Apply(ctx, buf, body)
}

// listSchemas answers GET /v1/schemas: {"default": NAME, "schemas": [NAME, …]}.
func (s *api) listSchemas(x *exchange, _ *http.Request, _ string) {
	s.write(x, http.StatusOK, s.schemasJSON)
}
