package model

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnsatisfiable is wrapped by the errors of CheckSatisfiable.
var ErrUnsatisfiable = errors.New("Unsatisfiable schema")

// CheckSatisfiable returns an error wrapping ErrUnsatisfiable, naming the
// node types, when some node type of s can never be complete (its content
// requires, however it is completed, a node of its own type or of another
// such type: "doc: a", "a: a"), or when the top node type cannot be
// created empty (the document a collaboration server starts from).
// prosemirror-model builds such schemas and fails only when they are used
// (createAndFill overflows the stack or reads null), and so does
// NewSchema; LoadSchema and schemas.NewRegistry refuse them, so that a
// server does not start with a schema it cannot create a document of.
func (s *Schema) CheckSatisfiable() error {
	// A type is possible when its content can reach a valid end through
	// nodes of possible types; text is, and so is every leaf. Attributes
	// do not matter (a document gives them), nor do marks.
	// A type is checked again only when a type of its content becomes
	// possible, so that a long chain of types is not quadratic.
	possible := map[*NodeType]bool{s.textType: true}
	users := map[*NodeType][]*NodeType{}
	var work []*NodeType
	for _, t := range s.Nodes {
		if t.IsText {
			continue
		}
		for _, u := range t.ContentMatch.edgeTypes() {
			users[u] = append(users[u], t)
		}
		if t.ContentMatch.reachesEnd(possible) {
			possible[t] = true
			work = append(work, t)
		}
	}
	work = append(work, s.textType)
	for len(work) > 0 {
		u := work[len(work)-1]
		work = work[:len(work)-1]
		for _, t := range users[u] {
			if !possible[t] && t.ContentMatch.reachesEnd(possible) {
				possible[t] = true
				work = append(work, t)
			}
		}
	}
	var stuck []string
	for _, t := range s.Nodes {
		if !possible[t] {
			stuck = append(stuck, fmt.Sprintf("%s (content %q)", t.Name, t.Spec.Content))
		}
	}
	switch len(stuck) {
	case 0:
	case 1:
		return fmt.Errorf("%w: no finite document can hold node type %s: its content requires a node of its own type",
			ErrUnsatisfiable, stuck[0])
	default:
		return fmt.Errorf("%w: no finite document can hold node types %s: the content of each requires a node of one of these types",
			ErrUnsatisfiable, strings.Join(stuck, ", "))
	}
	top := s.TopNodeType
	doc, err := top.CreateAndFill(nil, Fragment{}, nil)
	if err == nil && doc == nil {
		err = errors.New("its content cannot be completed with generatable nodes")
	}
	if err != nil {
		return fmt.Errorf("%w: the top node type %s cannot be created empty (createAndFill: %w)", ErrUnsatisfiable, top.Name, err)
	}
	return nil
}

// edgeTypes returns the node types of the edges of the automaton that
// starts at c, each once.
func (c *ContentMatch) edgeTypes() []*NodeType {
	seen := map[*ContentMatch]bool{c: true}
	var types []*NodeType
	have := map[*NodeType]bool{}
	work := []*ContentMatch{c}
	for len(work) > 0 {
		m := work[len(work)-1]
		work = work[:len(work)-1]
		for _, e := range m.next {
			if !have[e.Type] {
				have[e.Type] = true
				types = append(types, e.Type)
			}
			if !seen[e.Next] {
				seen[e.Next] = true
				work = append(work, e.Next)
			}
		}
	}
	return types
}

// reachesEnd reports whether some path from c through edges whose types
// are in ok ends in a valid end.
func (c *ContentMatch) reachesEnd(ok map[*NodeType]bool) bool {
	seen := map[*ContentMatch]bool{c: true}
	work := []*ContentMatch{c}
	for len(work) > 0 {
		m := work[len(work)-1]
		work = work[:len(work)-1]
		if m.ValidEnd {
			return true
		}
		for _, e := range m.next {
			if ok[e.Type] && !seen[e.Next] {
				seen[e.Next] = true
				work = append(work, e.Next)
			}
		}
	}
	return false
}
