package model

import (
	"errors"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// ContentMatch is a state of the automaton compiled from a content
// expression: which node types may come next, and whether the content may
// end here.
type ContentMatch struct {
	// ValidEnd is true when the content may end at this state.
	ValidEnd bool

	next []MatchEdge
	// wrapCache holds FindWrapping results. It is copied on write so that
	// readers need no lock: a Schema is shared by all goroutines.
	wrapCache atomic.Pointer[[]wrapCacheEntry]
}

// MatchEdge is an edge of the content automaton.
type MatchEdge struct {
	Type *NodeType
	Next *ContentMatch
}

type wrapCacheEntry struct {
	target *NodeType
	wrap   []*NodeType // nil with found == false when no wrapping exists
	found  bool
}

// EmptyContentMatch is the match of an empty content expression, shared by
// all leaf node types (JS ContentMatch.empty): NodeType.IsLeaf compares
// against it.
var EmptyContentMatch = &ContentMatch{ValidEnd: true}

// MatchType returns the match after a node of type t, or nil when t is not
// allowed here.
func (c *ContentMatch) MatchType(t *NodeType) *ContentMatch {
	for i := range c.next {
		if c.next[i].Type == t {
			return c.next[i].Next
		}
	}
	return nil
}

// MatchFragment matches the children start to end of f and returns the
// resulting match, or nil when they do not match. Pass f.ChildCount() as
// end to match to the end of f.
func (c *ContentMatch) MatchFragment(f Fragment, start, end int) *ContentMatch {
	cur := c
	for i := start; cur != nil && i < end; i++ {
		cur = cur.MatchType(f.Child(i).Type)
	}
	return cur
}

// InlineContent reports whether the content at this state is inline.
func (c *ContentMatch) InlineContent() bool {
	return len(c.next) != 0 && c.next[0].Type.IsInline()
}

// DefaultType returns the first node type that may come next and can be
// generated (is not text and has no required attributes), or nil.
func (c *ContentMatch) DefaultType() *NodeType {
	for _, e := range c.next {
		if !(e.Type.IsText || e.Type.HasRequiredAttrs()) {
			return e.Type
		}
	}
	return nil
}

// Compatible reports whether c and o have an outgoing node type in common.
func (c *ContentMatch) Compatible(o *ContentMatch) bool {
	for _, a := range c.next {
		for _, b := range o.next {
			if a.Type == b.Type {
				return true
			}
		}
	}
	return false
}

// Errors that the JavaScript runtime (not prosemirror-model) raises when
// filling content in a schema whose node types cannot be filled: a type
// that needs itself to be filled recurses until the stack overflows, and a
// type that cannot be filled yields null, which Fragment.from then
// dereferences.
var (
	errStackOverflow = errors.New("Maximum call stack size exceeded")
	errFillNull      = errors.New("Cannot read properties of null (reading 'nodeSize')")
)

// FillBefore tries to match after (from its child startIndex on) and, if
// that fails, looks for nodes that can be inserted before it to make it
// match. It returns the nodes to insert (possibly none) and true, or false
// when no fill exists. With toEnd, only a fill after which the content
// may end counts. The error is set where JavaScript throws: when one of
// the inserted node types cannot itself be created with createAndFill
// (only in schemas with such node types).
func (c *ContentMatch) FillBefore(after Fragment, toEnd bool, startIndex int) (Fragment, bool, error) {
	types, ok := c.fillTypes(after, toEnd, startIndex)
	if !ok {
		return Fragment{}, false, nil
	}
	f, err := fillNodes(types)
	if err != nil {
		return Fragment{}, false, err
	}
	return f, true, nil
}

// fillTypes is the search of JS fillBefore: the node types to insert.
func (c *ContentMatch) fillTypes(after Fragment, toEnd bool, startIndex int) ([]*NodeType, bool) {
	seen := []*ContentMatch{c}
	var search func(m *ContentMatch, types []*NodeType) ([]*NodeType, bool)
	search = func(m *ContentMatch, types []*NodeType) ([]*NodeType, bool) {
		finished := m.MatchFragment(after, startIndex, after.ChildCount())
		if finished != nil && (!toEnd || finished.ValidEnd) {
			return types, true
		}
		for _, e := range m.next {
			if !(e.Type.IsText || e.Type.HasRequiredAttrs()) && !slices.Contains(seen, e.Next) {
				seen = append(seen, e.Next)
				if found, ok := search(e.Next, append(types[:len(types):len(types)], e.Type)); ok {
					return found, true
				}
			}
		}
		return nil, false
	}
	return search(c, nil)
}

// fillNodes is JS Fragment.from(types.map(tp => tp.createAndFill())).
func fillNodes(types []*NodeType) (Fragment, error) {
	if len(types) == 0 {
		return Fragment{}, nil
	}
	nodes := make([]*Node, len(types))
	null := false
	for i, t := range types {
		n, err := t.defaultFill()
		if err != nil {
			return Fragment{}, err
		}
		if n == nil {
			null = true
		}
		nodes[i] = n
	}
	if null {
		return Fragment{}, errFillNull
	}
	return NewFragment(nodes), nil
}

// FindWrapping returns the node types that would have to wrap a node of
// type target for it to fit here: empty when it fits directly, false when
// no wrapping exists. Results are cached; the returned slice is shared
// and must not be modified.
func (c *ContentMatch) FindWrapping(target *NodeType) ([]*NodeType, bool) {
	if p := c.wrapCache.Load(); p != nil {
		for _, e := range *p {
			if e.target == target {
				return e.wrap, e.found
			}
		}
	}
	wrap, found := c.computeWrapping(target)
	if len(c.next) == 0 {
		// Nothing fits in a state without edges; do not let the shared
		// EmptyContentMatch collect entries for every schema's types.
		return wrap, found
	}
	for {
		old := c.wrapCache.Load()
		var entries []wrapCacheEntry
		if old != nil {
			for _, e := range *old {
				if e.target == target {
					return e.wrap, e.found
				}
			}
			entries = make([]wrapCacheEntry, len(*old), len(*old)+1)
			copy(entries, *old)
		}
		entries = append(entries, wrapCacheEntry{target: target, wrap: wrap, found: found})
		if c.wrapCache.CompareAndSwap(old, &entries) {
			return wrap, found
		}
	}
}

func (c *ContentMatch) computeWrapping(target *NodeType) ([]*NodeType, bool) {
	type active struct {
		match *ContentMatch
		typ   *NodeType
		via   *active
	}
	seen := map[string]bool{}
	queue := []*active{{match: c}}
	for len(queue) > 0 {
		current := queue[0]
		queue = queue[1:]
		match := current.match
		if match.MatchType(target) != nil {
			result := []*NodeType{}
			for obj := current; obj.typ != nil; obj = obj.via {
				result = append(result, obj.typ)
			}
			slices.Reverse(result)
			return result, true
		}
		for _, e := range match.next {
			if !e.Type.IsLeaf() && !e.Type.HasRequiredAttrs() && !seen[e.Type.Name] && (current.typ == nil || e.Next.ValidEnd) {
				queue = append(queue, &active{match: e.Type.ContentMatch, typ: e.Type, via: current})
				seen[e.Type.Name] = true
			}
		}
	}
	return nil, false
}

// EdgeCount returns the number of outgoing edges of this state.
func (c *ContentMatch) EdgeCount() int { return len(c.next) }

// Edge returns the n-th outgoing edge of this state. It panics when there
// is no such edge, as the JS throws.
func (c *ContentMatch) Edge(n int) MatchEdge {
	if n < 0 || n >= len(c.next) {
		panic("There's no " + strconv.Itoa(n) + "th edge in this content match")
	}
	return c.next[n]
}

// String describes the automaton reachable from c, one state per line, as
// the JS toString: "0 paragraph->1\n1* paragraph->1".
func (c *ContentMatch) String() string {
	var seen []*ContentMatch
	var scan func(m *ContentMatch)
	scan = func(m *ContentMatch) {
		seen = append(seen, m)
		for _, e := range m.next {
			if !slices.Contains(seen, e.Next) {
				scan(e.Next)
			}
		}
	}
	scan(c)
	var b strings.Builder
	for i, m := range seen {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strconv.Itoa(i))
		if m.ValidEnd {
			b.WriteByte('*')
		} else {
			b.WriteByte(' ')
		}
		b.WriteByte(' ')
		for j, e := range m.next {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.Type.Name)
			b.WriteString("->")
			b.WriteString(strconv.Itoa(slices.Index(seen, e.Next)))
		}
	}
	return b.String()
}

