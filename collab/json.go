package collab

import "strconv"

// AppendJSON appends s as the collab demo answers GET /docs/{id}:
// {"doc":..,"users":..,"version":..,"comments":[..],"commentVersion":..},
// with "threadVersion":.. after them unless it is 0.
func (s State) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"doc":`...)
	switch {
	case s.DocJSON != nil:
		buf = append(buf, s.DocJSON...)
	case s.Doc != nil:
		buf = s.Doc.AppendJSON(buf)
	default:
		buf = append(buf, "null"...)
	}
	buf = append(buf, `,"users":`...)
	buf = strconv.AppendInt(buf, int64(s.Users), 10)
	buf = append(buf, `,"version":`...)
	buf = strconv.AppendInt(buf, s.Version, 10)
	buf = append(buf, `,"comments":`...)
	buf = appendComments(buf, s.Comments)
	buf = append(buf, `,"commentVersion":`...)
	buf = strconv.AppendInt(buf, s.CommentVersion, 10)
	if s.ThreadVersion > 0 {
		buf = append(buf, `,"threadVersion":`...)
		buf = strconv.AppendInt(buf, s.ThreadVersion, 10)
	}
	return append(buf, '}')
}

// AppendJSON appends e as the collab demo answers GET /docs/{id}/events:
// {"version":..,"commentVersion":..,"steps":[..],"clientIDs":[..],
// "comment":[..],"users":..}, with one client id per step, and
// "threads":[..],"threadVersion":.. before "users" when they follow
// threads.
func (e Events) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"version":`...)
	buf = strconv.AppendInt(buf, e.Version, 10)
	buf = append(buf, `,"commentVersion":`...)
	buf = strconv.AppendInt(buf, e.CommentVersion, 10)
	buf = append(buf, `,"steps":[`...)
	for i, s := range e.Steps {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, s.JSON...)
	}
	buf = append(buf, `],"clientIDs":[`...)
	for i, s := range e.Steps {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, s.ClientID...)
	}
	buf = append(buf, `],"comment":[`...)
	for i, c := range e.Comment {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = c.AppendJSON(buf)
	}
	buf = append(buf, ']')
	if e.FollowsThreads {
		buf = append(buf, `,"threads":`...)
		buf = appendComments(buf, e.Threads)
		buf = append(buf, `,"threadVersion":`...)
		buf = strconv.AppendInt(buf, e.ThreadVersion, 10)
	}
	buf = append(buf, `,"users":`...)
	buf = strconv.AppendInt(buf, int64(e.Users), 10)
	return append(buf, '}')
}
