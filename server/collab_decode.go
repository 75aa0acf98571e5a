package server

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"

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

// collabScratches is the pool of collabScratch.
var collabScratches sync.Pool

func getCollabScratch() *collabScratch {
	if sc, ok := collabScratches.Get().(*collabScratch); ok {
		return sc
	}
	return &collabScratch{}
}

// putCollabScratch gives sc back, after a body of n bytes.
func putCollabScratch(sc *collabScratch, n int) {
	sc.d.Reset(nil)
	clear(sc.steps)
	clear(sc.comments)
	sc.steps, sc.comments = sc.steps[:0], sc.comments[:0]
	if n <= maxPooledBuffer {
		collabScratches.Put(sc)
	}
}

var (
	submitKeys  = jsonscan.NewKeys("version", "steps", "clientID", "comment")
	commitKeys  = jsonscan.NewKeys("version", "steps", "clientID", "comment", "ref")
	commentKeys = jsonscan.NewKeys("type", "id", "from", "to", "text", "thread")
)

// decodeSubmission reads a POST /docs/{id}/events body: {"version": V,
// "steps": […], "clientID": id, "comment": […]}, where a missing or null
// "steps", "clientID" or "comment" is none. Other keys are ignored; of
// duplicate keys the last wins, as with JSON.parse. The authority checks
// the values (a client id is an integer from 0 to 2^53 or a short string,
// needed with steps); this checks the JSON types. The submission's steps
// point into body. Its errors are a 400 or, over Limits.MaxSteps, a 413;
// n is the number of steps. With commit, it reads a POST
// /docs/{id}/commits body, which has a "ref" too: a string of 1 to
// collab.MaxRefBytes bytes.
func decodeSubmission(sc *collabScratch, body []byte, maxDepth, maxSteps int, commit bool) (sub collab.Submission, n int, err error) {
	d := &sc.d
	d.Reset(body)
	d.SetMaxDepth(maxDepth)
	if len(body) == 0 {
		return collab.Submission{}, 0, &httpError{http.StatusBadRequest, `empty request: expected {"version": V, "steps": […], "clientID": ID, "comment": […]}`}
	}
	keys := submitKeys
	f := submissionFields{commit: commit}
	if commit {
		keys = commitKeys
	}
	k, err := d.Peek()
	if err != nil {
		return f.syntaxError(d, err)
	}
	if k != jsonscan.Object {
		if err = d.Skip(); err == nil {
			err = d.End()
		}
		if err != nil {
			return f.syntaxError(d, err)
		}
		return collab.Submission{}, 0, &httpError{http.StatusBadRequest, "invalid request: the request must be a JSON object (found " + k.String() + ")"}
	}
	if err := d.BeginObject(); err != nil {
		return f.syntaxError(d, err)
	}
	for {
		i, _, more, err := d.NextKeyIndex(keys)
		if err != nil {
			return f.syntaxError(d, err)
		}
		if !more {
			break
		}
		if i < 0 {
			err = d.Skip()
		} else {
			err = f.read(sc, d, i, maxSteps)
		}
		if err != nil {
			return f.syntaxError(d, err)
		}
	}
	if err := d.End(); err != nil {
		return f.syntaxError(d, err)
	}
	return f.result(sc, maxSteps)
}

// The fields of a submission, as indexes of submitKeys.
const (
	submitVersion = iota
	submitSteps
	submitClientID
	submitComment
	submitRef
)

// submissionFields collects the fields of a submission as a decoder
// meets them: in a POST /docs/{id}/events body (decodeSubmission) or in a
// WebSocket message, scanned once with its other fields
// (wsMessage.scan).
type submissionFields struct {
	sub        collab.Submission
	n          int       // steps, Limits.MaxSteps or more
	problems   [5]string // of version, steps, clientID, comment, ref: the field's type is wrong
	hasVersion bool
	truncated  bool // over Limits.MaxSteps
	commit     bool // a commit: "ref" is required
}

