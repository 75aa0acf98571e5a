// Generates differential test cases for the Transform API: random
// documents on the four conformance schemas (gen-steps.mjs's), random
// sequences of 1–6 Transform method calls written in pmauthority's op
// format ({"op": NAME, "args": [...]}, transform/ops.go), run by the
// real prosemirror-transform, with the steps and document they made or
// the op that threw; and calls of the structure helpers (liftTarget,
// findWrapping, canSplit, canJoin, joinPoint, insertPoint, dropPoint)
// with their answers. The output format is described in
// FORMAT-transform.md.
//
// Usage: node gen-transform.mjs [--seed N] [--count N] [--out FILE]
//
// The same seed and count give the same file byte for byte; case `id`
// depends only on the seed and `id`.

import fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Node, Fragment, Slice, NodeRange } from "prosemirror-model"
import {
  Transform, canJoin, joinPoint, canSplit, liftTarget, findWrapping, insertPoint, dropPoint,
} from "prosemirror-transform"
import { loadSchemas, schemaNames } from "./schemas.mjs"
import { headerLine, runGenerator } from "./gen-cli.mjs"
import {
  Rand, SchemaInfo, genDoc, errMessage, errName, genAttrs, genMark, genMarks, genInsert, randText,
  anyPos, range, nodePos, textblockPos, nodePositions, attrValue, UNKNOWN_ATTRS, guardFitter,
} from "./gen-steps.mjs"

export const FORMAT_VERSION = 1

// caseSalt makes the documents of a seed other than those gen-steps.mjs
// and gen-rebase.mjs draw for it.
const caseSalt = 0x7a4f0e

// ---------------------------------------------------------------------------
// The op format, read as transform/ops.go reads it

// applyOp runs one op (JSON, after a JSON round trip) on tr.
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

// ---------------------------------------------------------------------------
// Random arguments

function rangeJSON(rng) { return { from: rng.$from.pos, to: rng.$to.pos, depth: rng.depth } }

// blockRange picks a NodeRange from blockRange of random positions
// (sometimes with another depth both positions have), or null.
function blockRange(r, doc) {
  for (let attempt = 0; attempt < 4; attempt++) {
    let [a, b] = range(r, doc)
    let size = doc.content.size
    a = Math.max(0, Math.min(size, a)); b = Math.max(0, Math.min(size, b))
    let $a = doc.resolve(Math.min(a, b)), $b = doc.resolve(Math.max(a, b))
    let rng = $a.blockRange($b)
    if (!rng) continue
    if (r.chance(0.1)) {
      let depth = r.int(Math.min($a.depth, $b.depth) + 1)
      return new NodeRange($a, $b, depth)
    }
    return rng
  }
  return null
}

// pickType picks a node type other than text and the top node, or the
// top node in a schema that has no other (text).
function pickType(r, S) {
  return S.types.length ? r.pick(S.types) : S.schema.topNodeType
}

function pickTextblock(r, S) {
  return S.textblocks.length ? r.pick(S.textblocks) : S.schema.topNodeType
}

function typeArg(r, S, pred) {
  let list = pred ? S.types.filter(pred) : S.types
  return (list.length ? r.pick(list) : pickType(r, S)).name
}

function wrapperJSON(r, w) {
  let out = { type: w.type.name }
  if (w.attrs != null || r.chance(0.5)) out.attrs = w.attrs == null ? null : w.attrs
  return out
}

// sliceArg makes a slice's JSON: of the document, closed or maxOpen nodes,
// and rarely one whose open depths do not fit its content.
function sliceArg(r, S, doc) {
  let kind = r.weighted([[5, "open"], [3, "closed"], [1, "maxOpen"], [0.3, "bogus"], [0.4, "null"]])
  if (kind == "null") return null
  if (kind == "open") {
    let size = doc.content.size, x = r.int(size + 1), y = r.int(size + 1)
    return doc.slice(Math.min(x, y), Math.max(x, y)).toJSON()
  }
  let frag = Fragment.from(genInsert(r, S))
  if (kind == "maxOpen") return Slice.maxOpen(frag).toJSON()
  let json = new Slice(frag, 0, 0).toJSON()
  if (kind == "bogus") {
    json.openStart = r.int(4)
    json.openEnd = r.int(4)
  }
  return json
}

