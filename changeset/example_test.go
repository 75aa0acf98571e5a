package changeset_test

import (
	"encoding/json"
	"fmt"

	"github.com/pmauthority/pmauthority/changeset"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

func ExampleChangeSet_AddSteps() {
	schema, _ := schemas.Get("basic")
	doc, _ := schema.NodeFromJSON([]byte(`{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Hello world"}]}]}`))
	set := changeset.Create(doc, changeset.Options[string]{})
	var maps []*transform.StepMap
	for _, data := range []string{
		`{"stepType":"replace","from":7,"to":12,"slice":{"content":[{"type":"text","text":"there"}]}}`, // alice
		`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"Oh, "}]}}`,   // bob
	} {
		step, _ := transform.StepFromJSON(schema, []byte(data))
		doc, _ = step.Apply(doc)
		maps = append(maps, step.GetMap())
	}
	set, err := set.AddSteps(doc, maps, []string{"alice", "bob"})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := json.Marshal(set.Changes())
	fmt.Println(string(out))
	// Output:
	// [{"fromA":1,"toA":1,"fromB":1,"toB":5,"deleted":[],"inserted":[{"length":4,"data":"bob"}]},{"fromA":7,"toA":12,"fromB":11,"toB":16,"deleted":[{"length":5,"data":"alice"}],"inserted":[{"length":5,"data":"alice"}]}]
}