// Limits on content expressions. JavaScript has none but its stack and
// memory; these keep a hostile spec from stalling or crashing the process.
const (
	maxExprNesting  = 256        // parenthesis depth
	maxNFAStates    = 5000       // states of the intermediate automaton
	maxDFAStates    = 5000       // states of the compiled automaton
	maxCompileWork  = 10_000_000 // elementary steps of building all of a schema's automata
	maxNullFromRecs = 20_000     // recursion depth of nullFrom (JS overflows its stack)
)

// contentParser compiles content expressions for one schema.
type contentParser struct {
	byName map[string]*NodeType
	order  []*NodeType // node types in JS property order (for groups)
	work   int         // compile work of the schema so far (see maxCompileWork)
}

// parseContent is JS ContentMatch.parse.
func (p *contentParser) parseContent(expr string) (*ContentMatch, error) {
	s := &tokenStream{expr: expr, p: p, tokens: tokenizeContent(expr)}
	if _, ok := s.next(); !ok {
		return EmptyContentMatch, nil
	}
	e, err := s.parseExpr()
	if err != nil {
		return nil, err
	}
	if tok, ok := s.next(); ok && tok != "" {
		return nil, s.err("Unexpected trailing text")
	}
	n, err := buildNFA(e)
	if err != nil {
		return nil, s.err(err.Error())
	}
	n.work = p.work
	match, err := n.dfa()
	p.work = n.work
	if err != nil {
		return nil, s.err(err.Error())
	}
	if err := checkForDeadEnds(match, s); err != nil {
		return nil, err
	}
	return match, nil
}

