// Unit tests of exportSchema (client/src/tiptap-schema.js) on
// prosemirror-model schemas: the JSON it writes rebuilds the same schema
// in order, array-index names keep their place (the OrderedMap form), and
// what JSON cannot hold fails naming it.
import test from "node:test"
import assert from "node:assert/strict"
import { Schema } from "prosemirror-model"
import { exportSchema } from "../client/src/tiptap-schema.js"

const names = map => { let out = []; map.forEach(k => out.push(k)); return out }

test("objects, in order, without DOM glue", () => {
  let schema = new Schema({
    topNode: "page",
    nodes: { paragraph: { content: "text*", group: "block", toDOM: () => ["p", 0], parseDOM: [{ tag: "p" }] },
      page: { content: "block+" }, text: {} },
    marks: { link: { attrs: { href: { default: null }, title: { default: "t", validate: "string" } }, inclusive: false }, bold: {} },
  })
  let text = exportSchema({ schema })
  let spec = JSON.parse(text)
  assert.deepEqual(Object.keys(spec.nodes), ["paragraph", "page", "text"])
  assert.deepEqual(spec.nodes.paragraph, { content: "text*", group: "block" })
  assert.deepEqual(spec.marks.link, { attrs: { href: { default: null }, title: { default: "t", validate: "string" } }, inclusive: false })
  assert.equal(spec.topNode, "page")
  let back = new Schema(spec)
  assert.deepEqual(names(back.spec.nodes), names(schema.spec.nodes))
  assert.deepEqual(names(back.spec.marks), ["link", "bold"])
  assert.equal(exportSchema(schema), text, "a Schema itself")
  assert.ok(text.endsWith("}\n"))
})

test("array-index names: the OrderedMap form", () => {
  let base = new Schema({ nodes: { doc: { content: "block*" }, x: { group: "block" }, text: {} } })
  // An object would list "7" first; the schema's OrderedMap has doc, x, 7, text.
  let schema = new Schema({ nodes: base.spec.nodes.addBefore("text", "7", { group: "block" }) })
  assert.deepEqual(names(schema.spec.nodes), ["doc", "x", "7", "text"])
  let spec = JSON.parse(exportSchema(schema))
  assert.deepEqual(spec.nodes.content.filter((_, i) => i % 2 == 0), ["doc", "x", "7", "text"])
  assert.deepEqual(spec.nodes.content[5], { group: "block" })
  assert.deepEqual(spec.marks, {}, "marks without such names are an object")
})

test("what JSON cannot hold", () => {
  let undef = new Schema({ nodes: { doc: { content: "text*", attrs: { a: { default: undefined } } }, text: {} } })
  assert.throws(() => exportSchema(undef), /node "doc" attribute "a" has the default undefined/)
  let nan = new Schema({ nodes: { doc: { content: "text*", attrs: { a: { default: NaN } } }, text: {} } })
  assert.throws(() => exportSchema(nan), /node "doc" attribute "a"\.default is NaN/)
  let date = new Schema({ nodes: { doc: { content: "text*", attrs: { a: { default: new Date(0) } } }, text: {} } })
  assert.throws(() => exportSchema(date), /is a Date, which JSON cannot hold/)
  assert.throws(() => exportSchema({}), /expected a Tiptap Editor or a prosemirror-model Schema/)
  // A function validate is dropped (the server checks type strings only).
  let fn = new Schema({ nodes: { doc: { content: "text*", attrs: { a: { default: 1, validate: () => {} } } }, text: {} } })
  assert.deepEqual(JSON.parse(exportSchema(fn)).nodes.doc.attrs, { a: { default: 1 } })
})
