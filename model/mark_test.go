package model

import "testing"

// customMarkSchema is the custom schema of prosemirror-model's test-mark.
func customMarkSchema(t testing.TB) *Schema {
	t.Helper()
	s, err := LoadSchema([]byte(`{
		"nodes": {"doc": {"content": "paragraph+"}, "paragraph": {"content": "text*"}, "text": {}},
		"marks": {
			"remark": {"attrs": {"id": {}}, "excludes": "", "inclusive": false},
			"user": {"attrs": {"id": {}}, "excludes": "_"},
			"strong": {"excludes": "em-group"},
			"em": {"group": "em-group"}
		}}`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMarks(t *testing.T) {
	s := testBasicSchema(t)
	mk := func(s *Schema, name string, attrs Attrs) *Mark {
		m, err := s.Mark(name, attrs)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	em, strong, code := mk(s, "em", nil), mk(s, "strong", nil), mk(s, "code", nil)
	link := func(href string, title any) *Mark { return mk(s, "link", Attrs{{"href", href}, {"title", title}}) }
	set := func(ms ...*Mark) []*Mark { return ms }

	sameSet := []struct {
		a, b []*Mark
		want bool
	}{
		{set(), set(), true},
		{set(em, strong), set(em, strong), true},
		{set(em, strong), set(em, code), false},
		{set(em, strong), set(em, strong, code), false},
		{set(link("http://foo", nil), code), set(link("http://foo", nil), code), true},
		{set(link("http://foo", nil), code), set(link("http://bar", nil), code), false},
	}
	for i, c := range sameSet {
		if got := SameMarkSet(c.a, c.b); got != c.want {
			t.Errorf("sameSet %d: %v", i, got)
		}
	}
	if !link("http://foo", nil).Eq(link("http://foo", nil)) || link("http://foo", nil).Eq(link("http://bar", nil)) ||
		link("http://foo", "A").Eq(link("http://foo", "B")) {
		t.Errorf("Eq of links")
	}

	cs := customMarkSchema(t)
	remark1, remark2 := mk(cs, "remark", Attrs{{"id", 1.0}}), mk(cs, "remark", Attrs{{"id", 2.0}})
	user1, user2 := mk(cs, "user", Attrs{{"id", 1.0}}), mk(cs, "user", Attrs{{"id", 2.0}})
	customEm, customStrong := mk(cs, "em", nil), mk(cs, "strong", nil)

	addToSet := []struct {
		name      string
		mark      *Mark
		set, want []*Mark
	}{
		{"can add to the empty set", em, set(), set(em)},
		{"is a no-op when the added thing is in set", em, set(em), set(em)},
		{"adds marks with lower rank before others", em, set(strong), set(em, strong)},
		{"adds marks with higher rank after others", strong, set(em), set(em, strong)},
		{"replaces different marks with new attributes", link("http://bar", nil), set(link("http://foo", nil), em),
			set(link("http://bar", nil), em)},
		{"does nothing when adding an existing link", link("http://foo", nil), set(em, link("http://foo", nil)),
			set(em, link("http://foo", nil))},
		{"puts code marks at the end", code, set(em, strong, link("http://foo", nil)), set(em, strong, link("http://foo", nil), code)},
		{"puts marks with middle rank in the middle", strong, set(em, code), set(em, strong, code)},
		{"allows nonexclusive instances of marks with the same type", remark2, set(remark1), set(remark1, remark2)},
		{"doesn't duplicate identical instances of nonexclusive marks", remark1, set(remark1), set(remark1)},
		{"clears all others when adding a globally-excluding mark", user1, set(remark1, customEm), set(user1)},
		{"does not allow adding another mark to a globally-excluding mark", customEm, set(user1), set(user1)},
		{"does overwrite a globally-excluding mark when adding another instance", user2, set(user1), set(user2)},
		{"doesn't add anything when another mark excludes the added mark", customEm, set(remark1, customStrong),
			set(remark1, customStrong)},
		{"remove excluded marks when adding a mark", customStrong, set(remark1, customEm), set(remark1, customStrong)},
	}
	for _, c := range addToSet {
		orig := append([]*Mark(nil), c.set...)
		if got := c.mark.AddToSet(c.set); !SameMarkSet(got, c.want) {
			t.Errorf("%s: got %d marks", c.name, len(got))
		}
		if !SameMarkSet(orig, c.set) {
			t.Errorf("%s: input set modified", c.name)
		}
	}
	// AddToSet returns the same slice when nothing changes.
	in := set(em, strong)
	if out := em.AddToSet(in); &out[0] != &in[0] {
		t.Errorf("AddToSet should return the set itself when the mark is in it")
	}

	removeFromSet := []struct {
		mark      *Mark
		set, want []*Mark
	}{
		{em, set(), set()},
		{em, set(em), set()},
		{strong, set(em), set(em)},
		{link("http://foo", nil), set(link("http://foo", nil)), set()},
		{link("http://foo", "title"), set(link("http://foo", nil)), set(link("http://foo", nil))},
		{strong, set(em, strong, code), set(em, code)},
	}
	for i, c := range removeFromSet {
		if got := c.mark.RemoveFromSet(c.set); !SameMarkSet(got, c.want) {
			t.Errorf("removeFromSet %d: got %d marks", i, len(got))
		}
	}
	if !em.IsInSet(set(strong, em)) || code.IsInSet(set(strong, em)) {
		t.Errorf("IsInSet")
	}

	// MarkSetFrom sorts stably by rank and copies.
	l1, l2 := link("a", nil), link("b", nil)
	in = set(code, l2, em, l1)
	got := MarkSetFrom(in)
	if !SameMarkSet(got, set(l2, l1, em, code)) || in[0] != code {
		t.Errorf("MarkSetFrom: %v", got)
	}
	if MarkSetFrom(nil) != nil || MarkSetFrom(set()) != nil {
		t.Errorf("MarkSetFrom(empty) should be nil")
	}
}