// read reads the value at d of the field i (submitVersion …), which
// replaces an earlier one of that key; its steps and comment events go to
// sc. Its error is a syntax error of d.
func (f *submissionFields) read(sc *collabScratch, d *jsonscan.Decoder, i, maxSteps int) error {
	f.problems[i] = ""
	k, err := d.Peek()
	if err != nil {
		return err
	}
	switch i {
	case submitVersion:
		f.hasVersion = false
		if k != jsonscan.Number {
			f.problems[i] = `"version" must be a non-negative integer (found ` + k.String() + ")"
			return d.Skip()
		}
		v, raw, err := d.ReadNumber()
		if err != nil {
			return err
		}
		if v != math.Trunc(v) || v < 0 {
			f.problems[i] = `"version" must be a non-negative integer (found ` + string(raw) + ")"
			return nil
		}
		// A version too large for an int64 is ahead of any document.
		f.sub.Version, f.hasVersion = math.MaxInt64, true
		if v < math.MaxInt64 {
			f.sub.Version = int64(v)
		}
	case submitSteps:
		sc.steps, f.n, f.truncated = sc.steps[:0], 0, false
		switch k {
		case jsonscan.Null:
			return d.ReadNull()
		case jsonscan.Array:
			f.n, f.truncated, err = scanSteps(sc, d, maxSteps)
			return err
		}
		f.problems[i] = `"steps" must be an array (found ` + k.String() + ")"
		return d.Skip()
	case submitClientID:
		f.sub.ClientID = nil
		switch k {
		case jsonscan.Null:
			return d.ReadNull()
		case jsonscan.Number, jsonscan.String:
			start := d.Pos()
			if err := d.Skip(); err != nil {
				return err
			}
			// A copy: the authority keeps it, and the message is reused.
			f.sub.ClientID = append(collab.ClientID(nil), d.Data()[start:d.Pos()]...)
			return nil
		}
		f.problems[i] = `"clientID" must be a number or a string (found ` + k.String() + ")"
		return d.Skip()
	case submitComment:
		sc.comments = sc.comments[:0]
		switch k {
		case jsonscan.Null:
			return d.ReadNull()
		case jsonscan.Array:
			f.problems[i], err = scanComments(sc, d)
			return err
		}
		f.problems[i] = `"comment" must be an array of comment events (found ` + k.String() + ")"
		return d.Skip()
	case submitRef:
		f.sub.Ref = ""
		if k != jsonscan.String {
			f.problems[i] = `"ref" must be a string (found ` + k.String() + ")"
			return d.Skip()
		}
		ref, err := d.ReadString()
		if err != nil {
			return err
		}
		if len(ref) == 0 || len(ref) > collab.MaxRefBytes {
			f.problems[i] = `"ref" must be a string of 1 to ` + strconv.Itoa(collab.MaxRefBytes) + " bytes (found " + strconv.Itoa(len(ref)) + ")"
			return nil
		}
		f.sub.Ref = ref
	}
	return nil
}

// syntaxError returns the answer to a syntax error of d.
func (f *submissionFields) syntaxError(d *jsonscan.Decoder, err error) (collab.Submission, int, error) {
	return collab.Submission{}, f.n, &httpError{http.StatusBadRequest, syntaxMessage(d, err)}
}

// result returns the submission read, whose steps and comment events are
// sc's, or its first problem: a 400, or a 413 over maxSteps
// (Limits.MaxSteps); n is the number of steps.
func (f *submissionFields) result(sc *collabScratch, maxSteps int) (sub collab.Submission, n int, err error) {
	for _, p := range f.problems {
		if p != "" {
			return collab.Submission{}, f.n, &httpError{http.StatusBadRequest, "invalid request: " + p}
		}
	}
	if !f.hasVersion {
		return collab.Submission{}, f.n, &httpError{http.StatusBadRequest, `invalid request: missing "version"`}
	}
	if f.commit && f.sub.Ref == "" {
		return collab.Submission{}, f.n, &httpError{http.StatusBadRequest, `invalid request: missing "ref"`}
	}
	if f.truncated {
		return collab.Submission{}, f.n, &httpError{http.StatusRequestEntityTooLarge,
			"too many steps: the request has " + strconv.Itoa(f.n) + ", over the limit of " +
				strconv.Itoa(maxSteps) + " steps per request"}
	}
	sub = f.sub
	sub.Steps = sc.steps
	sub.Comments = sc.comments
	return sub, f.n, nil
}

// scanSteps reads the "steps" array, noting each step (up to maxSteps:
// the others are only counted, and truncated is set). Steps are decoded
// by the authority, with the document's schema.
func scanSteps(sc *collabScratch, d *jsonscan.Decoder, maxSteps int) (n int, truncated bool, err error) {
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
		if n > maxSteps {
			truncated = true
			continue
		}
		sc.steps = append(sc.steps, data[start:d.Pos():d.Pos()])
	}
}

// scanComments reads the "comment" array of comment events:
// {"type": "create", "id": n, "from": p, "to": p, "text": "…"} and
// {"type": "delete", "id": n} of the collab demo, and the thread
// operations {"type": "reply", "id": n, "thread": n, "text": "…"},
// {"type": "edit", "id": n, "text": "…"} and {"type": t, "id": n} for
// "resolve", "reopen" and "deleteReply". It returns the first problem
// with a field's type, or a syntax error.
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
	var seen [6]bool // type, id, from, to, text, thread
	var problems [6]string
	names := [6]string{".type", ".id", ".from", ".to", ".text", ".thread"}
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
			if ev.Type = string(t); !collab.IsCommentType(ev.Type) {
				ev.Type = ""
				problems[j] = field(names[j]) + " must be " + collab.CommentTypesText
			}
		case j == 4 && k == jsonscan.String:
			if ev.Text, err = d.ReadString(); err != nil {
				return ev, "", err
			}
		case (j >= 1 && j <= 3 || j == 5) && k == jsonscan.Number:
			f, raw, err := d.ReadNumber()
			if err != nil {
				return ev, "", err
			}
			id := j == 1 || j == 5
			lo, hi := 0.0, float64(math.MaxInt32) // positions
			if id {
				lo, hi = -maxSafeInt, maxSafeInt
			}
			if f != math.Trunc(f) || f < lo || f > hi {
				what := "a non-negative integer position"
				if id {
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
			case 5:
				ev.Thread = int64(f)
			}
		default:
			want := [6]string{"a string", "an integer", "a number", "a number", "a string", "an integer"}[j]
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
	need := []int{0, 1} // type, id
	switch ev.Type {
	case collab.CommentCreate:
		need = append(need, 2, 3, 4)
	case collab.CommentReply:
		need = append(need, 5, 4)
	case collab.CommentEdit:
		need = append(need, 4)
	}
	for _, j := range need {
		if !seen[j] {
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