function contentArg(r, S) {
  let nodes = genInsert(r, S).map(n => n.toJSON())
  return nodes.length == 1 && r.chance(0.5) ? nodes[0] : nodes
}

// nearPoint picks a position where a node of type t fits near pos, as
// insertPoint finds it, or pos.
function nearPoint(r, doc, pos, t) {
  if (!r.chance(0.5) || pos < 0 || pos > doc.content.size) return pos
  try { let p = insertPoint(doc, pos, t); return p == null ? pos : p } catch (e) { return pos }
}

const OPS = {
  replace(r, S, doc) {
    let [a, b] = range(r, doc), args = [a]
    let slice = sliceArg(r, S, doc)
    if (slice != null || r.chance(0.5)) args.push(b, slice)
    else if (r.chance(0.5)) args.push(b)
    return args
  },
  replaceWith(r, S, doc) { let [a, b] = range(r, doc); return [a, b, contentArg(r, S)] },
  insert(r, S, doc) {
    let c = contentArg(r, S), first = Array.isArray(c) ? c[0] : c
    return [nearPoint(r, doc, anyPos(r, doc), S.schema.nodes[first.type]), c]
  },
  delete(r, S, doc) { let [a, b] = range(r, doc); return [a, b] },
  replaceRange(r, S, doc) { let [a, b] = range(r, doc); return [a, b, sliceArg(r, S, doc)] },
  replaceRangeWith(r, S, doc) {
    let [a, b] = range(r, doc)
    if (r.chance(0.3)) b = a
    return [a, b, genInsert(r, S)[0].toJSON()]
  },
  deleteRange(r, S, doc) { let [a, b] = range(r, doc); return [a, b] },
  addMark(r, S, doc) { let [a, b] = range(r, doc); return [a, b, genMark(r, S).toJSON()] },
  removeMark(r, S, doc) {
    let [a, b] = range(r, doc), how = r.pick(["mark", "type", "all", "absent"])
    if (how == "absent") return [a, b]
    if (how == "all") return [a, b, null]
    if (how == "type") return [a, b, r.pick(S.marks).name]
    let found = []
    doc.nodesBetween(Math.max(0, a), Math.min(b, doc.content.size), n => { found.push(...n.marks) })
    return [a, b, (found.length && r.chance(0.8) ? r.pick(found) : genMark(r, S)).toJSON()]
  },
  clearIncompatible(r, S, doc) {
    let pos = nodePos(r, doc, n => !n.isLeaf)
    return [pos, typeArg(r, S, t => !t.isLeaf)]
  },
  setBlockType(r, S, doc) {
    let [a, b] = range(r, doc)
    let type = r.chance(0.93) ? pickTextblock(r, S) : pickType(r, S)
    let args = [a, b, type.name], attrs = genAttrs(r, type)
    if (attrs != null || r.chance(0.5)) args.push(attrs)
    return args
  },
  setNodeMarkup(r, S, doc) {
    let pos = nodePos(r, doc, n => !n.isText)
    let node = pos >= 0 && pos <= doc.content.size ? doc.nodeAt(pos) : null
    let type = r.chance(0.5) ? null : r.chance(0.6) && node
      ? r.pick(S.types.filter(t => t.isLeaf == node.type.isLeaf && t.isInline == node.type.isInline).concat([node.type]))
      : pickType(r, S)
    let args = [pos, type ? type.name : null]
    let attrs = genAttrs(r, type || (node && !node.isText ? node.type : pickType(r, S)))
    if (r.chance(0.8)) args.push(attrs)
    if (r.chance(0.3)) {
      if (args.length < 3) args.push(null)
      args.push([...genMarks(r, S, pickType(r, S), 1)].map(m => m.toJSON()))
    }
    return args
  },
  setNodeAttribute(r, S, doc) {
    let pos = nodePos(r, doc, n => !n.isText && (n.type.spec.attrs || r.chance(0.1)))
    let node = pos >= 0 && pos <= doc.content.size ? doc.nodeAt(pos) : null
    let names = node && node.type.spec.attrs ? Object.keys(node.type.spec.attrs) : []
    let attr = !names.length || r.chance(0.1) ? r.pick(UNKNOWN_ATTRS.filter(n => n != "__proto__")) : r.pick(names)
    let spec = node && node.type.spec.attrs && node.type.spec.attrs[attr]
    return [pos, attr, attrValue(r, attr, spec, r.chance(0.9))]
  },
  setDocAttribute(r, S, doc) {
    let attr = S.docAttrs.length && r.chance(0.9) ? r.pick(S.docAttrs) : r.pick(UNKNOWN_ATTRS.filter(n => n != "__proto__"))
    let specs = S.schema.topNodeType.spec.attrs || {}
    return [attr, attrValue(r, attr, specs[attr], r.chance(0.85))]
  },
  addNodeMark(r, S, doc) {
    let cands = []
    doc.descendants((node, pos, parent) => {
      if (!node.isText && S.marks.some(t => parent.type.allowsMarkType(t))) cands.push([pos, parent])
    })
    let pos, parent = null
    if (cands.length && r.chance(0.85)) [pos, parent] = r.pick(cands)
    else pos = nodePos(r, doc, n => !n.isText || r.chance(0.05))
    let mark = (parent && r.chance(0.85) && genMark(r, S, t => parent.type.allowsMarkType(t))) || genMark(r, S)
    return [pos, mark.toJSON()]
  },
  removeNodeMark(r, S, doc) {
    let marked = nodePositions(doc, n => n.marks.length > 0 && !n.isText)
    let pos = marked.length && r.chance(0.9) ? r.pick(marked) : nodePos(r, doc, n => !n.isText)
    let node = pos >= 0 && pos <= doc.content.size ? doc.nodeAt(pos) : null
    let mark = node && node.marks.length && r.chance(0.8) ? r.pick(node.marks) : genMark(r, S)
    return [pos, r.chance(0.4) ? mark.type.name : mark.toJSON()]
  },
  split(r, S, doc) {
    let pos = textblockPos(r, doc)
    let $pos = pos >= 0 && pos <= doc.content.size ? doc.resolve(pos) : null
    let maxDepth = $pos ? $pos.depth : 1
    let depth = r.chance(0.6) ? 1 : r.range(0, Math.max(1, maxDepth + (r.chance(0.1) ? 1 : 0)))
    let typesAfter
    if (r.chance(0.3)) {
      typesAfter = []
      for (let i = 0; i < depth; i++) typesAfter.push(r.chance(0.5) ? null : { type: pickType(r, S), attrs: genAttrs(r, pickType(r, S)) })
      if (depth && r.chance(0.5)) { let t = pickTextblock(r, S); typesAfter[depth - 1] = { type: t, attrs: genAttrs(r, t) } }
    }
    // Mostly where canSplit allows it.
    if ($pos && r.chance(0.7)) {
      for (let attempt = 0; attempt < 6; attempt++) {
        let ok = false
        try { ok = canSplit(doc, pos, depth, typesAfter) } catch (e) { /* keep looking */ }
        if (ok) break
        pos = textblockPos(r, doc)
        if (pos < 0 || pos > doc.content.size) break
      }
    }
    let args = [pos]
    if (depth != 1 || typesAfter || r.chance(0.3)) args.push(depth)
    if (typesAfter) args.push(typesAfter.map(w => w && wrapperJSON(r, w)))
    return args
  },
  join(r, S, doc) {
    let pos = anyPos(r, doc), depth = r.chance(0.9) ? 1 : r.range(0, 3)
    let how = r.weighted([[6, "canJoin"], [3, "joinPoint"], [1, "any"]])
    if (how == "joinPoint") {
      let p = null
      try { p = joinPoint(doc, Math.max(0, Math.min(pos, doc.content.size)), r.chance(0.5) ? -1 : 1) } catch (e) { /* none */ }
      if (p != null) pos = p
      else how = "canJoin"
    }
    if (how == "canJoin") {
      let cands = []
      for (let i = 0; i <= doc.content.size; i++) if (canJoin(doc, i)) cands.push(i)
      if (cands.length) pos = r.pick(cands)
      else if (r.chance(0.7)) return null
    }
    return depth == 1 && r.chance(0.5) ? [pos] : [pos, depth]
  },
  lift(r, S, doc) {
    let rng = blockRange(r, doc)
    if (!rng) return null
    let target = null
    try { target = liftTarget(rng) } catch (e) { /* none */ }
    if (target == null) target = r.int(rng.depth + 1)
    return [rangeJSON(rng), target]
  },
  wrap(r, S, doc) {
    if (!S.wrappers.length) return null
    let rng = blockRange(r, doc)
    if (!rng) return null
    let type = r.pick(S.wrappers), wrappers = null
    try { wrappers = findWrapping(rng, type, genAttrs(r, type)) } catch (e) { /* none */ }
    if (!wrappers) {
      // Try the other wrapper types before giving up.
      for (let t of S.wrappers) {
        let w = null
        try { w = findWrapping(rng, t, genAttrs(r, t)) } catch (e) { /* none */ }
        if (w) wrappers = w
        if (wrappers && r.chance(0.7)) break
      }
    }
    if (!wrappers && r.chance(0.7)) return null
    if (!wrappers || r.chance(0.05)) wrappers = [{ type, attrs: genAttrs(r, type) }]
    return [rangeJSON(rng), wrappers.map(w => wrapperJSON(r, w))]
  },
}

