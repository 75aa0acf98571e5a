package apply

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
)

// Schemas resolves the schema names that requests give: the names in
// Named, then the built-ins, then (with Files) paths of spec files. Set
// its fields before first use and do not change them after: Get is then
// safe for concurrent use.
type Schemas struct {
	// Default is used when a request names no schema.
	Default string
	// Named are schemas registered by name (e.g. serve --schema
	// NAME=FILE); they take precedence over the built-ins.
	Named map[string]*model.Schema
	// Files lets any other name be the path of a JSON spec file, loaded
	// once. Only for trusted input (the command line): never set it where
	// names come from the network.
	Files bool

	mu    sync.Mutex
	files map[string]*model.Schema
}

// Get returns the schema for name ("" means Default).
func (s *Schemas) Get(name string) (*model.Schema, error) {
	if name == "" {
		name = s.Default
	}
	if sc, ok := s.Named[name]; ok {
		return sc, nil
	}
	return s.get(name)
}

// lookup is Get for a name held in bytes, without allocating for names
// in Named.
func (s *Schemas) lookup(name []byte) (*model.Schema, error) {
	if len(name) == 0 {
		return s.Get("")
	}
	if sc, ok := s.Named[string(name)]; ok {
		return sc, nil
	}
	return s.get(string(name))
}

// get resolves a name that is not in Named.
func (s *Schemas) get(name string) (*model.Schema, error) {
	if sc, err := schemas.Get(name); err == nil {
		return sc, nil
	}
	if !s.Files {
		if len(name) > 100 {
			name = name[:100] + "…"
		}
		return nil, fmt.Errorf("unknown schema %q (have %s)", name, strings.Join(s.names(), ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc, ok := s.files[name]; ok {
		return sc, nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("schema %q is neither a built-in (%s) nor a readable spec file", name, strings.Join(schemas.Names(), ", "))
	}
	sc, err := model.LoadSchema(data)
	if err != nil {
		return nil, fmt.Errorf("schema file %s: %w", name, err)
	}
	if s.files == nil {
		s.files = map[string]*model.Schema{}
	}
	s.files[name] = sc
	return sc, nil
}

// names returns the names Get knows without reading files, sorted.
func (s *Schemas) names() []string {
	names := schemas.Names()
	for name := range s.Named {
		if _, err := schemas.Spec(name); err != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}
