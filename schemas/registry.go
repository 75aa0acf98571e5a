package schemas

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pmauthority/pmauthority/model"
)

// Registry is the set of schemas a server knows by name: the built-ins
// and the schemas registered under other names, with the name of the
// default one. It is immutable and safe for concurrent use. The zero
// Registry (and a nil *Registry) knows the built-ins, with "basic" as the
// default.
type Registry struct {
	byName map[string]*model.Schema // the built-ins and the registered schemas
	names  []string                 // the keys of byName, sorted
	def    string
}

// basicName is the default schema of a Registry that names none.
const basicName = "basic"

// NewRegistry returns a Registry of the built-ins and named, whose
// default is defaultName ("" means "basic"). It fails for an empty name, a
// nil schema, a schema no document can satisfy (model.CheckSatisfiable:
// such a schema, built with model.NewSchema, would fail at the first
// document creation), a name taken by a built-in, or a default that is
// neither a built-in nor in named.
func NewRegistry(named map[string]*model.Schema, defaultName string) (*Registry, error) {
	r := &Registry{byName: make(map[string]*model.Schema, len(named)+2)}
	for _, name := range Names() {
		sc, err := Get(name)
		if err != nil {
			return nil, err
		}
		r.byName[name] = sc
	}
	for _, name := range slices.Sorted(maps.Keys(named)) {
		sc := named[name]
		if _, ok := r.byName[name]; ok {
			return nil, fmt.Errorf("schema name %q is taken by a built-in schema", name)
		}
		if name == "" || sc == nil {
			return nil, fmt.Errorf("schema %q: empty name or nil schema", name)
		}
		if err := sc.CheckSatisfiable(); err != nil {
			return nil, fmt.Errorf("schema %q: %w", name, err)
		}
		r.byName[name] = sc
	}
	r.names = slices.Sorted(maps.Keys(r.byName))
	r.def = defaultName
	if r.def == "" {
		r.def = basicName
	}
	if _, ok := r.byName[r.def]; !ok {
		return nil, fmt.Errorf("default schema %q is not one of %v", r.def, r.names)
	}
	return r, nil
}

// Default returns the name of the default schema.
func (r *Registry) Default() string {
	if r == nil || r.def == "" {
		return basicName
	}
	return r.def
}

// Names returns the names of the schemas r knows, sorted.
func (r *Registry) Names() []string {
	if r == nil || r.byName == nil {
		return Names()
	}
	return slices.Clone(r.names)
}

// Lookup returns the schema of name, and whether there is one. Unlike
// Get, it does not resolve "" to the default. It has the signature of
// collab.Config.Schemas.
func (r *Registry) Lookup(name string) (*model.Schema, bool) {
	if r == nil || r.byName == nil {
		sc, err := Get(name)
		return sc, err == nil
	}
	sc, ok := r.byName[name]
	return sc, ok
}

// LookupBytes is Lookup for a name held in bytes, without allocating.
func (r *Registry) LookupBytes(name []byte) (*model.Schema, bool) {
	if r == nil || r.byName == nil {
		return r.Lookup(string(name))
	}
	sc, ok := r.byName[string(name)]
	return sc, ok
}

// Get returns the schema of name ("" means the default). An unknown name
// fails with an error listing the names r knows.
func (r *Registry) Get(name string) (*model.Schema, error) {
	if name == "" {
		name = r.Default()
	}
	if sc, ok := r.Lookup(name); ok {
		return sc, nil
	}
	return nil, r.unknown(name)
}

// unknown returns the error of Get for a name that r does not know: it
// quotes the name (cut after 100 bytes) and lists the names r knows.
func (r *Registry) unknown(name string) error {
	if len(name) > maxQuotedName {
		name = name[:maxQuotedName] + "…"
	}
	return fmt.Errorf("unknown schema %q (have %s)", name, strings.Join(r.Names(), ", "))
}

// maxQuotedName is how many bytes of an unknown name an error quotes.
const maxQuotedName = 100
