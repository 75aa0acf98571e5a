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
	return int(n.measure())
}

// MemSize returns an estimate of the bytes of memory that n and its
// descendants hold: the nodes, their text, their child arrays and
// attributes. A subtree that occurs more than once (nodes are shared, and
// a replace with from > to repeats content) counts each time, so the
// estimate errs on the high side. It is computed with JSONSize and
// cached likewise.
func (n *Node) MemSize() int64 {
	if n.jsonSize.Load() > 0 {
		return n.memSize.Load()
	}
	n.measure()
	return n.memSize.Load()
}

// The parts of MemSize's estimate: a node (its size class), a pointer in
// a child array, a chunk of a wide fragment, an attribute.
const (
	nodeMem  = 144
	childMem = 8
	chunkMem = 48
	attrMem  = 48
)

// measure computes and caches n's JSON and memory sizes, returning the
// JSON size.
func (n *Node) measure() int64 {
	s := len(`{"type":`) + jsonStringLen(n.Type.Name) + len(`}`)
	mem := int64(nodeMem)
	if len(n.Attrs) > 0 {
		s += len(`,"attrs":`) + attrsJSONLen(n.Attrs)
		mem += int64(attrMem * len(n.Attrs))
	}
	if n.Content.size > 0 {
		js, cm := n.Content.measure()
		s += len(`,"content":`) + js
		mem += cm
	}
	if len(n.Marks) > 0 {
		s += len(`,"marks":[`) + len(n.Marks) - 1 + len(`]`)
		for _, m := range n.Marks {
			s += m.JSONSize()
		}
		mem += int64(childMem * len(n.Marks))
	}
	if n.isTextNode() {
		s += len(`,"text":`) + jsonStringLen(n.Text)
		mem += int64(len(n.Text))
	}
	n.memSize.Store(mem)
	n.jsonSize.Store(int64(s))
	return int64(s)
}

// JSONSize returns the length in bytes of f's JSON, len(f.AppendJSON(nil)).
// It adds up the children's cached sizes.
func (f Fragment) JSONSize() int {
	s, _ := f.measure()
	return s
}

// measure returns f's JSON size and the memory estimate of its children
// and child arrays.
func (f Fragment) measure() (int, int64) {
	count := f.ChildCount()
	if count == 0 {
		return len("null"), 0
	}
	s := len("[") + count - 1 + len("]")
	mem := int64(childMem * count)
	if f.tree != nil {
		mem += int64(chunkMem * len(f.tree.chunks))
	}
	for _, c := range f.all() {
		s += c.JSONSize()
		mem += c.memSize.Load() // computed by JSONSize
	}
	return s, mem
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