// tokenizeContent splits a content expression as JS
// string.split(/\s*(?=\b|\W|$)/) does (then drops an empty first and last
// token), working on UTF-16 code units like JavaScript.
func tokenizeContent(s string) []string {
	units := toUTF16(s)
	n := len(units)
	isWord := func(i int) bool {
		if i < 0 || i >= n {
			return false
		}
		c := units[i]
		return c < 0x80 && (c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
	}
	// matchAt returns the end of a match of the separator at q.
	matchAt := func(q int) (int, bool) {
		j := q
		for j < n && isJSSpace(units[j]) {
			j++
		}
		if j > q {
			return j, true // after whitespace the lookahead always holds
		}
		if q == n || !isWord(q) || !isWord(q-1) {
			return q, true
		}
		return 0, false
	}
	var tokens []string
	if n == 0 {
		return nil // the separator matches the empty string
	}
	p := 0
	for q := p; q < n; {
		e, ok := matchAt(q)
		if !ok || e == p {
			q++
			continue
		}
		tokens = append(tokens, fromUTF16(units[p:q]))
		p = e
		q = p
	}
	tokens = append(tokens, fromUTF16(units[p:]))
	if len(tokens) > 0 && tokens[len(tokens)-1] == "" {
		tokens = tokens[:len(tokens)-1]
	}
	if len(tokens) > 0 && tokens[0] == "" {
		tokens = tokens[1:]
	}
	return tokens
}

// isJSSpace reports whether the UTF-16 unit c matches JavaScript's \s.
func isJSSpace(c uint16) bool {
	switch c {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return c >= 0x2000 && c <= 0x200A
}

// toUTF16 converts s (WTF-8) to UTF-16 code units.
func toUTF16(s string) []uint16 {
	out := make([]uint16, 0, len(s))
	for i := 0; i < len(s); {
		if s[i] == 0xED && i+2 < len(s) && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
			out = append(out, uint16(decodeSurrogate(s[i:i+3])))
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			hi, lo := surrogates(r)
			out = append(out, uint16(hi), uint16(lo))
		} else {
			out = append(out, uint16(r))
		}
	}
	return out
}

// fromUTF16 converts UTF-16 code units to WTF-8.
func fromUTF16(units []uint16) string {
	var b strings.Builder
	for i := 0; i < len(units); i++ {
		c := rune(units[i])
		switch {
		case c >= 0xD800 && c < 0xDC00 && i+1 < len(units) && units[i+1] >= 0xDC00 && units[i+1] < 0xE000:
			b.WriteRune((c-0xD800)<<10 + (rune(units[i+1]) - 0xDC00) + 0x10000)
			i++
		case c >= 0xD800 && c < 0xE000:
			writeSurrogate(&b, c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// tokenStream is JS TokenStream. A position past the last token reads as
// JS undefined: next reports false, and where the JS converts it to a
// string it reads "undefined".
type tokenStream struct {
	expr   string
	p      *contentParser
	tokens []string
	pos    int
	inline int8 // 0 unknown, 1 inline, 2 block
	depth  int
}

func (s *tokenStream) next() (string, bool) {
	if s.pos < len(s.tokens) {
		return s.tokens[s.pos], true
	}
	return "", false
}

// nextString is String(stream.next).
func (s *tokenStream) nextString() string {
	if tok, ok := s.next(); ok {
		return tok
	}
	return "undefined"
}

func (s *tokenStream) eat(tok string) bool {
	if t, ok := s.next(); ok && t == tok {
		s.pos++
		return true
	}
	return false
}

func (s *tokenStream) err(msg string) error {
	return errors.New(msg + " (in content expression '" + s.expr + "')")
}

type exprKind uint8

const (
	exprChoice exprKind = iota
	exprSeq
	exprPlus
	exprStar
	exprOpt
	exprRange
	exprName
)

type expr struct {
	kind     exprKind
	exprs    []*expr // choice, seq
	sub      *expr   // plus, star, opt, range
	min, max int     // range; max -1 for unbounded
	typ      *NodeType
}

func (s *tokenStream) parseExpr() (*expr, error) {
	s.depth++
	defer func() { s.depth-- }()
	if s.depth > maxExprNesting {
		return nil, s.err("Content expression nested too deeply")
	}
	var exprs []*expr
	for {
		e, err := s.parseExprSeq()
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, e)
		if !s.eat("|") {
			break
		}
	}
	if len(exprs) == 1 {
		return exprs[0], nil
	}
	return &expr{kind: exprChoice, exprs: exprs}, nil
}

func (s *tokenStream) parseExprSeq() (*expr, error) {
	var exprs []*expr
	for {
		e, err := s.parseExprSubscript()
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, e)
		if tok, ok := s.next(); !ok || tok == "" || tok == ")" || tok == "|" {
			break
		}
	}
	if len(exprs) == 1 {
		return exprs[0], nil
	}
	return &expr{kind: exprSeq, exprs: exprs}, nil
}

func (s *tokenStream) parseExprSubscript() (*expr, error) {
	e, err := s.parseExprAtom()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case s.eat("+"):
			e = &expr{kind: exprPlus, sub: e}
		case s.eat("*"):
			e = &expr{kind: exprStar, sub: e}
		case s.eat("?"):
			e = &expr{kind: exprOpt, sub: e}
		case s.eat("{"):
			if e, err = s.parseExprRange(e); err != nil {
				return nil, err
			}
		default:
			return e, nil
		}
	}
}

// maxRangeNumber caps the numbers of a {min,max} range; anything larger
// exceeds maxNFAStates anyway.
const maxRangeNumber = 1 << 30

func (s *tokenStream) parseNum() (int, error) {
	tok := s.nextString()
	n := 0
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if c < '0' || c > '9' {
			return 0, s.err("Expected number, got '" + tok + "'")
		}
		if n < maxRangeNumber {
			n = n*10 + int(c-'0')
		}
	}
	s.pos++
	return min(n, maxRangeNumber), nil
}

