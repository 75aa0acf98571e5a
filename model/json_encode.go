package model

import (
	"strconv"
	"sync"
)

// Writing documents as JSON, byte for byte as JSON.stringify(x.toJSON())
// writes them in JavaScript: keys in the order toJSON sets them (type,
// attrs, content, marks, text), attributes in the order of the type's
// spec, no whitespace, and none of encoding/json's HTML escaping.

// AppendJSON appends the JSON form of n (Node.toJSON) to buf.
func (n *Node) AppendJSON(buf []byte) []byte {
	if n.size < bigJSON || cap(buf)-len(buf) >= 4*n.size {
		return n.appendJSON(buf)
	}
	return appendLargeJSON(buf, n.appendJSON)
}

// bigJSON is the size (in positions) from which a node or fragment whose
// JSON may not fit in buf is written through appendLargeJSON.
const bigJSON = 1024

var jsonScratch = sync.Pool{New: func() any { return new([]byte) }}

// appendLargeJSON appends what write writes, writing into a reused buffer
// first and copying from it once, rather than growing buf again and again
// while a large document is written.
func appendLargeJSON(buf []byte, write func([]byte) []byte) []byte {
	scratch := jsonScratch.Get().(*[]byte)
	*scratch = write((*scratch)[:0])
	buf = append(buf, *scratch...)
	if cap(*scratch) <= 8<<20 { // keep no huge buffers
		jsonScratch.Put(scratch)
	}
	return buf
}

func (n *Node) appendJSON(buf []byte) []byte {
	buf = append(buf, `{"type":`...)
	buf = appendJSONString(buf, n.Type.Name)
	if len(n.Attrs) > 0 {
		buf = append(buf, `,"attrs":`...)
		buf = appendAttrsJSON(buf, n.Attrs)
	}
	if n.Content.size > 0 {
		buf = append(buf, `,"content":`...)
		buf = n.Content.appendJSON(buf)
	}
	if len(n.Marks) > 0 {
		buf = append(buf, `,"marks":[`...)
		for i, m := range n.Marks {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = m.AppendJSON(buf)
		}
		buf = append(buf, ']')
	}
	if n.isTextNode() { // not a plain node of the text type, which JS can make
		buf = append(buf, `,"text":`...)
		buf = appendJSONString(buf, n.Text)
	}
	return append(buf, '}')
}

// MarshalJSON returns the JSON form of n. Note that encoding/json, when it
// calls MarshalJSON, escapes <, > and & unless told not to (SetEscapeHTML);
// AppendJSON is byte-identical to JavaScript.
func (n *Node) MarshalJSON() ([]byte, error) {
	return n.AppendJSON(nil), nil
}

// AppendJSON appends the JSON form of f (Fragment.toJSON): an array of
// nodes, or null when f is empty.
func (f Fragment) AppendJSON(buf []byte) []byte {
	if f.size < bigJSON || cap(buf)-len(buf) >= 4*f.size {
		return f.appendJSON(buf)
	}
	return appendLargeJSON(buf, f.appendJSON)
}

func (f Fragment) appendJSON(buf []byte) []byte {
	if f.ChildCount() == 0 {
		return append(buf, "null"...)
	}
	buf = append(buf, '[')
	for i, c := range f.all() {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = c.appendJSON(buf)
	}
	return append(buf, ']')
}

// MarshalJSON returns the JSON form of f (see Node.MarshalJSON).
func (f Fragment) MarshalJSON() ([]byte, error) {
	return f.AppendJSON(nil), nil
}

// AppendJSON appends the JSON form of m (Mark.toJSON) to buf.
func (m *Mark) AppendJSON(buf []byte) []byte {
	buf = append(buf, `{"type":`...)
	buf = appendJSONString(buf, m.Type.Name)
	if len(m.Attrs) > 0 {
		buf = append(buf, `,"attrs":`...)
		buf = appendAttrsJSON(buf, m.Attrs)
	}
	return append(buf, '}')
}

// MarshalJSON returns the JSON form of m (see Node.MarshalJSON).
func (m *Mark) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(nil), nil
}

// AppendJSON appends the JSON form of s (Slice.toJSON): null for a slice
// with empty content, else its content and its open depths when not 0.
func (s Slice) AppendJSON(buf []byte) []byte {
	if s.Content.size == 0 {
		return append(buf, "null"...)
	}
	buf = append(buf, `{"content":`...)
	buf = s.Content.AppendJSON(buf)
	if s.OpenStart > 0 {
		buf = append(buf, `,"openStart":`...)
		buf = strconv.AppendInt(buf, int64(s.OpenStart), 10)
	}
	if s.OpenEnd > 0 {
		buf = append(buf, `,"openEnd":`...)
		buf = strconv.AppendInt(buf, int64(s.OpenEnd), 10)
	}
	return append(buf, '}')
}

// MarshalJSON returns the JSON form of s (see Node.MarshalJSON).
func (s Slice) MarshalJSON() ([]byte, error) {
	return s.AppendJSON(nil), nil
}

// appendAttrsJSON appends attributes as a JSON object, in their order.
func appendAttrsJSON(buf []byte, attrs Attrs) []byte {
	buf = append(buf, '{')
	for i, a := range attrs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, a.Name)
		buf = append(buf, ':')
		buf = appendJSONValue(buf, a.Value)
	}
	return append(buf, '}')
}
