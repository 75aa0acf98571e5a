// Package schemas holds pmauthority's built-in schema specs, embedded as
// JSON: "text" (a doc of plain text, the prosemirror-v8-perf schema),
// "basic" (prosemirror-schema-basic with prosemirror-schema-list's nodes,
// as the ProseMirror collab demo uses) and "suggest" (basic with the
// suggestion marks of @handlewithcare/prosemirror-suggest-changes,
// insertion, deletion and modification, allowed on the inline content and
// on the doc's blocks, as that package's README builds it; package suggest
// reverts and applies them).
package schemas

import (
	"embed"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/pmauthority/pmauthority/model"
)

//go:embed *.json
var specs embed.FS

var (
	mu     sync.Mutex
	loaded = map[string]*model.Schema{}
)

// Names lists the built-in schema names, sorted.
func Names() []string {
	entries, _ := specs.ReadDir(".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	sort.Strings(names)
	return names
}

// Spec returns the JSON spec of the built-in schema name.
func Spec(name string) ([]byte, error) {
	data, err := specs.ReadFile(name + ".json")
	if err != nil {
		return nil, fmt.Errorf("unknown built-in schema %q (have %s)", name, strings.Join(Names(), ", "))
	}
	return data, nil
}

// Get returns the built-in schema name, built once and shared (schemas are
// immutable and safe for concurrent use).
func Get(name string) (*model.Schema, error) {
	mu.Lock()
	defer mu.Unlock()
	if s, ok := loaded[name]; ok {
		return s, nil
	}
	data, err := Spec(name)
	if err != nil {
		return nil, err
	}
	s, err := model.LoadSchema(data)
	if err != nil {
		return nil, fmt.Errorf("built-in schema %s: %w", name, err)
	}
	loaded[name] = s
	return s, nil
}
