package server

import (
	"net/http"
	"strconv"
)

// getChanges answers GET /docs/{id}/changes?from=A&to=B[&simplify=1]:
// {"from": A, "to": B, "changes": [{"fromA", "toA", "fromB", "toB",
// "deleted": [{"length", "data"}], "inserted": [{"length", "data"}]},
// …]}, prosemirror-changeset's changes between versions A and B with
// each step's author as its data (collab.Authority.Changes), through
// simplifyChanges with simplify=1.
func (s *api) getChanges(x *exchange, r *http.Request, id string) {
	q := r.URL.RawQuery
	from, err := changesVersion(q, "from")
	var to int64
	if err == nil {
		to, err = changesVersion(q, "to")
	}
	var simplify bool
	if err == nil {
		simplify, err = changesSimplify(q)
	}
	if err != nil {
		s.fail(x, err)
		return
	}
	changes, err := s.collab.Changes(r.Context(), id, from, to, simplify, s.answerMemory(x))
	if err == nil {
		size := int64(64)
		for _, ch := range changes {
			size += 96
			for _, sp := range ch.Deleted {
				size += 32 + 2*int64(len(sp.Data))
			}
			for _, sp := range ch.Inserted {
				size += 32 + 2*int64(len(sp.Data))
			}
		}
		err = s.holdAnswer(x, r, size)
	}
	if err != nil {
		s.fail(x, err)
		return
	}
	buf := append(x.out[:0], `{"from":`...)
	buf = strconv.AppendInt(buf, from, 10)
	buf = append(buf, `,"to":`...)
	buf = strconv.AppendInt(buf, to, 10)
	buf = append(buf, `,"changes":[`...)
	for i, ch := range changes {
		if i > 0 {
			buf = append(buf, ',')
		}
		// String data: AppendJSON cannot fail.
		buf, _ = ch.AppendJSON(buf)
	}
	x.out = append(buf, "]}"...)
	s.write(x, http.StatusOK, x.out)
}

// changesVersion reads the required query parameter name, a version.
func changesVersion(rawQuery, name string) (int64, error) {
	if _, ok := queryValue(rawQuery, name); !ok {
		return 0, &httpError{http.StatusBadRequest, "missing query parameter " + strconv.Quote(name) +
			": want ?from=A&to=B (non-negative integers)"}
	}
	return queryVersion(rawQuery, name)
}

// changesSimplify reads the optional query parameter simplify: 1 or
// true, 0 or false (the default).
func changesSimplify(rawQuery string) (bool, error) {
	v, _ := queryValue(rawQuery, "simplify")
	switch v {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	}
	if len(v) > 64 {
		v = v[:64] + "…"
	}
	return false, &httpError{http.StatusBadRequest, `query parameter "simplify" must be 1 or 0 (true or false), not ` + strconv.Quote(v)}
}
