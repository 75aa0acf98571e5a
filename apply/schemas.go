package apply

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
)

// Schemas resolves the schema names that requests give: the names of
// Registry, then (with Files) paths of spec files. Set its fields before
// first use and do not change them after: Get is then safe for concurrent
// use.
type Schemas struct {
	// Registry holds the schemas known by name and the default; nil
	// means the built-ins, with "basic" as the default.
	Registry *schemas.Registry
	// Default, when set, names the schema of requests that name none,
	// instead of Registry's default; with Files it may be the path of a
	// spec file.
	Default string
	// Files lets any other name be the path of a JSON spec file, loaded
	// once. Only for trusted input (the command line): never set it where
	// names come from the network.
	Files bool

	mu    sync.Mutex
	files map[string]*model.Schema
}

// Get returns the schema for name ("" means the default).
func (s *Schemas) Get(name string) (*model.Schema, error) {
	if name == "" {
		name = s.defaultName()
	}
	if sc, ok := s.Registry.Lookup(name); ok {
		return sc, nil
	}
	return s.get(name)
}

// lookup is Get for a name held in bytes, without allocating for names
// in Registry.
func (s *Schemas) lookup(name []byte) (*model.Schema, error) {
	if len(name) == 0 {
		return s.Get("")
	}
	if sc, ok := s.Registry.LookupBytes(name); ok {
		return sc, nil
	}
	return s.get(string(name))
}

// defaultName returns the name of the schema of requests that name none.
func (s *Schemas) defaultName() string {
	if s.Default != "" {
		return s.Default
	}
	return s.Registry.Default()
}

// get resolves a name that is not in Registry.
func (s *Schemas) get(name string) (*model.Schema, error) {
	if !s.Files {
		return s.Registry.Get(name)
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
