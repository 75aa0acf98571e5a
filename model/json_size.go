package model

// The length of the JSON that AppendJSON writes, without writing it. A
// node computes its own once and keeps it: nodes are immutable and share
// their unchanged children, so after a step only the nodes on the changed
// path are measured again (and the children of a changed fragment are
// added up, each from its cache).

// JSONSize returns the length in bytes of n's JSON, len(n.AppendJSON(nil)),
// computing it on first use and caching it in n.
func (n *Node) JSONSize() int {
	if s := n.jsonSize.Load(); s > 0 {
		return int(s)
	}
	s := n.measureJSON()
	n.jsonSize.Store(int64(s))
	return s
}

// measureJSON returns the length of n.appendJSON's output.
func (n *Node) measureJSON() int {
	s := len(`{"type":`) + jsonStringLen(n.Type.Name) + len(`}`)
	if len(n.Attrs) > 0 {
		s += len(`,"attrs":`) + attrsJSONLen(n.Attrs)
	}
	if n.Content.size > 0 {
		s += len(`,"content":`) + n.Content.JSONSize()
	}
	if len(n.Marks) > 0 {
		s += len(`,"marks":[`) + len(n.Marks) - 1 + len(`]`)
		for _, m := range n.Marks {
			s += m.JSONSize()
		}
	}
	if n.isTextNode() {
		s += len(`,"text":`) + jsonStringLen(n.Text)
	}
	return s
}

// JSONSize returns the length in bytes of f's JSON, len(f.AppendJSON(nil)).
// It adds up the children's cached sizes.
func (f Fragment) JSONSize() int {
	count := f.ChildCount()
	if count == 0 {
		return len("null")
	}
	s := len("[") + count - 1 + len("]")
	for _, c := range f.all() {
		s += c.JSONSize()
	}
	return s
}

// JSONSize returns the length in bytes of m's JSON, len(m.AppendJSON(nil)).
func (m *Mark) JSONSize() int {
	s := len(`{"type":`) + jsonStringLen(m.Type.Name) + len(`}`)
	if len(m.Attrs) > 0 {
		s += len(`,"attrs":`) + attrsJSONLen(m.Attrs)
	}
	return s
}

// attrsJSONLen returns the length of appendAttrsJSON's output.
func attrsJSONLen(attrs Attrs) int {
	s := len("{") + len(attrs) - 1 + len("}")
	for _, a := range attrs {
		s += jsonStringLen(a.Name) + len(":") + jsonValueLen(a.Value)
	}
	return s
}

// jsonValueLen returns the length of appendJSONValue's output.
func jsonValueLen(v any) int {
	switch x := v.(type) {
	case bool:
		if x {
			return len("true")
		}
		return len("false")
	case float64:
		var buf [32]byte
		return len(appendJSNumber(buf[:0], x))
	case string:
		return jsonStringLen(x)
	case []any:
		s := len("[") + max(len(x)-1, 0) + len("]")
		for _, e := range x {
			s += jsonValueLen(e)
		}
		return s
	case JSONObject:
		s := len("{") + max(len(x)-1, 0) + len("}")
		for _, p := range x {
			s += jsonStringLen(p.Key) + len(":") + jsonValueLen(p.Value)
		}
		return s
	}
	return len("null")
}

// jsonStringLen returns the length of appendJSONString's output: the
// quotes, the bytes it copies, and the escapes it writes instead of the
// others.
func jsonStringLen(s string) int {
	n := len(`""`) + len(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if jsonPlainByte[c] {
			continue
		}
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
			n++ // \x for one byte
		case c < 0x20:
			n += 5 // \u00xx for one byte
		case i+2 < len(s) && s[i+1] >= 0xA0 && s[i+1] <= 0xBF:
			n += 3 // \udxxx for a three-byte lone surrogate
			i += 2
		}
	}
	return n
}