func (s *tokenStream) parseExprRange(e *expr) (*expr, error) {
	lo, err := s.parseNum()
	if err != nil {
		return nil, err
	}
	hi := lo
	if s.eat(",") {
		if tok, ok := s.next(); !ok || tok != "}" {
			if hi, err = s.parseNum(); err != nil {
				return nil, err
			}
		} else {
			hi = -1
		}
	}
	if !s.eat("}") {
		return nil, s.err("Unclosed braced range")
	}
	return &expr{kind: exprRange, min: lo, max: hi, sub: e}, nil
}

// resolveName returns the node type called name or the types in the group
// name. A missing token (JS undefined) finds only a type named
// "undefined", never a group.
func (s *tokenStream) resolveName(name string, defined bool) ([]*NodeType, error) {
	if t := s.p.byName[name]; t != nil {
		return []*NodeType{t}, nil
	}
	var result []*NodeType
	if defined {
		for _, t := range s.p.order {
			if t.IsInGroup(name) {
				result = append(result, t)
			}
		}
	}
	if len(result) == 0 {
		return nil, s.err("No node type or group '" + name + "' found")
	}
	return result, nil
}

func (s *tokenStream) parseExprAtom() (*expr, error) {
	if s.eat("(") {
		e, err := s.parseExpr()
		if err != nil {
			return nil, err
		}
		if !s.eat(")") {
			return nil, s.err("Missing closing paren")
		}
		return e, nil
	}
	_, defined := s.next()
	name := s.nextString()
	if !isWordString(name) {
		return nil, s.err("Unexpected token '" + name + "'")
	}
	types, err := s.resolveName(name, defined)
	if err != nil {
		return nil, err
	}
	exprs := make([]*expr, len(types))
	for i, t := range types {
		inline := int8(2)
		if t.IsInline() {
			inline = 1
		}
		if s.inline == 0 {
			s.inline = inline
		} else if s.inline != inline {
			return nil, s.err("Mixing inline and block content")
		}
		exprs[i] = &expr{kind: exprName, typ: t}
	}
	s.pos++
	if len(exprs) == 1 {
		return exprs[0], nil
	}
	return &expr{kind: exprChoice, exprs: exprs}, nil
}

