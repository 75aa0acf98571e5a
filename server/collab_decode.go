package server

import (
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/jsonscan"
)

// maxSafeInt is the largest integer a JavaScript number holds exactly
// (Number.MAX_SAFE_INTEGER + 1, which is still exact).
const maxSafeInt = 1 << 53

// collabScratch is the memory a submission (POST /docs/{id}/events, a
// WebSocket steps message) decodes into, reused through a pool.
type collabScratch struct {
	d        jsonscan.Decoder
	steps    [][]byte
	comments []collab.CommentEvent
}

func (s *Server) getCollabScratch() *collabScratch {
	if sc, ok := s.collabScratch.Get().(*collabScratch); ok {
		return sc
	}
	return &collabScratch{}
}

// putCollabScratch gives sc back, after a body of n bytes.
func (s *Server) putCollabScratch(sc *collabScratch, n int) {
	sc.d.Reset(nil)
	clear(sc.steps)
	clear(sc.comments)
	sc.steps, sc.comments = sc.steps[:0], sc.comments[:0]
	if n <= maxPooledBuffer {
		s.collabScratch.Put(sc)
	}
}

var (
	submitKeys  = jsonscan.NewKeys("version", "steps", "clientID", "comment")
	commentKeys = jsonscan.NewKeys("type", "id", "from", "to", "text")
)

// decodeSubmission reads a POST /docs/{id}/events body: {"version": V,
// "steps": […], "clientID": id, "comment": […]}, where a missing or null
// "steps", "clientID" or "comment" is none. Other keys are ignored; of
// duplicate keys the last wins, as with JSON.parse. The authority checks
// the values (a client id is an integer from 0 to 2^53 or a short string,
// needed with steps); this checks the JSON types. The submission's steps
// point into body. Its errors are a 400 or, over Limits.MaxSteps, a 413;
// n is the number of steps.
func (s *Server) decodeSubmission(sc *collabScratch, body []byte) (sub collab.Submission, n int, err error) {
	bad := func(m string) (collab.Submission, int, error) {
		return collab.Submission{}, n, &httpError{http.StatusBadRequest, m}
	}
	d := &sc.d
	d.Reset(body)
	d.SetMaxDepth(s.limits.MaxDepth)
	if len(body) == 0 {
		return bad(`empty request: expected {"version": V, "steps": […], "clientID": ID, "comment": […]}`)
	}
	var (
		problems   [4]string // of version, steps, clientID, comment: the field's type is wrong
		hasVersion bool
		truncated  bool // over Limits.MaxSteps
	)
	k, err := d.Peek()
	if err != nil {
		return bad(syntaxMessage(d, err))
	}
	if k != jsonscan.Object {
		if err = d.Skip(); err == nil {
			err = d.End()
		}
		if err != nil {
			return bad(syntaxMessage(d, err))
		}
		return bad("invalid request: the request must be a JSON object (found " + k.String() + ")")
	}
	if err := d.BeginObject(); err != nil {
		return bad(syntaxMessage(d, err))
	}
	for {
		i, _, more, err := d.NextKeyIndex(submitKeys)
		if err != nil {
			return bad(syntaxMessage(d, err))
		}
		if !more {
			break
		}
		if i < 0 {
			if err := d.Skip(); err != nil {
				return bad(syntaxMessage(d, err))
			}
			continue
		}
		problems[i] = ""
		k, err := d.Peek()
		if err != nil {
			return bad(syntaxMessage(d, err))
		}
		switch i {
		case 0: // version
			hasVersion = false
			if k != jsonscan.Number {
				problems[i] = `"version" must be a non-negative integer (found ` + k.String() + ")"
				err = d.Skip()
				break
			}
			var f float64
			var raw []byte
			if f, raw, err = d.ReadNumber(); err != nil {
				break
			}
			if f != math.Trunc(f) || f < 0 {
				problems[i] = `"version" must be a non-negative integer (found ` + string(raw) + ")"
				break
			}
			// A version too large for an int64 is ahead of any document.
			sub.Version, hasVersion = math.MaxInt64, true
			if f < math.MaxInt64 {
				sub.Version = int64(f)
			}
		case 1: // steps
			sc.steps, n, truncated = sc.steps[:0], 0, false
			switch k {
			case jsonscan.Null:
				err = d.ReadNull()
			case jsonscan.Array:
				n, truncated, err = s.scanSteps(sc, d)
			default:
				problems[i] = `"steps" must be an array (found ` + k.String() + ")"
				err = d.Skip()
			}
		case 2: // clientID
			sub.ClientID = nil
			switch k {
			case jsonscan.Null:
				err = d.ReadNull()
			case jsonscan.Number, jsonscan.String:
				start := d.Pos()
				if err = d.Skip(); err == nil {
					// A copy: the authority keeps it, and body is reused.
					sub.ClientID = append(collab.ClientID(nil), body[start:d.Pos()]...)
				}
			default:
				problems[i] = `"clientID" must be a number or a string (found ` + k.String() + ")"
				err = d.Skip()
			}
		case 3: // comment
			sc.comments = sc.comments[:0]
			switch k {
			case jsonscan.Null:
				err = d.ReadNull()
			case jsonscan.Array:
				problems[i], err = scanComments(sc, d)
			default:
				problems[i] = `"comment" must be an array of comment events (found ` + k.String() + ")"
				err = d.Skip()
			}
		}
		if err != nil {
			return bad(syntaxMessage(d, err))
		}
	}
	if err := d.End(); err != nil {
		return bad(syntaxMessage(d, err))
	}
	for _, p := range problems {
		if p != "" {
			return bad("invalid request: " + p)
		}
	}
	if !hasVersion {
		return bad(`invalid request: missing "version"`)
	}
	if truncated {
		return collab.Submission{}, n, &httpError{http.StatusRequestEntityTooLarge,
			"too many steps: the request has " + strconv.Itoa(n) + ", over the limit of " +
				strconv.Itoa(s.collab.Limits().MaxSteps) + " steps per request"}
	}
	sub.Steps = sc.steps
	sub.Comments = sc.comments
	return sub, n, nil
}