function opWeights(S) {
  let structural = S.name == "text" ? 0.2 : 1
  return [
    [3, "replace"], [2, "replaceWith"], [2, "insert"], [2, "delete"], [4, "replaceRange"], [3, "replaceRangeWith"],
    [3, "deleteRange"], [S.marks.length ? 3 : 0, "addMark"], [S.marks.length ? 3 : 0, "removeMark"],
    [2 * structural, "clearIncompatible"], [3 * structural, "setBlockType"], [2 * structural, "setNodeMarkup"],
    [2 * structural, "setNodeAttribute"], [1, "setDocAttribute"],
    [S.marks.length ? 2 * structural : 0, "addNodeMark"], [S.marks.length ? 2 * structural : 0, "removeNodeMark"],
    [5 * structural, "split"], [4 * structural, "join"], [4 * structural, "lift"], [4 * structural, "wrap"],
  ].filter(([w]) => w > 0)
}

// ---------------------------------------------------------------------------
// Helper calls

// helperCall makes one call of a structure helper on doc and records its
// answer. Arguments are written as in the op format.
function helperCall(r, S, doc) {
  let fn = r.pick(["liftTarget", "findWrapping", "canSplit", "canJoin", "joinPoint", "insertPoint", "dropPoint"])
  let size = doc.content.size, pos = r.int(size + 1)
  let call = { fn, args: null }
  let run
  switch (fn) {
    case "liftTarget": {
      let rng = blockRange(r, doc)
      if (!rng) return null
      call.args = [rangeJSON(rng)]
      run = () => liftTarget(rng)
      break
    }
    case "findWrapping": {
      let rng = blockRange(r, doc)
      if (!rng) return null
      let type = r.chance(0.8) && S.wrappers.length ? r.pick(S.wrappers) : pickType(r, S)
      let attrs = genAttrs(r, type)
      call.args = [rangeJSON(rng), type.name, attrs]
      run = () => {
        let w = findWrapping(rng, type, attrs)
        return w && w.map(x => ({ type: x.type.name, attrs: x.attrs }))
      }
      break
    }
    case "canSplit": {
      if (r.chance(0.7)) pos = textblockPos(r, doc)
      if (pos < 0 || pos > size) pos = r.int(size + 1)
      let depth = r.chance(0.6) ? 1 : r.range(0, doc.resolve(pos).depth + 1)
      let typesAfter = null
      if (r.chance(0.3)) {
        typesAfter = []
        for (let i = 0; i < Math.max(1, depth); i++) typesAfter.push(r.chance(0.5) ? null : { type: pickType(r, S).name })
      }
      call.args = typesAfter ? [pos, depth, typesAfter] : [pos, depth]
      run = () => canSplit(doc, pos, depth, typesAfter && typesAfter.map(w => w && { type: S.schema.nodes[w.type] }))
      break
    }
    case "canJoin":
      call.args = [pos]
      run = () => canJoin(doc, pos)
      break
    case "joinPoint": {
      let dir = r.chance(0.5) ? -1 : 1
      call.args = [pos, dir]
      run = () => { let p = joinPoint(doc, pos, dir); return p == null ? null : p }
      break
    }
    case "insertPoint": {
      let type = pickType(r, S)
      call.args = [pos, type.name]
      run = () => insertPoint(doc, pos, type)
      break
    }
    case "dropPoint": {
      let json = sliceArg(r, S, doc)
      if (json && json.openStart > 0 && r.chance(0.5)) json = sliceArg(r, S, doc)
      call.args = [pos, json]
      let slice
      try { slice = json == null ? Slice.empty : Slice.fromJSON(S.schema, json) } catch (e) { return null }
      run = () => dropPoint(doc, pos, slice)
      break
    }
  }
  try {
    call.result = guardFitter(run)
  } catch (e) {
    call.threw = { error: errMessage(e), errorName: errName(e) }
  }
  return call
}

