// Package apply applies ProseMirror steps to documents, for the stateless
// apply request of `pmauthority apply` and of the HTTP apply endpoint
// (POST / and POST /v1/apply), and the step loop that the collab
// authority shares with it.
//
// An apply request is {"doc": …, "steps": […], "schema"?: NAME,
// "positions"?: [p, …]}; an Applier answers it with the resulting document
// or a *Failure naming the first failing step. A request is read in one
// pass with internal/jsonscan, without encoding/json: the document is
// decoded straight from the request bytes with the schema named so far
// (decoded again only when a "schema" key after it names another one),
// and the steps are located, then decoded and applied one at a time, so
// that the first failing step is reported whether it fails to decode or
// to apply, as a JavaScript server running Step.fromJSON and step.apply in
// a loop would report it.
//
// Steps is that loop on its own: decode each step with the document's
// schema, apply it, bound the document's size, and stop at the first
// failure with a *StepError naming the step. Limits holds the bounds of a
// request, with the defaults of DESIGN.md; Schemas resolves the schema
// names that requests give, from a schemas.Registry.
package apply