// scanSteps reads the "steps" array, noting each step (up to
// the authority's MaxSteps: the others are only counted, and truncated is
// set).
// Steps are decoded by the authority, with the document's schema.
func (s *Server) scanSteps(sc *collabScratch, d *jsonscan.Decoder) (n int, truncated bool, err error) {
	if err := d.BeginArray(); err != nil {
		return 0, false, err
	}
	data := d.Data()
	for {
		more, err := d.NextElem()
		if err != nil || !more {
			return n, truncated, err
		}
		if _, err := d.Peek(); err != nil {
			return n, truncated, err
		}
		start := d.Pos()
		if err := d.Skip(); err != nil {
			return n, truncated, err
		}
		n++
		if n > s.collab.Limits().MaxSteps {
			truncated = true
			continue
		}
		sc.steps = append(sc.steps, data[start:d.Pos():d.Pos()])
	}
}

// scanComments reads the "comment" array of comment events:
// {"type": "create", "id": n, "from": p, "to": p, "text": "…"} and
// {"type": "delete", "id": n}. It returns the first problem with a
// field's type, or a syntax error.
func scanComments(sc *collabScratch, d *jsonscan.Decoder) (problem string, err error) {
	if err := d.BeginArray(); err != nil {
		return "", err
	}
	for i := 0; ; i++ {
		more, err := d.NextElem()
		if err != nil || !more {
			return problem, err
		}
		ev, p, err := scanComment(d, i)
		if err != nil {
			return "", err
		}
		if problem == "" {
			problem = p
		}
		sc.comments = append(sc.comments, ev)
	}
}

// scanComment reads comment event i.
func scanComment(d *jsonscan.Decoder, i int) (ev collab.CommentEvent, problem string, err error) {
	field := func(name string) string {
		return `"comment[` + strconv.Itoa(i) + `]` + name + `"`
	}
	k, err := d.Peek()
	if err != nil {
		return ev, "", err
	}
	if k != jsonscan.Object {
		return ev, field("") + " must be an object (found " + k.String() + ")", d.Skip()
	}
	if err := d.BeginObject(); err != nil {
		return ev, "", err
	}
	var seen [5]bool // type, id, from, to, text
	var problems [5]string
	names := [5]string{".type", ".id", ".from", ".to", ".text"}
	for {
		j, _, more, err := d.NextKeyIndex(commentKeys)
		if err != nil {
			return ev, "", err
		}
		if !more {
			break
		}
		if j < 0 {
			if err := d.Skip(); err != nil {
				return ev, "", err
			}
			continue
		}
		k, err := d.Peek()
		if err != nil {
			return ev, "", err
		}
		seen[j], problems[j] = true, ""
		switch {
		case j == 0 && k == jsonscan.String:
			t, err := d.ReadStringBytes()
			if err != nil {
				return ev, "", err
			}
			switch string(t) {
			case collab.CommentCreate:
				ev.Type = collab.CommentCreate
			case collab.CommentDelete:
				ev.Type = collab.CommentDelete
			default:
				problems[j] = field(names[j]) + ` must be "create" or "delete"`
			}
		case j == 4 && k == jsonscan.String:
			if ev.Text, err = d.ReadString(); err != nil {
				return ev, "", err
			}
		case j >= 1 && j <= 3 && k == jsonscan.Number:
			f, raw, err := d.ReadNumber()
			if err != nil {
				return ev, "", err
			}
			lo, hi := 0.0, float64(math.MaxInt32) // positions
			if j == 1 {
				lo, hi = -maxSafeInt, maxSafeInt // ids
			}
			if f != math.Trunc(f) || f < lo || f > hi {
				what := "a non-negative integer position"
				if j == 1 {
					what = "an integer from -2^53 to 2^53"
				}
				problems[j] = field(names[j]) + " must be " + what + " (found " + string(raw) + ")"
				break
			}
			switch j {
			case 1:
				ev.ID = int64(f)
			case 2:
				ev.From = int(f)
			case 3:
				ev.To = int(f)
			}
		default:
			want := [5]string{"a string", "an integer", "a number", "a number", "a string"}[j]
			problems[j] = field(names[j]) + " must be " + want + " (found " + k.String() + ")"
			if err := d.Skip(); err != nil {
				return ev, "", err
			}
		}
	}
	for _, p := range problems {
		if p != "" {
			return ev, p, nil
		}
	}
	need := seen[:2] // type, id
	if ev.Type == collab.CommentCreate {
		need = seen[:]
	}
	for j, ok := range need {
		if !ok {
			return ev, "missing " + field(names[j]), nil
		}
	}
	return ev, "", nil
}

// syntaxMessage is the message of an error of d (a *jsonscan.SyntaxError).
func syntaxMessage(d *jsonscan.Decoder, err error) string {
	if errors.Is(err, jsonscan.ErrTooDeep) {
		return "JSON nested too deeply: over the limit of " + strconv.Itoa(d.MaxDepth()) + " levels of arrays and objects"
	}
	return err.Error()
}