// ---------------------------------------------------------------------------
// Cases

function makeCase(seed, id, infos) {
  let r = new Rand(seed, id + caseSalt)
  let S = infos[r.weighted([[1, "text"], [4, "basic"], [3, "tables"], [4, "stress"]])]
  let docJSON = genDoc(r, S).toJSON()
  // The document as the Go side reads it.
  let doc = Node.fromJSON(S.schema, JSON.parse(JSON.stringify(docJSON)))
  if (r.chance(0.12)) {
    let calls = []
    for (let n = r.range(1, 6); n > 0; n--) {
      let c = helperCall(r, S, doc)
      if (c) calls.push(c)
    }
    return { id, schema: S.name, kind: "helpers", doc: doc.toJSON(), calls }
  }
  let tr = new Transform(doc), ops = [], threw = null, weights = opWeights(S)
  for (let n = r.range(1, 6), i = 0; i < n; i++) {
    let name = r.weighted(weights), args = OPS[name](r, S, tr.doc)
    if (!args) continue
    let op = JSON.parse(JSON.stringify({ op: name, args }))
    ops.push(op)
    try {
      guardFitter(() => applyOp(tr, S.schema, op))
    } catch (e) {
      threw = { op: ops.length - 1, error: errMessage(e), errorName: errName(e) }
      break
    }
  }
  let rec = { id, schema: S.name, kind: "ops", doc: doc.toJSON(), ops, steps: tr.steps.map(s => s.toJSON()), final: tr.doc.toJSON() }
  if (threw) rec.threw = threw
  // Sometimes helper calls on the document the ops made (which need not
  // pass check() any more).
  if (r.chance(0.2)) {
    let calls = []
    for (let n = r.range(1, 3); n > 0; n--) {
      let c = helperCall(r, S, tr.doc)
      if (c) calls.push(c)
    }
    rec.calls = calls
  }
  return rec
}

// generate writes the header and `count` cases, and returns counts of
// their outcomes.
export function generate({ seed, count }, write) {
  let schemas = loadSchemas(), infos = {}
  for (let name of schemaNames) infos[name] = new SchemaInfo(name, schemas[name])
  write(headerLine({
    format: "pmauthority-transform-conformance", version: FORMAT_VERSION, seed, count, schemas: schemaNames,
    packages: ["prosemirror-transform", "prosemirror-model"],
  }))
  let stats = new Map
  let bump = key => stats.set(key, (stats.get(key) || 0) + 1)
  for (let id = 0; id < count; id++) {
    let rec = makeCase(seed, id, infos)
    if (rec.kind == "helpers") {
      bump("helper cases")
      for (let c of rec.calls) bump(c.threw ? `${c.fn} threw` : c.fn)
    } else {
      bump(rec.threw ? `threw ${rec.threw.errorName}` : "ran")
      for (let i = 0; i < rec.ops.length; i++) bump("op " + rec.ops[i].op + (rec.threw && rec.threw.op == i ? " (threw)" : ""))
      if (!rec.threw && !rec.steps.length) bump("no steps")
    }
    write(JSON.stringify(rec) + "\n")
  }
  return stats
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) runGenerator("gen-transform", generate)