// isWordString is !/\W/.test(s).
func isWordString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// The code below compiles an expression to a nondeterministic automaton
// and that to a deterministic one, exactly as content.ts does: the order
// in which states and edges are created decides the order of the edges of
// the result, which decides what FillBefore and DefaultType pick.

// nfaEdge is an edge of the NFA; a nil term is a null edge, to is -1 until
// connected.
type nfaEdge struct {
	term *NodeType
	to   int
}

type nfa struct {
	states [][]*nfaEdge
	work   int // elementary steps so far, bounded by maxCompileWork
	// nullFrom results per state (the function is pure).
	nullMemo map[int][]int
	memoSize int
	scratch  []int
	frames   []nullFrame // nullFrom's stack, reused
	// stamp marks membership in the set being built by dfa, nullStamp in
	// the result of nullFrom: stamp[state] == epoch.
	stamp, nullStamp []uint32
	epoch, nullEpoch uint32
}

var errTooComplex = errors.New("Content expression too complex")

func buildNFA(e *expr) (*nfa, error) {
	n := &nfa{states: [][]*nfaEdge{nil}}
	out, err := n.compile(e, 0)
	if err != nil {
		return nil, err
	}
	end, err := n.node()
	if err != nil {
		return nil, err
	}
	connect(out, end)
	return n, nil
}

func (n *nfa) node() (int, error) {
	if len(n.states) >= maxNFAStates {
		return 0, errTooComplex
	}
	n.states = append(n.states, nil)
	return len(n.states) - 1, nil
}

func (n *nfa) edge(from, to int, term *NodeType) *nfaEdge {
	e := &nfaEdge{term: term, to: to}
	n.states[from] = append(n.states[from], e)
	return e
}

func connect(edges []*nfaEdge, to int) {
	for _, e := range edges {
		e.to = to
	}
}

