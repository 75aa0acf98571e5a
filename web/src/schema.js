// The "basic" schema of pmauthority (schemas/basic.json): the nodes of
// prosemirror-schema-basic with the lists of prosemirror-schema-list
// added as conformance/js/schema-specs.mjs does, and the basic marks.
// Unlike the JSON spec it keeps toDOM and parseDOM, which the editor
// needs.

import { Schema } from "prosemirror-model"
import { schema as basic } from "prosemirror-schema-basic"
import { addListNodes } from "prosemirror-schema-list"

export const schema = new Schema({
  nodes: addListNodes(basic.spec.nodes, "paragraph block*", "block"),
  marks: basic.spec.marks,
})
