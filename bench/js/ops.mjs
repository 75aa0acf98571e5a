// pmauthority's Transform op format ({"op": NAME, "args": [...]}, the
// doc comment of transform/ops.go) run with the real prosemirror-transform:
// the arguments are decoded from their JSON on every call (Node.fromJSON,
// schema.markFromJSON, Slice.fromJSON, node types by name), as
// transform.Apply decodes them. It reads the format as applyOp in
// conformance/js/gen-transform.mjs does; that one lives in another npm
// package, whose prosemirror-model instance bench's schema cannot share.

import { Node, Fragment, Slice, NodeRange } from "prosemirror-model"

// applyOp runs one op (a JSON.parse'd object) on tr.
export function applyOp(tr, schema, op) {
  let a = op.args, doc = tr.doc
  let type = name => {
    let t = schema.nodes[name]
    if (!t) throw new Error("unknown node type " + name)
    return t
  }
  let node = json => Node.fromJSON(schema, json)
  let content = json => Array.isArray(json) ? Fragment.fromArray(json.map(node)) : node(json)
  let mark = json => schema.markFromJSON(json)
  let slice = json => json == null ? Slice.empty : Slice.fromJSON(schema, json)
  let markOrType = json => typeof json == "string" ? schema.marks[json] : mark(json)
  let rng = json => new NodeRange(doc.resolve(json.from), doc.resolve(json.to), json.depth)
  let wrappers = list => list && list.map(w => w == null ? null : { type: type(w.type), attrs: w.attrs == null ? null : w.attrs })
  switch (op.op) {
    case "replace": return tr.replace(a[0], a.length > 1 && a[1] != null ? a[1] : a[0], slice(a[2]))
    case "replaceWith": return tr.replaceWith(a[0], a[1], content(a[2]))
    case "insert": return tr.insert(a[0], content(a[1]))
    case "delete": return tr.delete(a[0], a[1])
    case "replaceRange": return tr.replaceRange(a[0], a[1], slice(a[2]))
    case "replaceRangeWith": return tr.replaceRangeWith(a[0], a[1], node(a[2]))
    case "deleteRange": return tr.deleteRange(a[0], a[1])
    case "addMark": return tr.addMark(a[0], a[1], mark(a[2]))
    case "removeMark": return tr.removeMark(a[0], a[1], a[2] == null ? null : markOrType(a[2]))
    case "clearIncompatible": return tr.clearIncompatible(a[0], type(a[1]))
    case "setBlockType": return tr.setBlockType(a[0], a[1], type(a[2]), a[3] == null ? null : a[3])
    case "setNodeMarkup":
      return tr.setNodeMarkup(a[0], a[1] == null ? null : type(a[1]), a[2] == null ? null : a[2],
                              a[3] == null ? undefined : a[3].map(mark))
    case "setNodeAttribute": return tr.setNodeAttribute(a[0], a[1], a[2])
    case "setDocAttribute": return tr.setDocAttribute(a[0], a[1])
    case "addNodeMark": return tr.addNodeMark(a[0], mark(a[1]))
    case "removeNodeMark": return tr.removeNodeMark(a[0], markOrType(a[1]))
    case "split": return tr.split(a[0], a.length > 1 && a[1] != null ? a[1] : 1, a[2] == null ? undefined : wrappers(a[2]))
    case "join": return tr.join(a[0], a.length > 1 && a[1] != null ? a[1] : 1)
    case "lift": return tr.lift(rng(a[0]), a[1])
    case "wrap": return tr.wrap(rng(a[0]), wrappers(a[1]))
  }
  throw new Error("unknown op " + op.op)
}

// readOps reads a recorded sequence (js/transform-record.mjs): the parsed
// file, with its start document as a Node.
export function readOps(text, schema) {
  let rec = JSON.parse(text)
  if (rec.format != "pmauthority-transform-ops") throw new Error("not a transform-ops file")
  if (rec.ops.length != rec.count) throw new Error(`count says ${rec.count} ops, file has ${rec.ops.length}`)
  return { ...rec, startDoc: schema.nodeFromJSON(rec.doc) }
}