func (n *nfa) compile(e *expr, from int) ([]*nfaEdge, error) {
	switch e.kind {
	case exprChoice:
		var out []*nfaEdge
		for _, sub := range e.exprs {
			edges, err := n.compile(sub, from)
			if err != nil {
				return nil, err
			}
			out = append(out, edges...)
		}
		return out, nil
	case exprSeq:
		for i := 0; ; i++ {
			next, err := n.compile(e.exprs[i], from)
			if err != nil {
				return nil, err
			}
			if i == len(e.exprs)-1 {
				return next, nil
			}
			if from, err = n.node(); err != nil {
				return nil, err
			}
			connect(next, from)
		}
	case exprStar:
		loop, err := n.node()
		if err != nil {
			return nil, err
		}
		n.edge(from, loop, nil)
		edges, err := n.compile(e.sub, loop)
		if err != nil {
			return nil, err
		}
		connect(edges, loop)
		return []*nfaEdge{n.edge(loop, -1, nil)}, nil
	case exprPlus:
		loop, err := n.node()
		if err != nil {
			return nil, err
		}
		edges, err := n.compile(e.sub, from)
		if err != nil {
			return nil, err
		}
		connect(edges, loop)
		if edges, err = n.compile(e.sub, loop); err != nil {
			return nil, err
		}
		connect(edges, loop)
		return []*nfaEdge{n.edge(loop, -1, nil)}, nil
	case exprOpt:
		out := []*nfaEdge{n.edge(from, -1, nil)}
		edges, err := n.compile(e.sub, from)
		if err != nil {
			return nil, err
		}
		return append(out, edges...), nil
	case exprRange:
		cur := from
		for i := 0; i < e.min; i++ {
			next, err := n.node()
			if err != nil {
				return nil, err
			}
			edges, err := n.compile(e.sub, cur)
			if err != nil {
				return nil, err
			}
			connect(edges, next)
			cur = next
		}
		if e.max == -1 {
			edges, err := n.compile(e.sub, cur)
			if err != nil {
				return nil, err
			}
			connect(edges, cur)
		} else {
			for i := e.min; i < e.max; i++ {
				next, err := n.node()
				if err != nil {
					return nil, err
				}
				n.edge(cur, next, nil)
				edges, err := n.compile(e.sub, cur)
				if err != nil {
					return nil, err
				}
				connect(edges, next)
				cur = next
			}
		}
		return []*nfaEdge{n.edge(cur, -1, nil)}, nil
	default: // exprName
		return []*nfaEdge{n.edge(from, -1, e.typ)}, nil
	}
}

// nullFrom returns the states reachable by null edges from node,
// skipping states with a single null out-edge. Like the JS it may list a
// state twice. Unlike the JS the result is not sorted (only the start
// state needs that; the other uses merge it into sets that get sorted),
// and it may be a scratch buffer that the next call overwrites. Where the
// JS recursion never ends (and JavaScript throws a stack overflow), it
// returns errStackOverflow.
func (n *nfa) nullFrom(node int) ([]int, error) {
	if r, ok := n.nullMemo[node]; ok {
		return r, nil
	}
	result := n.scratch[:0]
	n.nullEpoch++
	epoch := n.nullEpoch
	// The JS scan is recursive; this walks the same order with an
	// explicit stack. depth counts the JS call depth, chain hops included.
	stack := n.frames[:0]
	enter := func(node, depth int) error {
		for {
			if depth > maxNullFromRecs {
				return errStackOverflow
			}
			n.work++
			if n.work > maxCompileWork {
				return errTooComplex
			}
			edges := n.states[node]
			if len(edges) != 1 || edges[0].term != nil {
				break
			}
			node, depth = edges[0].to, depth+1
		}
		result = append(result, node)
		n.nullStamp[node] = epoch
		stack = append(stack, nullFrame{node: node, depth: depth})
		return nil
	}
	if err := enter(node, 0); err != nil {
		return nil, err
	}
	defer func() { n.frames = stack[:0] }()
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		edges := n.states[top.node]
		if top.edge >= len(edges) {
			stack = stack[:len(stack)-1]
			continue
		}
		e := edges[top.edge]
		top.edge++
		if e.term == nil && n.nullStamp[e.to] != epoch {
			if err := enter(e.to, top.depth+1); err != nil {
				return nil, err
			}
		}
	}
	if n.memoSize+len(result) <= maxNullFromMemo {
		n.memoSize += len(result)
		n.nullMemo[node] = slices.Clone(result)
	}
	n.scratch = result
	return result, nil
}

