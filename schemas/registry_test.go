package schemas

import (
	"slices"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/model"
)

func mustSchema(t *testing.T, spec string) *model.Schema {
	t.Helper()
	sc, err := model.LoadSchema([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestRegistry(t *testing.T) {
	notes := mustSchema(t, `{"nodes": {"doc": {"content": "text*"}, "text": {}}}`)
	r, err := NewRegistry(map[string]*model.Schema{"notes": notes}, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Names(), []string{"basic", "notes", "suggest", "text"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if r.Default() != "notes" {
		t.Errorf("Default() = %q", r.Default())
	}
	basic, _ := Get("basic")
	for _, c := range []struct {
		name string
		want *model.Schema
	}{{"", notes}, {"notes", notes}, {"basic", basic}} {
		if sc, err := r.Get(c.name); err != nil || sc != c.want {
			t.Errorf("Get(%q) = %p, %v; want %p", c.name, sc, err, c.want)
		}
	}
	if sc, ok := r.Lookup("notes"); !ok || sc != notes {
		t.Errorf(`Lookup("notes") = %p, %v`, sc, ok)
	}
	if _, ok := r.Lookup(""); ok {
		t.Error(`Lookup("") found a schema`)
	}
	if sc, ok := r.LookupBytes([]byte("basic")); !ok || sc != basic {
		t.Errorf(`LookupBytes("basic") = %p, %v`, sc, ok)
	}
	if n := testing.AllocsPerRun(100, func() { r.LookupBytes([]byte("notes")) }); n != 0 {
		t.Errorf("LookupBytes allocates %v times", n)
	}
	_, err = r.Get("nope")
	if err == nil || err.Error() != `unknown schema "nope" (have basic, notes, suggest, text)` {
		t.Errorf(`Get("nope") = %v`, err)
	}
	_, err = r.Get(strings.Repeat("x", 150))
	if want := `unknown schema "` + strings.Repeat("x", 100) + `…" (have basic, notes, suggest, text)`; err == nil || err.Error() != want {
		t.Errorf("Get(a long name) = %v, want %s", err, want)
	}
	names := r.Names()
	names[0] = "changed"
	if r.Names()[0] != "basic" {
		t.Error("Names returns the registry's own slice")
	}
}

func TestRegistryZero(t *testing.T) {
	basic, _ := Get("basic")
	for _, r := range []*Registry{nil, {}} {
		if sc, err := r.Get(""); err != nil || sc != basic {
			t.Errorf("%#v: Get(\"\") = %p, %v", r, sc, err)
		}
		if _, ok := r.Lookup("text"); !ok {
			t.Errorf("%#v: no text schema", r)
		}
		if _, ok := r.LookupBytes([]byte("nope")); ok {
			t.Errorf("%#v: found nope", r)
		}
		if got := r.Names(); !slices.Equal(got, []string{"basic", "suggest", "text"}) {
			t.Errorf("%#v: Names() = %v", r, got)
		}
		if _, err := r.Get("nope"); err == nil || err.Error() != `unknown schema "nope" (have basic, suggest, text)` {
			t.Errorf("%#v: Get(nope) = %v", r, err)
		}
	}
	r, err := NewRegistry(nil, "")
	if err != nil || r.Default() != "basic" {
		t.Fatalf(`NewRegistry(nil, "") = %v, %v`, r, err)
	}
}

func TestNewRegistryRefuses(t *testing.T) {
	sc := mustSchema(t, `{"nodes": {"doc": {"content": "text*"}, "text": {}}}`)
	// A schema built with NewSchema, as JavaScript builds it.
	spec, err := model.ParseSchemaSpec([]byte(`{"nodes": {"doc": {"content": "a"}, "a": {"content": "a"}, "text": {}}}`))
	if err != nil {
		t.Fatal(err)
	}
	loop, err := model.NewSchema(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		named map[string]*model.Schema
		def   string
		want  string
	}{
		{map[string]*model.Schema{"basic": sc}, "", `schema name "basic" is taken by a built-in schema`},
		{map[string]*model.Schema{"": sc}, "", `schema "": empty name or nil schema`},
		{map[string]*model.Schema{"x": nil}, "", `schema "x": empty name or nil schema`},
		{map[string]*model.Schema{"x": sc}, "y", `default schema "y" is not one of [basic suggest text x]`},
		{map[string]*model.Schema{"loop": loop}, "", `schema "loop": Unsatisfiable schema: no finite document can hold node types doc (content "a"), a (content "a"): the content of each requires a node of one of these types`},
	} {
		r, err := NewRegistry(c.named, c.def)
		if err == nil || err.Error() != c.want {
			t.Errorf("NewRegistry(%v, %q) = %v, %v; want %s", c.named, c.def, r, err, c.want)
		}
	}
}
