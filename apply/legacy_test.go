package apply

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/pmauthority/pmauthority/transform"
)

// legacyDo is the first implementation of this package (encoding/json,
// every step decoded before any is applied), kept as the reference of the
// differential test: on requests whose steps all decode, the answers must
// be identical.
func legacyDo(data []byte, reg *Schemas) ([]byte, *Failure) {
	var req struct {
		Doc       json.RawMessage   `json:"doc"`
		Steps     []json.RawMessage `json:"steps"`
		Schema    string            `json:"schema"`
		Positions []float64         `json:"positions"`
	}
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, &Failure{Step: -1, Message: "invalid request: " + err.Error()}
	}
	schema, err := reg.Get(req.Schema)
	if err != nil {
		return nil, &Failure{Step: -1, Message: err.Error()}
	}
	if len(req.Doc) == 0 {
		return nil, &Failure{Step: -1, Message: `invalid request: missing "doc"`}
	}
	doc, err := schema.NodeFromJSON(req.Doc)
	if err != nil {
		return nil, &Failure{Step: -1, Message: "invalid doc: " + err.Error()}
	}
	steps := make([]transform.Step, len(req.Steps))
	for i, raw := range req.Steps {
		st, err := transform.StepFromJSON(schema, raw)
		if err != nil {
			return nil, &Failure{Step: i, Message: err.Error()}
		}
		steps[i] = st
	}
	var inverted []transform.Step
	if req.Positions != nil {
		inverted = make([]transform.Step, 0, len(steps))
	}
	cur := doc
	for i, st := range steps {
		next, err := st.Apply(cur)
		if err != nil {
			return nil, &Failure{Step: i, Message: err.Error()}
		}
		if inverted != nil {
			inv, err := st.Invert(cur)
			if err != nil {
				return nil, &Failure{Step: i, Message: "invert: " + err.Error()}
			}
			inverted = append(inverted, inv)
		}
		cur = next
	}
	buf := append([]byte(nil), `{"doc":`...)
	buf = cur.AppendJSON(buf)
	if req.Positions != nil {
		positions := make([]int, len(req.Positions))
		for i, p := range req.Positions {
			if p != math.Trunc(p) || p < 0 || p > math.MaxInt32 {
				return nil, &Failure{Step: -1, Message: fmt.Sprintf("positions[%d]: %v is not a non-negative integer", i, p)}
			}
			positions[i] = int(p)
		}
		mapping := transform.NewMapping(nil)
		for _, st := range steps {
			mapping.AppendMap(st.GetMap(), -1)
		}
		buf = append(buf, `,"mapped":[`...)
		var flags []byte
		n := 0
		for _, p := range positions {
			for _, assoc := range [2]int{-1, 1} {
				r := mapping.MapResult(p, assoc)
				if n > 0 {
					buf = append(buf, ',')
					flags = append(flags, ',')
				}
				n++
				buf = fmt.Appendf(buf, "[%d,%d,%d,%t]", p, assoc, r.Pos, r.Deleted())
				flags = fmt.Appendf(flags, "[%t,%t,%t]", r.DeletedBefore(), r.DeletedAfter(), r.DeletedAcross())
			}
		}
		buf = append(buf, `],"mappedFlags":[`...)
		buf = append(buf, flags...)
		buf = append(buf, `],"inverted":[`...)
		for i, inv := range inverted {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = inv.AppendJSON(buf)
		}
		buf = append(buf, ']')
	}
	return append(buf, '}'), nil
}