// nullFrame is a JS scan call in progress: the state, the next edge to
// look at, and the call depth.
type nullFrame struct{ node, edge, depth int }

// maxNullFromMemo bounds the memory held by memoized nullFrom results.
const maxNullFromMemo = 1 << 20

func stateKey(states []int) string {
	var b []byte
	for i, s := range states {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(s), 10)
	}
	return string(b)
}

// dfa compiles the NFA into ContentMatch states (JS dfa).
func (n *nfa) dfa() (*ContentMatch, error) {
	n.stamp = make([]uint32, len(n.states))
	n.nullStamp = make([]uint32, len(n.states))
	n.nullMemo = make(map[int][]int)
	for _, edges := range n.states {
		for _, e := range edges {
			if e.to < 0 || e.to >= len(n.states) {
				return nil, errTooComplex // an unconnected edge; cannot happen
			}
		}
	}
	labeled := make(map[string]*ContentMatch)
	final := len(n.states) - 1
	var explore func(states []int) (*ContentMatch, error)
	explore = func(states []int) (*ContentMatch, error) {
		// The JS collects the target sets of all terms in one pass; doing
		// it term by term (in order of first appearance) gives the same
		// sets in the same order, and needs only one membership stamp.
		var terms []*NodeType
		for _, node := range states {
			for _, e := range n.states[node] {
				if e.term != nil && !slices.Contains(terms, e.term) {
					terms = append(terms, e.term)
				}
			}
		}
		sets := make([][]int, len(terms))
		for i, term := range terms {
			var set []int
			n.epoch++
			epoch := n.epoch
			for _, node := range states {
				for _, e := range n.states[node] {
					if e.term != term {
						continue
					}
					reach, err := n.nullFrom(e.to)
					if err != nil {
						return nil, err
					}
					n.work += len(reach)
					if n.work > maxCompileWork {
						return nil, errTooComplex
					}
					for _, r := range reach { // reach is used up before the next nullFrom
						if n.stamp[r] != epoch {
							n.stamp[r] = epoch
							set = append(set, r)
						}
					}
				}
			}
			sets[i] = set
		}
		if len(labeled) >= maxDFAStates {
			return nil, errTooComplex
		}
		state := &ContentMatch{ValidEnd: slices.Contains(states, final)}
		labeled[stateKey(states)] = state
		for i, set := range sets {
			n.work += len(set) * bits.Len(uint(len(set))) // sorting
			slices.SortFunc(set, func(a, b int) int { return b - a })
			next := labeled[stateKey(set)]
			if next == nil {
				var err error
				if next, err = explore(set); err != nil {
					return nil, err
				}
			}
			state.next = append(state.next, MatchEdge{Type: terms[i], Next: next})
		}
		return state, nil
	}
	start, err := n.nullFrom(0)
	if err != nil {
		return nil, err
	}
	start = slices.Clone(start)
	slices.SortFunc(start, func(a, b int) int { return b - a })
	return explore(start)
}

func checkForDeadEnds(match *ContentMatch, s *tokenStream) error {
	work := []*ContentMatch{match}
	inWork := map[*ContentMatch]bool{match: true}
	for i := 0; i < len(work); i++ {
		state := work[i]
		dead := !state.ValidEnd
		nodes := make([]string, 0, len(state.next))
		for _, e := range state.next {
			nodes = append(nodes, e.Type.Name)
			if dead && !(e.Type.IsText || e.Type.HasRequiredAttrs()) {
				dead = false
			}
			if !inWork[e.Next] {
				inWork[e.Next] = true
				work = append(work, e.Next)
			}
		}
		if dead {
			return s.err("Only non-generatable nodes (" + strings.Join(nodes, ", ") + ") in a required position (see https://prosemirror.net/docs/guide/#generatable)")
		}
	}
	return nil
}
