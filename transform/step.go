package transform

import (
	"errors"
	"fmt"
	"sync"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
)

// Step is an atomic change to a document. A step generally applies only to
// the document it was made for, since the positions in it make sense only
// there.
//
// The built-in steps are [ReplaceStep], [ReplaceAroundStep], [AddMarkStep],
// [RemoveMarkStep], [MarkSetStep], [AddNodeMarkStep], [RemoveNodeMarkStep],
// [AttrStep] and [DocAttrStep]. Other kinds can be added with [Register].
type Step interface {
	// Apply applies the step to doc and returns the new document. Both
	// ways a step can fail in JavaScript, a failed StepResult and a thrown
	// exception, are an error here, with the JavaScript message.
	Apply(doc *model.Node) (*model.Node, error)

	// GetMap returns the step map that describes the changes made by the
	// step, which maps positions in the old document to the new one.
	GetMap() *StepMap

	// Invert returns a step that undoes this one. doc is the document as
	// it was before the step. It fails only when the step's positions do
	// not fit doc.
	Invert(doc *model.Node) (Step, error)

	// Map returns the step with its positions mapped through m, or nil
	// when the mapping deleted the step's range.
	Map(m Mappable) Step

	// Merge returns a step that has the effect of this step followed by
	// other, when there is one.
	Merge(other Step) (Step, bool)

	// AppendJSON appends the step's JSON form, byte-identical to
	// JSON.stringify(step.toJSON()) in JavaScript. It includes the step's
	// ID under "stepType".
	AppendJSON(buf []byte) []byte
}

// FromJSONFunc decodes a step of one kind from its JSON form. raw is the
// whole step object, "stepType" included.
type FromJSONFunc func(schema *model.Schema, raw []byte) (Step, error)

// registry holds the step kinds added with Register.
var registry struct {
	sync.RWMutex
	kinds map[string]FromJSONFunc
}

// Register makes StepFromJSON decode steps whose "stepType" is id with
// fromJSON. It fails when id is taken (by a built-in step or an earlier
// Register) with the message of Step.jsonID in JavaScript. Steps of a
// registered kind must write id under "stepType" in their AppendJSON.
func Register(id string, fromJSON FromJSONFunc) error {
	if fromJSON == nil {
		return errors.New("transform: Register with a nil FromJSONFunc")
	}
	registry.Lock()
	defer registry.Unlock()
	if _, ok := registry.kinds[id]; ok || isBuiltinStepType(id) {
		return fmt.Errorf("Duplicate use of step JSON ID %s", id)
	}
	if registry.kinds == nil {
		registry.kinds = map[string]FromJSONFunc{}
	}
	registry.kinds[id] = fromJSON
	return nil
}

// StepFromJSON decodes a step from its JSON form, as Step.fromJSON does
// after JSON.parse. It dispatches on "stepType": "Invalid input for
// Step.fromJSON" when data is not an object with a truthy stepType, "No
// step type X defined" when no kind has the ID X. Like JavaScript, which
// looks the kind up by String(stepType), it converts a stepType that is
// not a string: ["replace"] names the replace step.
//
// Malformed JSON gives a *jsonscan.SyntaxError from internal/jsonscan
// (it has an Offset); JSON that prosemirror-transform or
// prosemirror-model rejects gives a *model.JSONError whose Msg is the
// JavaScript message and whose Path names the field.
func StepFromJSON(schema *model.Schema, data []byte) (Step, error) {
	var d jsonscan.Decoder
	d.Reset(data)
	kind, err := d.Peek()
	if err != nil {
		return nil, err
	}
	if kind != jsonscan.Object {
		if err := d.Skip(); err != nil {
			return nil, err
		}
		if err := d.End(); err != nil {
			return nil, err
		}
		return nil, invalidStep("")
	}
	var obj jsonObject
	if err := obj.scan(schema, &d); err != nil {
		return nil, err
	}
	if err := d.End(); err != nil {
		return nil, err
	}
	return stepFromObject(schema, &obj)
}

// stepFromObject is StepFromJSON for a scanned object.
func stepFromObject(schema *model.Schema, obj *jsonObject) (Step, error) {
	if !obj.truthy(fStepType) {
		return nil, invalidStep("stepType")
	}
	switch obj.stepType {
	case "replace":
		return replaceStepFromJSON(obj)
	case "replaceAround":
		return replaceAroundStepFromJSON(obj)
	case "addMark":
		return addMarkStepFromJSON(schema, obj)
	case "removeMark":
		return removeMarkStepFromJSON(schema, obj)
	case "markSet":
		return markSetStepFromJSON(schema, obj)
	case "addNodeMark":
		return addNodeMarkStepFromJSON(schema, obj)
	case "removeNodeMark":
		return removeNodeMarkStepFromJSON(schema, obj)
	case "attr":
		return attrStepFromJSON(obj)
	case "docAttr":
		return docAttrStepFromJSON(obj)
	}
	registry.RLock()
	fromJSON := registry.kinds[obj.stepType]
	registry.RUnlock()
	if fromJSON == nil {
		return nil, &model.JSONError{Msg: "No step type " + obj.stepType + " defined", Path: "stepType"}
	}
	return fromJSON(schema, obj.data)
}

// nodeAt is doc.nodeAt(pos) with the RangeError JavaScript throws for a
// position outside the document (Go's NodeAt reports no error).
func nodeAt(doc *model.Node, pos int) (*model.Node, error) {
	if _, _, err := doc.Content.FindIndex(pos); err != nil {
		return nil, err
	}
	return doc.NodeAt(pos), nil
}

// errTextCreate is what NodeType.create throws for the text type, which
// attribute and node mark steps run into when aimed at a text node.
var errTextCreate = errors.New("NodeType.create can't construct text nodes")

// replaceNode replaces the node at pos (whose opening token is at pos)
// with updated, keeping the old node's content: updated is inserted as a
// slice open at its end, as the attribute and node mark steps do.
func replaceNode(doc *model.Node, pos int, old, updated *model.Node) (*model.Node, error) {
	openEnd := 1
	if old.IsLeaf() {
		openEnd = 0
	}
	return doc.Replace(pos, pos+1, model.NewSlice(model.FragmentOf(updated), 0, openEnd))
}
