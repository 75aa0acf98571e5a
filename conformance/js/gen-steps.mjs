// Generates differential test cases for the step layer: random documents
// in the four conformance schemas, edited through the real Transform API
// of prosemirror-transform, plus hand-mutated step JSON. For every case
// it records what the JS libraries answer (apply, invert, map, merge,
// rebase). The line format is documented in FORMAT-steps.md.
//
// Usage: node gen-steps.mjs --seed N --count N --out FILE [--only I]
//
// Case i of seed s depends on (s, i) only, so `--only I` regenerates a
// single case of a larger run.
//
// gen-rebase.mjs imports its random documents and edits (Rand,
// SchemaInfo, genDoc, runOps); importing the module runs nothing.

import fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Fragment, Slice, Node, Mark, MarkType } from "prosemirror-model"
import {
  Transform, Step, Mapping, canJoin, joinPoint, canSplit, liftTarget, findWrapping, insertPoint,
} from "prosemirror-transform"
import { loadSchemas, schemaNames } from "./schemas.mjs"
import { toOrdered, stringify as orderedStringify, RawNumber } from "./ordered-json.mjs"

// GEN_TRACE=1 prints each case and op to stderr before running it (to
// find the case when a JS call never returns).
const TRACE = !!process.env.GEN_TRACE

// Exceptions are part of the data (many JS calls here throw); their stack
// traces are not, and capturing them costs a third of the run time.
Error.stackTraceLimit = 0

// ---------------------------------------------------------------------------
// Seeded randomness

// hash32 mixes two 32-bit integers (murmur3 finalizer).
function hash32(a, b) {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35)
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

// Rand is a small seeded PRNG (sfc32).
export class Rand {
  constructor(seed, index) {
    let lo = seed >>> 0, hi = Math.floor(seed / 4294967296) >>> 0
    this.a = hash32(lo, index); this.b = hash32(hi, ~index); this.c = hash32(index, 0x51ed27); this.d = 1
    for (let i = 0; i < 12; i++) this.next()
  }
  next() {
    let t = (this.a + this.b | 0) + this.d | 0
    this.d = this.d + 1 | 0
    this.a = this.b ^ this.b >>> 9
    this.b = this.c + (this.c << 3) | 0
    this.c = this.c << 21 | this.c >>> 11
    this.c = this.c + t | 0
    return (t >>> 0) / 4294967296
  }
  int(n) { return Math.floor(this.next() * n) }            // [0, n)
  range(a, b) { return a + this.int(b - a + 1) }            // [a, b]
  chance(p) { return this.next() < p }
  pick(arr) { return arr[this.int(arr.length)] }
  // weighted picks from [[weight, value], …].
  weighted(list) {
    let total = 0
    for (let [w] of list) total += w
    let x = this.next() * total
    for (let [w, v] of list) if ((x -= w) < 0) return v
    return list[list.length - 1][1]
  }
}

// ---------------------------------------------------------------------------
// Schemas

export class SchemaInfo {
  constructor(name, schema) {
    this.name = name
    this.schema = schema
    let types = Object.values(schema.nodes)
    this.types = types.filter(t => !t.isText && t != schema.topNodeType)
    this.textblocks = types.filter(t => t.isTextblock)
    this.inlines = types.filter(t => t.isInline && !t.isText)
    this.wrappers = types.filter(t => !t.isInline && !t.isLeaf && !t.isTextblock && t != schema.topNodeType)
    this.marks = Object.values(schema.marks)
    this.docAttrs = Object.keys(schema.topNodeType.spec.attrs || {})
  }
}

const TEXT_PIECES = [
  "a", "b", "x", "yz", "hello", "world", "Lorem", " ", " ", "  ", "é", "ß", "中文", "😀", "👍🏽", "🇫🇷",
  "👨‍👩‍👧", "a\u0301", "\u2028", "\u2029", "<b>&amp;", "\"q\"", "\\", "\t", "\u00a0", "𝔸", "ﬁ", "\u200b", "\n", "0",
]

export function randText(r, max = 5) {
  let n = r.range(1, max), s = ""
  for (let i = 0; i < n; i++) s += r.pick(TEXT_PIECES)
  return s
}

export const UNKNOWN_ATTRS = ["bogus", "__proto__", "constructor", "toString", "hasOwnProperty", "0", "Level"]

// attrValue makes a value for an attribute; `valid` false asks for one of
// the wrong type where the spec validates.
export function attrValue(r, name, spec, valid = true) {
  let v = spec && typeof spec.validate == "string" ? spec.validate.split("|") : null
  if (!valid) {
    let wrong = [5, "5", true, null, [], {}, 2.5].filter(x => !v || !v.includes(jsType(x)))
    return r.pick(wrong.length ? wrong : [5])
  }
  switch (name) {
    case "level": return r.range(1, 6)
    case "order": return r.range(0, 4)
    case "colspan": case "rowspan": return r.chance(0.8) ? 1 : 2
    case "colwidth": return r.chance(0.5) ? null : [r.range(20, 200)]
    case "src": case "url": return r.pick(["a.png", "https://example.com/😀.png", "", "img?x=1&y=<2>"])
    case "href": return r.pick(["https://prosemirror.net", "#top", "mailto:a@b.c", "\u2028"])
  }
  let t = v ? r.pick(v) : spec && "default" in spec && r.chance(0.6) ? jsType(spec.default) : r.pick(["string", "number", "null", "boolean", "object"])
  switch (t) {
    case "number": return r.pick([0, 1, 2, 3, 42, -1, 1.5, 1e21])
    case "string": return r.chance(0.5) ? randText(r, 2) : r.pick(["left", "right", "", "x"])
    case "boolean": return r.chance(0.5)
    case "null": return null
    case "object": return r.pick([{}, { a: 1 }, [1, "2"], { b: 1, a: [2], 1: "one" }, { x: { y: null } }])
    default: return r.pick(["s", 7, null])
  }
}

function jsType(x) { return x === null ? "null" : Array.isArray(x) ? "object" : typeof x }

// genAttrs makes attributes for a node or mark type: defaults left out
// most of the time, required ones always given.
export function genAttrs(r, type) {
  let specs = type.spec.attrs, attrs = {}
  if (!specs) return null
  for (let name in specs) {
    let spec = specs[name]
    if (Object.prototype.hasOwnProperty.call(spec, "default") && r.chance(0.6)) continue
    attrs[name] = attrValue(r, name, spec)
  }
  return attrs
}

export function genMark(r, S, allowed) {
  let types = allowed ? S.marks.filter(allowed) : S.marks
  if (!types.length) return null
  let type = r.pick(types)
  return type.create(genAttrs(r, type))
}

export function genMarks(r, S, parentType, p) {
  let set = Mark.none
  if (!parentType || !r.chance(p)) return set
  for (let n = r.range(1, 3); n > 0; n--) {
    let m = genMark(r, S, t => parentType.allowsMarkType(t))
    if (m) set = m.addToSet(set)
  }
  return set
}

// ---------------------------------------------------------------------------
// Random documents

function genNode(r, S, type, parentType, depth, ctx) {
  ctx.budget--
  if (type.isText) return S.schema.text(randText(r, 4), genMarks(r, S, parentType, 0.4))
  let attrs = genAttrs(r, type)
  let marks = genMarks(r, S, parentType, 0.12)
  let content = type.isLeaf ? Fragment.empty : genContent(r, S, type, depth, ctx)
  if (!content) return null
  return type.create(attrs, content, marks)
}

function genContent(r, S, type, depth, ctx) {
  let match = type.contentMatch, nodes = [], max = r.range(1, type.inlineContent ? 5 : 4)
  while (nodes.length < max) {
    let deep = depth >= ctx.maxDepth || ctx.budget <= 0
    if (match.validEnd && (deep || r.chance(nodes.length ? 0.25 : 0.1))) break
    if (ctx.budget < -40) break
    let edges = []
    for (let i = 0; i < match.edgeCount; i++) edges.push(match.edge(i))
    if (deep) edges = edges.filter(e => e.type.isLeaf || e.type.inlineContent)
    if (!edges.length) break
    // Mostly text where text can go.
    let edge = r.weighted(edges.map(e => [e.type.isText ? 2 * edges.length : 1, e]))
    let child = genNode(r, S, edge.type, type, depth + 1, ctx)
    if (!child) return null
    nodes.push(child)
    match = edge.next
  }
  let frag = Fragment.fromArray(nodes)
  if (!match.validEnd) {
    let fill = match.fillBefore(Fragment.empty, true)
    if (!fill) return null
    frag = frag.append(fill)
  }
  return frag
}

// genDoc makes a random document that passes check().
export function genDoc(r, S) {
  for (let attempt = 0; attempt < 30; attempt++) {
    let ctx = { budget: r.chance(0.15) ? r.range(20, 60) : r.range(2, 18), maxDepth: r.range(2, 6) }
    try {
      let doc = genNode(r, S, S.schema.topNodeType, null, 0, ctx)
      if (!doc) continue
      doc.check()
      return doc
    } catch (e) { /* try again */ }
  }
  return S.schema.topNodeType.createAndFill()
}

// genInsert makes 1–2 nodes to insert somewhere (text, inline or any
// other node type, not necessarily fitting anywhere).
export function genInsert(r, S) {
  let out = []
  for (let n = r.chance(0.8) ? 1 : 2; n > 0; n--) {
    let kind = r.weighted([[4, "text"], [S.inlines.length ? 2 : 0, "inline"], [S.types.length ? 4 : 0, "node"]])
    let node = null
    try {
      if (kind == "text") node = S.schema.text(randText(r, 3), genMarks(r, S, r.pick(S.textblocks) || null, 0.4))
      else node = genNode(r, S, r.pick(kind == "inline" ? S.inlines : S.types), null, 1, { budget: r.range(1, 5), maxDepth: 3 })
    } catch (e) { node = null }
    if (node) out.push(node)
  }
  if (!out.length) out.push(S.schema.text(randText(r, 2)))
  return out
}

// ---------------------------------------------------------------------------
// Transform operations

export function anyPos(r, doc) {
  let size = doc.content.size
  return r.chance(0.93) ? r.int(size + 1) : r.pick([-1, -2, size + 1, size + 2 + r.int(4)])
}

export function range(r, doc) {
  let a = anyPos(r, doc), b = r.chance(0.5) ? Math.min(doc.content.size, a + r.int(8)) : anyPos(r, doc)
  if (a > b && r.chance(0.95)) [a, b] = [b, a]
  return [a, b]
}

// nodePos picks the position before a node matching pred (sometimes any
// position at all).
export function nodePos(r, doc, pred) {
  let list = []
  doc.descendants((node, pos) => { if (!pred || pred(node)) list.push(pos) })
  return !list.length || r.chance(0.06) ? anyPos(r, doc) : r.pick(list)
}

export function textblockPos(r, doc) {
  let list = []
  doc.descendants((node, pos) => {
    if (node.isTextblock) for (let i = 1; i <= node.content.size + 1; i++) list.push(pos + i)
    return !node.isTextblock
  })
  return !list.length || r.chance(0.2) ? anyPos(r, doc) : r.pick(list)
}

function randSlice(r, S, doc) {
  let kind = r.weighted([[4, "open"], [3, "closed"], [1, "maxOpen"]])
  if (kind == "open") {
    // Never from > to: doc.slice then builds an inconsistent slice (empty
    // content, open depth > 0) on which replaceStep's fitter loops forever.
    let [a, b] = range(r, doc)
    if (a > b) [a, b] = [b, a]
    return [doc.slice(a, b), `slice(${a},${b})`]
  }
  let frag = Fragment.from(genInsert(r, S))
  if (kind == "maxOpen") return [Slice.maxOpen(frag), "maxOpen"]
  return [new Slice(frag, 0, 0), "closed"]
}

function nodeRange(r, doc) {
  let [a, b] = range(r, doc)
  let $a = doc.resolve(a), $b = doc.resolve(b)
  let rng = $a.blockRange($b)
  if (!rng) throw new Error("no block range")
  return rng
}

function typeWithAttrs(r, type) { return { type, attrs: genAttrs(r, type) } }

const OPS = {
  insertText(r, S, tr) {
    let from = textblockPos(r, tr.doc), to = r.chance(0.7) ? from : Math.min(from + r.int(5), tr.doc.content.size)
    let text = randText(r, 3)
    if (r.chance(0.7)) {
      // As prosemirror-state's Transaction.insertText(text, from, to).
      let $from = tr.doc.resolve(from)
      let marks = to == from ? $from.marks() : $from.marksAcross(tr.doc.resolve(to))
      tr.replaceRangeWith(from, to, S.schema.text(text, marks))
      return `insertText ${from} ${to}`
    }
    tr.replaceWith(from, to, S.schema.text(text, genMarks(r, S, r.pick(S.textblocks), 0.5)))
    return `replaceWith(text) ${from} ${to}`
  },
  delete(r, S, tr) {
    let [a, b] = range(r, tr.doc)
    tr.delete(a, b)
    return `delete ${a} ${b}`
  },
  replace(r, S, tr) {
    let [a, b] = range(r, tr.doc), [slice, desc] = randSlice(r, S, tr.doc)
    tr.replace(a, b, slice)
    return `replace ${a} ${b} ${desc}`
  },
  openSlice(r, S, tr) {
    let doc = tr.doc, size = doc.content.size
    let x = r.int(size + 1), y = r.int(size + 1)
    let slice = doc.slice(Math.min(x, y), Math.max(x, y))
    let [a, b] = range(r, doc)
    tr.replace(a, r.chance(0.6) ? a : b, slice)
    return `openSlice ${Math.min(x, y)}-${Math.max(x, y)} (${slice.openStart},${slice.openEnd}) at ${a}`
  },
  replaceWith(r, S, tr) {
    let [a, b] = range(r, tr.doc)
    tr.replaceWith(a, b, genInsert(r, S))
    return `replaceWith ${a} ${b}`
  },
  insert(r, S, tr) {
    let nodes = genInsert(r, S), pos = anyPos(r, tr.doc)
    if (r.chance(0.4) && !nodes[0].isText) {
      try { let p = insertPoint(tr.doc, pos, nodes[0].type); if (p != null) pos = p } catch (e) { /* keep pos */ }
    }
    tr.insert(pos, nodes)
    return `insert ${pos}`
  },
  replaceRange(r, S, tr) {
    let [a, b] = range(r, tr.doc), [slice, desc] = randSlice(r, S, tr.doc)
    tr.replaceRange(a, b, slice)
    return `replaceRange ${a} ${b} ${desc}`
  },
  replaceRangeWith(r, S, tr) {
    let [a, b] = range(r, tr.doc), node = genInsert(r, S)[0]
    tr.replaceRangeWith(a, b, node)
    return `replaceRangeWith ${a} ${b} ${node.type.name}`
  },
  deleteRange(r, S, tr) {
    let [a, b] = range(r, tr.doc)
    tr.deleteRange(a, b)
    return `deleteRange ${a} ${b}`
  },
  split(r, S, tr) {
    let pos = textblockPos(r, tr.doc), $pos = tr.doc.resolve(pos)
    let depth = r.chance(0.6) ? 1 : r.range(1, Math.max(1, $pos.depth + (r.chance(0.1) ? 1 : 0)))
    let typesAfter
    if (r.chance(0.3)) {
      typesAfter = []
      for (let i = 0; i < depth; i++) typesAfter.push(r.chance(0.5) ? null : typeWithAttrs(r, r.pick(S.types)))
      if (r.chance(0.5)) typesAfter[depth - 1] = typeWithAttrs(r, r.pick(S.textblocks))
    }
    if (r.chance(0.6) && !canSplit(tr.doc, pos, depth, typesAfter)) {
      if (r.chance(0.7)) return `split ${pos} (canSplit false, skipped)`
    }
    tr.split(pos, depth, typesAfter)
    return `split ${pos} ${depth}${typesAfter ? " [" + typesAfter.map(t => t ? t.type.name : "null") + "]" : ""}`
  },
  join(r, S, tr) {
    let pos = anyPos(r, tr.doc), depth = r.chance(0.9) ? 1 : 2
    if (r.chance(0.7)) {
      let p = joinPoint(tr.doc, pos, r.chance(0.5) ? -1 : 1)
      if (p == null) {
        let cands = []
        for (let i = 0; i <= tr.doc.content.size; i++) if (canJoin(tr.doc, i)) cands.push(i)
        if (!cands.length) return `join (no join point)`
        p = r.pick(cands)
      }
      pos = p
    }
    tr.join(pos, depth)
    return `join ${pos} ${depth}`
  },
  lift(r, S, tr) {
    let rng = nodeRange(r, tr.doc), target = liftTarget(rng)
    if (target == null) {
      if (r.chance(0.7)) return `lift (no target)`
      target = Math.max(0, rng.depth - 1)
    }
    tr.lift(rng, target)
    return `lift ${rng.start}-${rng.end} to ${target}`
  },
  wrap(r, S, tr) {
    if (!S.wrappers.length) return "wrap (no wrapper types)"
    let rng = nodeRange(r, tr.doc), type = r.pick(S.wrappers)
    let wrappers = findWrapping(rng, type, genAttrs(r, type))
    if (!wrappers) {
      if (r.chance(0.7)) return `wrap ${type.name} (no wrapping)`
      wrappers = [{ type, attrs: genAttrs(r, type) }]
    }
    tr.wrap(rng, wrappers)
    return `wrap ${rng.start}-${rng.end} [${wrappers.map(w => w.type.name)}]`
  },
  setBlockType(r, S, tr) {
    let [a, b] = range(r, tr.doc)
    let type = r.chance(0.93) ? r.pick(S.textblocks) : r.pick(S.types)
    tr.setBlockType(a, b, type, genAttrs(r, type))
    return `setBlockType ${a} ${b} ${type.name}`
  },
  setNodeMarkup(r, S, tr) {
    let pos = nodePos(r, tr.doc, n => !n.isText)
    let node = tr.doc.nodeAt(pos)
    let type = r.chance(0.5) ? null : r.chance(0.5) && node ? r.pick(S.types.filter(t => t.isLeaf == node.type.isLeaf && t.isInline == node.type.isInline).concat([node.type])) : r.pick(S.types)
    let attrs = genAttrs(r, type || (node ? node.type : r.pick(S.types)))
    let marks = r.chance(0.3) ? genMarks(r, S, r.pick(S.types), 1) : undefined
    tr.setNodeMarkup(pos, type, attrs, marks)
    return `setNodeMarkup ${pos} ${type ? type.name : "-"}`
  },
  setNodeAttribute(r, S, tr) {
    let pos = nodePos(r, tr.doc, n => !n.isText && (n.type.spec.attrs || r.chance(0.1)))
    let node = tr.doc.nodeAt(pos)
    let names = node && node.type.spec.attrs ? Object.keys(node.type.spec.attrs) : []
    let attr = !names.length || r.chance(0.1) ? r.pick(UNKNOWN_ATTRS) : r.pick(names)
    let spec = node && node.type.spec.attrs && node.type.spec.attrs[attr]
    let value = attrValue(r, attr, spec, r.chance(0.9))
    tr.setNodeAttribute(pos, attr, value)
    return `setNodeAttribute ${pos} ${attr}`
  },
  setDocAttribute(r, S, tr) {
    let attr = r.chance(0.9) ? r.pick(S.docAttrs) : r.pick(UNKNOWN_ATTRS)
    tr.setDocAttribute(attr, attrValue(r, attr, S.schema.topNodeType.spec.attrs[attr], r.chance(0.85)))
    return `setDocAttribute ${attr}`
  },
  addMark(r, S, tr) {
    let [a, b] = range(r, tr.doc), mark = genMark(r, S)
    tr.addMark(a, b, mark)
    return `addMark ${a} ${b} ${mark.type.name}`
  },
  removeMark(r, S, tr) {
    let [a, b] = range(r, tr.doc)
    let how = r.pick(["mark", "type", "all"]), arg = null
    if (how == "mark") {
      let found = []
      tr.doc.nodesBetween(Math.max(0, a), Math.min(b, tr.doc.content.size), n => { found.push(...n.marks) })
      arg = found.length && r.chance(0.8) ? r.pick(found) : genMark(r, S)
    } else if (how == "type") arg = r.pick(S.marks)
    tr.removeMark(a, b, arg)
    return `removeMark ${a} ${b} ${how}${arg ? " " + (arg instanceof MarkType ? arg.name : arg.type.name) : ""}`
  },
  addNodeMark(r, S, tr) {
    // Mostly nodes whose parent allows some mark, with such a mark.
    let cands = []
    tr.doc.descendants((node, pos, parent) => {
      if (!node.isText && S.marks.some(t => parent.type.allowsMarkType(t))) cands.push([pos, parent])
    })
    let pos, parent = null
    if (cands.length && r.chance(0.85)) [pos, parent] = r.pick(cands)
    else pos = nodePos(r, tr.doc, n => !n.isText || r.chance(0.05))
    let mark = (parent && r.chance(0.85) && genMark(r, S, t => parent.type.allowsMarkType(t))) || genMark(r, S)
    tr.addNodeMark(pos, mark)
    return `addNodeMark ${pos} ${mark.type.name}`
  },
  removeNodeMark(r, S, tr) {
    let marked = nodePositions(tr.doc, n => n.marks.length > 0 && !n.isText)
    if (!marked.length && r.chance(0.8)) return "removeNodeMark (no marked node)"
    let pos = marked.length && r.chance(0.9) ? r.pick(marked) : nodePos(r, tr.doc, n => !n.isText)
    let node = pos >= 0 && pos <= tr.doc.content.size ? tr.doc.nodeAt(pos) : null
    let mark = node && node.marks.length && r.chance(0.8) ? r.pick(node.marks) : genMark(r, S)
    let arg = r.chance(0.4) ? mark.type : mark
    tr.removeNodeMark(pos, arg)
    return `removeNodeMark ${pos} ${mark.type.name}${arg instanceof MarkType ? " (type)" : ""}`
  },
  clearIncompatible(r, S, tr) {
    let pos = nodePos(r, tr.doc, n => !n.isLeaf)
    let type = r.pick(S.types.filter(t => !t.isLeaf))
    if (!tr.doc.nodeAt(pos)) return `clearIncompatible ${pos} (no node)`
    tr.clearIncompatible(pos, type)
    return `clearIncompatible ${pos} ${type.name}`
  },
}

function opWeights(S) {
  let structural = S.name == "text" ? 0 : 1
  return [
    [5, "insertText"], [3, "delete"], [4, "replace"], [4, "openSlice"], [3, "replaceWith"], [2, "insert"],
    [3, "replaceRange"], [2, "replaceRangeWith"], [3, "deleteRange"],
    [4 * structural, "split"], [3 * structural, "join"], [3 * structural, "lift"], [3 * structural, "wrap"],
    [3 * structural, "setBlockType"], [2 * structural, "setNodeMarkup"], [3 * structural, "setNodeAttribute"],
    [S.docAttrs.length ? 2 : 0, "setDocAttribute"],
    [S.marks.length ? 4 : 0, "addMark"], [S.marks.length ? 3 : 0, "removeMark"],
    [S.marks.length ? 3 * structural : 0, "addNodeMark"], [S.marks.length ? 2 * structural : 0, "removeNodeMark"],
    [2 * structural, "clearIncompatible"],
  ].filter(([w]) => w > 0)
}

// runOps drives a Transform on doc until it has `target` steps or made
// `maxOps` attempts. A throwing op ends the sequence when `stopOnThrow`;
// `log`, when given, collects a line per op.
export function runOps(r, S, doc, target, maxOps, stopOnThrow, log) {
  let tr = new Transform(doc), weights = opWeights(S)
  for (let i = 0; i < maxOps && tr.steps.length < target; i++) {
    let name = r.weighted(weights), desc
    if (TRACE) console.error("  op", name)
    try {
      desc = runOp(OPS[name], r, S, tr)
    } catch (e) {
      if (log) log.push(`${name} threw: ${errMessage(e)}`)
      if (stopOnThrow) break
      continue
    }
    if (log) log.push(desc)
  }
  return tr
}

// runOp runs one Transform op, guarded against a prosemirror-transform bug:
// its Fitter (Transform.replace and the methods built on it) loops forever
// once the slice it is placing becomes inconsistent (negative size), which
// it can make itself by dropping nodes, e.g. from a Slice.maxOpen whose
// open end lies in an inline node with content (seed 2002, case 43490).
// While an op runs, reading the size of a negative-size slice more than a
// million times throws instead, so the op counts as throwing; a finishing
// op never comes near that, and the rest of the run (where such slices
// are data, recorded as JS handles them) is not affected.
function runOp(op, r, S, tr) {
  return guardFitter(() => op(r, S, tr))
}

// guardFitter runs f with the guard of runOp: reading the size of a
// negative-size slice a million times throws.
export function guardFitter(f) {
  negativeSizeBudget = 1e6
  try {
    return f()
  } finally {
    negativeSizeBudget = Infinity
  }
}

let negativeSizeBudget = Infinity
const sliceSizeGetter = Object.getOwnPropertyDescriptor(Slice.prototype, "size").get
Object.defineProperty(Slice.prototype, "size", {
  configurable: true,
  get() {
    let size = sliceSizeGetter.call(this)
    if (size < 0 && --negativeSizeBudget < 0)
      throw new Error("inconsistent slice: prosemirror-transform's Fitter would loop forever")
    return size
  },
})

// ---------------------------------------------------------------------------
// Mutations of step JSON

const POS_FIELDS = ["from", "to", "pos", "gapFrom", "gapTo", "insert"]

function clone(x) { return x === undefined ? undefined : JSON.parse(JSON.stringify(x)) }

function posFields(step) {
  return step && typeof step == "object" ? POS_FIELDS.filter(f => typeof step[f] == "number") : []
}

// pickStep picks an index of a step matching pred.
function pickStep(r, steps, pred) {
  let idx = []
  steps.forEach((s, i) => { if (pred(s)) idx.push(i) })
  return idx.length ? r.pick(idx) : -1
}

// sliceNodes lists every node object in a slice JSON (depth first).
function sliceNodes(slice) {
  let out = []
  function walk(nodes) { if (Array.isArray(nodes)) for (let n of nodes) { out.push(n); walk(n.content) } }
  if (slice) walk(slice.content)
  return out
}

export function nodePositions(doc, pred) {
  let list = []
  doc.descendants((node, pos) => { if (pred(node)) list.push(pos) })
  return list
}

function anyNodeJSON(r, S) {
  return genInsert(r, S)[0].toJSON()
}

// Each mutation takes {r, S, doc, steps} (steps: JSON values, a fresh copy)
// and returns {steps, text?: {i: rawText}} or null when it does not apply.
const MUTATIONS = {
  "pos-out-of-range"({ r, steps, doc }) {
    let i = pickStep(r, steps, s => posFields(s).length)
    if (i < 0) return null
    let f = r.pick(posFields(steps[i]))
    steps[i][f] = r.pick([doc.content.size + 1 + r.int(4), doc.content.size + 100, 2147483648, 1e15])
    return { steps }
  },
  "pos-negative"({ r, steps }) {
    let i = pickStep(r, steps, s => posFields(s).length)
    if (i < 0) return null
    steps[i][r.pick(posFields(steps[i]))] = r.pick([-1, -2, -100])
    return { steps }
  },
  "swap-from-to"({ r, steps }) {
    let i = pickStep(r, steps, s => typeof s.from == "number" && typeof s.to == "number")
    if (i < 0) return null
    let s = steps[i]
    if (s.from < s.to) [s.from, s.to] = [s.to, s.from]
    else s.from = s.to + r.range(1, 3)
    return { steps }
  },
  "pos-fractional"({ r, steps }) {
    let i = pickStep(r, steps, s => posFields(s).length)
    if (i < 0) return null
    let f = r.pick(posFields(steps[i]))
    steps[i][f] += r.pick([0.5, 0.25, -0.5, 1e-9])
    return { steps }
  },
  "pos-string"({ r, steps }) {
    let i = pickStep(r, steps, s => posFields(s).length)
    if (i < 0) return null
    let f = r.pick(posFields(steps[i]))
    steps[i][f] = r.pick([String(steps[i][f]), null, true, [steps[i][f]], {}])
    return { steps }
  },
  "field-missing"({ r, steps }) {
    let i = pickStep(r, steps, s => s && typeof s == "object" && Object.keys(s).length > 1)
    if (i < 0) return null
    let keys = Object.keys(steps[i]).filter(k => k != "stepType")
    delete steps[i][r.pick(keys)]
    return { steps }
  },
  // Integral numbers written in a form JSON.stringify never produces:
  // "2.0", "2e0", "20e-1", "-0". Only stepsText carries them exactly.
  "number-format"({ r, steps }) {
    let i = pickStep(r, steps, s => posFields(s).length)
    if (i < 0) return null
    let ord = toOrdered(steps[i]), f = r.pick(posFields(steps[i])), v = steps[i][f]
    let form = r.weighted([
      [5, `${v}.0`], [2, `${v}.000`], [2, `${v}e0`], [1, `${v}E+0`], [1, `${v * 10}e-1`], [v != 0 ? 1 : 0, `${v}0e-1`],
      [v == 0 ? 4 : 0, "-0"], [v == 0 ? 2 : 0, "-0.0"], [v == 0 ? 1 : 0, "0e5"], [v > 0 ? 1 : 0, `${v / 10}e1`],
    ])
    if (!Number.isSafeInteger(v)) return null
    ord.set(f, new RawNumber(form))
    return { steps, text: { [i]: orderedStringify(ord) } }
  },
  // Numbers JSON.parse rounds: too large (Infinity), beyond 2^53, or with
  // more digits than a double holds. JS behaviour, not a parity target.
  "number-extreme"({ r, steps }) {
    let i = pickStep(r, steps, s => posFields(s).length)
    if (i < 0) return null
    let ord = toOrdered(steps[i]), f = r.pick(posFields(steps[i])), v = steps[i][f]
    let form = r.pick(["1e400", "-1e400", "9007199254740993", "1e21", `${v}.00000000000000001`, `${v}.9999999999999999999`, "4.9e-324"])
    ord.set(f, new RawNumber(form))
    return { steps, text: { [i]: orderedStringify(ord) } }
  },
  "duplicate-key"({ r, steps }) {
    let i = pickStep(r, steps, s => posFields(s).length || s.stepType)
    if (i < 0) return null
    let ord = toOrdered(steps[i]), fields = posFields(steps[i])
    let f = fields.length ? r.pick(fields) : "stepType"
    let bogus = f == "stepType" ? "bogus" : r.pick([-5, 99999, "x"])
    // First occurrence bogus, last one the real value: JSON.parse keeps the last.
    if (r.chance(0.7)) ord.pairs.unshift([f, bogus])
    else ord.pairs.push([f, bogus])
    return { steps, text: { [i]: orderedStringify(ord) } }
  },
  "unknown-steptype"({ r, steps }) {
    let i = r.int(steps.length)
    steps[i].stepType = r.pick(["bogus", "Replace", "replace ", "", 0, 5, null, ["replace"], ["addMark"], "__proto__", "toString", "constructor", true])
    return { steps }
  },
  "steptype-missing"({ r, steps }) {
    let i = r.int(steps.length)
    delete steps[i].stepType
    return { steps }
  },
  "step-not-object"({ r, steps }) {
    steps.splice(r.int(steps.length + 1), 0, r.pick([null, 5, "replace", [], true, { stepType: "replace" }, {}]))
    return { steps }
  },
  "slice-unknown-node"({ r, steps }) {
    let i = pickStep(r, steps, s => s.slice && sliceNodes(s.slice).length)
    if (i < 0) return null
    let n = r.pick(sliceNodes(steps[i].slice))
    n.type = r.pick(["bogus", "Paragraph", "", "__proto__", "toString", undefined, 5])
    return { steps }
  },
  "unknown-mark"({ r, steps }) {
    let i = pickStep(r, steps, s => s.mark || (s.slice && sliceNodes(s.slice).length))
    if (i < 0) return null
    let bad = r.pick([{ type: "bogus" }, { type: "EM" }, { type: "toString" }, {}, null, "em", 5])
    if (steps[i].mark) steps[i].mark = bad
    else {
      let n = r.pick(sliceNodes(steps[i].slice))
      n.marks = r.chance(0.2) ? r.pick([{}, "em", 1]) : (n.marks || []).concat([bad])
    }
    return { steps }
  },
  "slice-misfit"({ r, S, steps, doc }) {
    let i = pickStep(r, steps, s => s.stepType == "replace" || s.stepType == "replaceAround")
    let misfit = { content: [anyNodeJSON(r, S)] }
    if (r.chance(0.3)) misfit.content.unshift(anyNodeJSON(r, S))
    if (r.chance(0.3)) misfit.content = [{ type: S.schema.topNodeType.name, content: misfit.content }]
    if (i < 0) {
      let p = r.int(doc.content.size + 1)
      steps.unshift({ stepType: "replace", from: p, to: p, slice: misfit })
      return { steps }
    }
    steps[i].slice = misfit
    return { steps }
  },
  "slice-open-depth"({ r, steps }) {
    let i = pickStep(r, steps, s => s.slice)
    if (i < 0) return null
    let f = r.pick(["openStart", "openEnd"])
    steps[i].slice[f] = r.pick([(steps[i].slice[f] || 0) + r.range(1, 3), -1, "1", "", null, false, 0, 1.5])
    return { steps }
  },
  "slice-content-type"({ r, steps }) {
    let i = pickStep(r, steps, s => s.slice)
    if (i < 0) return null
    steps[i].slice = r.pick([{ content: {} }, { content: "x" }, { content: 0 }, { content: [] }, {}, null, "slice", { content: [null] },
      { openStart: 1, openEnd: 1 }, { content: [], openStart: 1, openEnd: 0 }])
    return { steps }
  },
  "slice-bad-text"({ r, steps }) {
    let i = pickStep(r, steps, s => s.slice && sliceNodes(s.slice).some(n => n.type == "text"))
    if (i < 0) return null
    let n = r.pick(sliceNodes(steps[i].slice).filter(n => n.type == "text"))
    let m = r.int(4)
    if (m == 0) n.text = ""
    else if (m == 1) n.text = r.pick([5, null, ["a"]])
    else if (m == 2) n.attrs = { level: 2 }
    else n.content = [{ type: "text", text: "inner" }]
    return { steps }
  },
  "slice-bad-attrs"({ r, S, steps }) {
    let i = pickStep(r, steps, s => s.slice && sliceNodes(s.slice).some(n => n.type != "text"))
    if (i < 0) return null
    let n = r.pick(sliceNodes(steps[i].slice).filter(n => n.type != "text"))
    let type = S.schema.nodes[n.type], specs = (type && type.spec.attrs) || {}
    let names = Object.keys(specs), m = r.int(5)
    if (m == 0 && names.length) {
      let name = r.pick(names)
      n.attrs = Object.assign({}, n.attrs, { [name]: attrValue(r, name, specs[name], false) })
    } else if (m == 1) n.attrs = r.pick([null, {}, "x", [1], 5])
    else if (m == 2) n.attrs = Object.assign({}, n.attrs, { [r.pick(UNKNOWN_ATTRS)]: 1 })
    else if (m == 3) delete n.attrs
    else n.marks = [{ type: r.pick(S.marks.map(t => t.name).concat(["bogus"])), attrs: r.pick([null, {}, { href: 5 }, { id: "x" }]) }]
    return { steps }
  },
  "slice-required-node"({ r, S, steps, doc }) {
    // Nodes with required attributes, attrs missing or null.
    let types = Object.values(S.schema.nodes).filter(t => !t.isText && t.hasRequiredAttrs())
    if (!types.length) return null
    let type = r.pick(types)
    let node = { type: type.name }
    if (r.chance(0.5)) node.attrs = r.pick([null, {}, genAttrs(r, type)])
    let p = nodePos(r, doc, n => n.isTextblock || n == doc)
    steps.unshift({ stepType: "replace", from: p + (type.isInline ? 1 : 0), to: p + (type.isInline ? 1 : 0), slice: { content: [node] } })
    return { steps }
  },
  "replaceAround-gap"({ r, S, steps, doc }) {
    let i = pickStep(r, steps, s => s.stepType == "replaceAround")
    if (i < 0) {
      let tr = null
      for (let k = 0; k < 6 && !tr; k++) {
        let t = new Transform(doc)
        try { runOp(OPS[r.pick(["wrap", "lift", "setBlockType", "setNodeMarkup"])], r, S, t) } catch (e) { continue }
        if (t.steps.length && t.steps[0].toJSON().stepType == "replaceAround") tr = t
      }
      if (!tr) return null
      steps.unshift(tr.steps[0].toJSON())
      i = 0
    }
    let s = steps[i], m = r.int(6)
    if (m == 0) [s.gapFrom, s.gapTo] = [s.gapTo + 1, s.gapFrom]
    else if (m == 1) s.gapFrom = s.from - r.range(1, 3)
    else if (m == 2) s.gapTo = s.to + r.range(1, 3)
    else if (m == 3) s.insert = (s.slice ? sliceSize(S, s.slice) : 0) + r.range(1, 3)
    else if (m == 4) s.insert = r.pick([-1, 0, 1])
    else { s.gapFrom += r.pick([-1, 1]); s.gapTo += r.pick([-1, 1, 0]) }
    return { steps }
  },
  "structure-overwrite"({ r, steps, doc }) {
    let i = pickStep(r, steps, s => s.stepType == "replace" || s.stepType == "replaceAround")
    if (i < 0 || r.chance(0.4)) {
      let a = r.int(doc.content.size + 1), b = Math.min(doc.content.size, a + r.range(1, 6))
      steps.unshift({ stepType: "replace", from: a, to: b, structure: true })
      return { steps }
    }
    steps[i].structure = r.pick([true, true, "yes", "false", 1, 0, ""])
    return { steps }
  },
  "attr-step"({ r, S, steps, doc }) {
    let kind = r.int(7), step
    let texts = nodePositions(doc, n => n.isText), nodes = nodePositions(doc, n => !n.isText)
    if (kind == 0 && texts.length) step = { stepType: "attr", pos: r.pick(texts), attr: "level", value: 1 }
    else if (kind == 1 && nodes.length) {
      // wrong type for a validated attribute, or a required one reset
      let pos = r.pick(nodes), node = doc.nodeAt(pos), specs = node.type.spec.attrs || {}, names = Object.keys(specs)
      let attr = names.length ? r.pick(names) : "bogus"
      step = { stepType: "attr", pos, attr }
      if (r.chance(0.6)) step.value = attrValue(r, attr, specs[attr], false)
    } else if (kind == 2 && nodes.length) {
      step = { stepType: "attr", pos: r.pick(nodes), attr: r.pick(UNKNOWN_ATTRS), value: r.pick([1, "x", null]) }
    } else if (kind == 3) {
      step = { stepType: "attr", pos: r.pick(nodes.length ? nodes : [0]) + r.pick([0, 1, -1]), attr: r.pick([5, null, undefined, "level"]), value: 2 }
    } else if (kind == 4) {
      step = { stepType: "docAttr", attr: r.pick(S.docAttrs.concat(UNKNOWN_ATTRS, [5, null])), value: r.pick([1, "v", null, [3], { a: 1 }, true]) }
      if (r.chance(0.3)) delete step.value
    } else if (kind == 5) {
      // position that is not in front of a node (closing token or end)
      let ends = []
      doc.descendants((n, p) => { if (!n.isLeaf) ends.push(p + n.nodeSize - 1) })
      step = { stepType: "attr", pos: ends.length ? r.pick(ends) : doc.content.size, attr: "level", value: 1 }
    } else {
      let pos = nodes.length ? r.pick(nodes) : 0, node = doc.nodeAt(pos)
      let names = node && node.type.spec.attrs ? Object.keys(node.type.spec.attrs) : ["x"]
      let attr = r.pick(names)
      step = { stepType: "attr", pos, attr, value: attrValue(r, attr, node && node.type.spec.attrs && node.type.spec.attrs[attr]) }
    }
    if (!step) return null
    steps.splice(r.int(steps.length + 1), 0, step)
    return { steps }
  },
  "node-mark-step"({ r, S, steps, doc }) {
    if (!S.marks.length) return null
    let all = nodePositions(doc, () => true)
    let pos = r.chance(0.8) && all.length ? r.pick(all) : r.pick([doc.content.size, -1, doc.content.size + 3])
    let mark = genMark(r, S).toJSON()
    if (r.chance(0.15)) mark = r.pick([{ type: "bogus" }, null, { type: "link" }, { type: "link", attrs: { href: 3 } }])
    steps.splice(r.int(steps.length + 1), 0, { stepType: r.pick(["addNodeMark", "removeNodeMark"]), pos, mark })
    return { steps }
  },
  "mark-step"({ r, S, steps, doc }) {
    if (!S.marks.length) return null
    let size = doc.content.size, a = r.int(size + 1), b = r.int(size + 1)
    if (a > b && r.chance(0.7)) [a, b] = [b, a]
    let mark = genMark(r, S).toJSON()
    if (r.chance(0.2)) mark = r.pick([{ type: "bogus" }, null, "em", { type: "comment" }, { type: "comment", attrs: { id: "1" } }, { type: "em", attrs: { x: 1 } }])
    steps.splice(r.int(steps.length + 1), 0, { stepType: r.pick(["addMark", "removeMark"]), mark, from: a, to: b })
    return { steps }
  },
  "markSet"({ r, S, steps, doc }) {
    if (!S.marks.length) return null
    let inner = [], size = doc.content.size
    for (let n = r.weighted([[1, 0], [3, 1], [3, 2], [2, 3]]); n > 0; n--) {
      let a = r.int(size + 1), b = Math.min(size, a + r.int(10))
      inner.push({ stepType: r.pick(["addMark", "removeMark"]), mark: genMark(r, S).toJSON(), from: a, to: b })
    }
    let m = r.int(10)
    if (m == 0) inner.push({ stepType: "markSet", steps: [] })
    else if (m == 1) inner.push({ stepType: "replace", from: 0, to: 0 })
    else if (m == 2) inner.push(null)
    let step = { stepType: "markSet", steps: inner }
    if (m == 3) step.steps = r.pick([undefined, {}, "x", null])
    steps.splice(r.int(steps.length + 1), 0, step)
    return { steps }
  },
  "extra-fields"({ r, steps }) {
    let i = pickStep(r, steps, s => s && typeof s == "object")
    if (i < 0) return null
    steps[i][r.pick(["extra", "__proto__", "slice2", "version"])] = r.pick([1, "x", null, { a: [] }])
    return { steps }
  },
}

function sliceSize(S, json) {
  try { return Slice.fromJSON(S.schema, json).size } catch (e) { return 0 }
}

const MUTATION_WEIGHTS = [
  [4, "pos-out-of-range"], [3, "pos-negative"], [4, "swap-from-to"], [2, "pos-fractional"], [3, "pos-string"],
  [3, "field-missing"], [3, "number-format"], [1, "number-extreme"], [1, "duplicate-key"], [3, "unknown-steptype"], [1, "steptype-missing"],
  [1, "step-not-object"], [3, "slice-unknown-node"], [3, "unknown-mark"], [5, "slice-misfit"], [4, "slice-open-depth"],
  [2, "slice-content-type"], [2, "slice-bad-text"], [4, "slice-bad-attrs"], [2, "slice-required-node"],
  [5, "replaceAround-gap"], [4, "structure-overwrite"], [6, "attr-step"], [4, "node-mark-step"], [4, "mark-step"],
  [8, "markSet"], [1, "extra-fields"],
]

// ---------------------------------------------------------------------------
// Recording what JS does

export function errMessage(e) { return e && typeof e == "object" && "message" in e ? String(e.message) : String(e) }
export function errName(e) { return e && typeof e == "object" && e.constructor ? e.constructor.name : typeof e }

// evaluate parses and applies the wire steps in order, as a server does.
function evaluate(schema, doc, wire) {
  let steps = [], docs = [doc]
  for (let i = 0; i < wire.length; i++) {
    let step
    try {
      step = Step.fromJSON(schema, JSON.parse(wire[i]))
    } catch (e) {
      return { fail: { failedStep: i, kind: "fromJSON-throw", error: errMessage(e), errorName: errName(e) } }
    }
    let result
    try {
      result = step.apply(doc)
    } catch (e) {
      return { fail: { failedStep: i, kind: "apply-throw", error: errMessage(e), errorName: errName(e) } }
    }
    if (result.failed != null) return { fail: { failedStep: i, kind: "apply-failed", error: result.failed } }
    doc = result.doc
    steps.push(step)
    docs.push(doc)
  }
  return { steps, docs }
}

function mapEntry(map, pos, assoc) {
  let m = map.mapResult(pos, assoc)
  return [pos, assoc, m.pos, m.deleted, m.deletedBefore, m.deletedAfter, m.deletedAcross]
}

function samplePositions(r, doc, n) {
  let size = doc.content.size, out = new Set()
  if (r.chance(0.5)) out.add(0)
  if (r.chance(0.5)) out.add(size)
  while (out.size < n && out.size <= size) out.add(r.int(size + 1))
  return [...out].sort((a, b) => a - b)
}

export function stepJSONText(step) { return JSON.stringify(step.toJSON()) }

function tryCall(f) {
  try { return f() } catch (e) { return { error: errMessage(e), errorName: errName(e) } }
}

// rebaseSteps is prosemirror-collab's rebaseSteps: undo `steps` (whose
// inverses are `inverted`), apply `over`, then re-apply each step mapped
// through the mapping since its inverse, mirrored so positions inside
// content the step itself deleted come back.
function collabRebase(docA, steps, inverted, over) {
  let tr = new Transform(docA), out = { steps: [] }
  try {
    for (let i = steps.length - 1; i >= 0; i--) tr.step(inverted[i])
    for (let s of over) tr.step(s)
  } catch (e) {
    return { error: errMessage(e), errorName: errName(e) }
  }
  for (let i = 0, mapFrom = steps.length; i < steps.length; i++) {
    let mapped = steps[i].map(tr.mapping.slice(mapFrom))
    mapFrom--
    if (!mapped) { out.steps.push(null); continue }
    let entry = { step: stepJSONText(mapped) }
    let res
    try { res = tr.maybeStep(mapped) } catch (e) {
      entry.error = errMessage(e)
      entry.errorName = errName(e)
      out.steps.push(entry)
      return out
    }
    if (res.failed != null) entry.failed = res.failed
    else tr.mapping.setMirror(mapFrom, tr.steps.length - 1)
    out.steps.push(entry)
  }
  out.doc = JSON.stringify(tr.doc.toJSON())
  out.mirror = tr.mapping.mirror || []
  out._mapping = tr.mapping
  return out
}

function record(r, S, doc, wire, rec) {
  let ev = evaluate(S.schema, doc, wire)
  if (ev.fail) { rec.result = ev.fail; return }
  let { steps, docs } = ev, final = docs[docs.length - 1]
  rec.result = { doc: JSON.stringify(final.toJSON()) }

  rec.inverted = steps.map((s, i) => tryCall(() => stepJSONText(s.invert(docs[i]))))

  let mapping = new Mapping(steps.map(s => s.getMap()))
  rec.positions = samplePositions(r, doc, 8)
  rec.mapped = []
  rec.mappedFlags = []
  for (let p of rec.positions) for (let assoc of [-1, 1]) {
    let e = mapEntry(mapping, p, assoc)
    rec.mapped.push(e.slice(0, 4))
    rec.mappedFlags.push(e.slice(4))
  }

  rec.stepMaps = steps.map((s, i) => {
    let map = s.getMap(), ranges = [], mapped = [], invertedMapped = []
    map.forEach((a, b, c, d) => ranges.push([a, b, c, d]))
    for (let p of samplePositions(r, docs[i], 3)) for (let assoc of [-1, 1]) mapped.push(mapEntry(map, p, assoc))
    let inv = map.invert()
    for (let p of samplePositions(r, docs[i + 1], 3)) for (let assoc of [-1, 1]) invertedMapped.push(mapEntry(inv, p, assoc))
    return { ranges, mapped, invertedMapped }
  })

  rec.merged = []
  for (let i = 0; i + 1 < steps.length; i++) {
    let m = tryCall(() => steps[i].merge(steps[i + 1]))
    rec.merged.push(m && m.toJSON ? JSON.stringify(m.toJSON()) : m)
  }

  // A concurrent branch from the same start document.
  let otherTr = runOps(r, S, doc, r.range(1, 3), 8, false, null)
  // Only what survives a JSON round trip (a node whose default attribute
  // fails its own validator does not).
  let other = []
  for (let s of otherTr.steps) {
    try { other.push(Step.fromJSON(S.schema, JSON.parse(stepJSONText(s)))) } catch (e) { break }
  }
  let otherMapping = new Mapping(other.map(s => s.getMap()))
  let rebased = { other: other.map(s => s.toJSON()) }
  rebased.mapped = steps.map(s => {
    let m = tryCall(() => s.map(otherMapping))
    return m && m.toJSON ? stepJSONText(m) : m
  })
  if (rec.inverted.every(x => typeof x == "string")) {
    let invertedSteps = steps.map((s, i) => s.invert(docs[i]))
    let collab = collabRebase(final, steps, invertedSteps, other)
    if (collab._mapping) {
      let full = collab._mapping
      delete collab._mapping
      collab.positions = samplePositions(r, final, 4)
      collab.mapped = []
      for (let p of collab.positions) for (let assoc of [-1, 1]) collab.mapped.push(mapEntry(full, p, assoc))
    }
    rebased.collab = collab
  }
  rec.rebased = rebased
}

// ---------------------------------------------------------------------------
// Cases

// firstDifference returns the index of the first step that a mutation
// changed, inserted or wrote by hand (-1 if none).
function firstDifference(before, after, text) {
  for (let i = 0; i < after.length; i++)
    if (text && text[i] != null || i >= before.length || JSON.stringify(before[i]) !== JSON.stringify(after[i])) return i
  return -1
}

function makeCase(seed, index, schemas) {
  let r = new Rand(seed, index)
  let S = schemas[r.weighted([[1, "text"], [4, "basic"], [3, "tables"], [4, "stress"]])]
  let startDoc = genDoc(r, S)
  let docJSON = startDoc.toJSON()
  let doc = Node.fromJSON(S.schema, JSON.parse(JSON.stringify(docJSON)))

  let ops = [], steps = []
  for (let attempt = 0; attempt < 3 && !steps.length; attempt++) {
    if (attempt) ops.push("(no steps, again)")
    let tr = runOps(r, S, doc, r.range(1, 6), 10, true, ops)
    steps = tr.steps.slice(0, 6).map(s => JSON.parse(stepJSONText(s)))
  }

  let rec = { seed, case: index, schema: S.name }
  let text = null
  if (r.chance(0.4) || !steps.length) {
    if (!steps.length) steps = [{ stepType: "replace", from: 0, to: 0 }]
    for (let attempt = 0; attempt < 12; attempt++) {
      let name = r.weighted(MUTATION_WEIGHTS)
      let res = MUTATIONS[name]({ r, S, doc, steps: clone(steps) })
      if (!res) continue
      rec.mutation = name
      let at = firstDifference(steps, res.steps, res.text)
      if (at >= 0) rec.mutatedStep = at
      steps = res.steps
      text = res.text || null
      break
    }
  }
  rec.ops = ops
  rec.doc = docJSON
  // The bytes a client would send: JSON.stringify, or hand-written text.
  let wire = steps.map((s, i) => text && text[i] != null ? text[i] : JSON.stringify(s === undefined ? null : s))
  rec.steps = wire.map(t => JSON.parse(t))
  if (text) rec.stepsText = wire
  record(r, S, doc, wire, rec)
  return rec
}

// ---------------------------------------------------------------------------
// Main

function parseArgs(argv) {
  let args = { seed: 1, count: 100, out: null, only: null }
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i], v = argv[i + 1]
    if (a == "--seed") { args.seed = Number(v); i++ }
    else if (a == "--count") { args.count = Number(v); i++ }
    else if (a == "--out") { args.out = v; i++ }
    else if (a == "--only") { args.only = Number(v); i++ }
    else throw new Error(`unknown argument ${a}\nusage: node gen-steps.mjs --seed N --count N --out FILE [--only I]`)
  }
  if (!Number.isSafeInteger(args.seed) || args.seed < 0) throw new Error("--seed must be a non-negative integer")
  return args
}

function main() {
  let args = parseArgs(process.argv.slice(2))
  let schemas = loadSchemas(), infos = {}
  for (let name of schemaNames) infos[name] = new SchemaInfo(name, schemas[name])
  let log = args.out && args.out != "-" ? console.log : console.error
  log(`seed ${args.seed}`)
  let fd = args.out && args.out != "-" ? fs.openSync(args.out, "w") : 1
  let stats = {}
  let bump = (table, key) => {
    let t = stats[table] || (stats[table] = new Map)
    t.set(key, (t.get(key) || 0) + 1)
  }
  let buf = [], start = Date.now()
  let first = args.only != null ? args.only : 0, end = args.only != null ? args.only + 1 : args.count
  for (let i = first; i < end; i++) {
    if (TRACE) console.error("case", i)
    let rec = makeCase(args.seed, i, infos)
    let outcome = rec.result.doc != null ? "ok" : rec.result.kind
    bump("schema", rec.schema)
    bump("result", outcome)
    bump("mutation", rec.mutation || "(none)")
    bump("mutation result", (rec.mutation || "(none)") + ":" + outcome)
    let known = new Set(["replace", "replaceAround", "addMark", "removeMark", "markSet", "addNodeMark", "removeNodeMark", "attr", "docAttr"])
    for (let s of rec.steps) {
      let type = s && typeof s == "object" && known.has(s.stepType) ? s.stepType : "(other)"
      bump("stepType", type)
      if (outcome == "ok") bump("stepType in applied cases", type)
    }
    if (rec.inverted) for (let x of rec.inverted) bump("inverted", typeof x == "string" ? JSON.parse(x).stepType : "(threw)")
    for (let o of rec.ops) if (o[0] != "(") bump("op", /threw/.test(o) ? o.split(" ")[0] + " (threw)" : o.split(/[ (]/)[0])
    buf.push(JSON.stringify(rec))
    if (buf.length >= 200) { fs.writeSync(fd, buf.join("\n") + "\n"); buf = [] }
  }
  if (buf.length) fs.writeSync(fd, buf.join("\n") + "\n")
  if (fd != 1) fs.closeSync(fd)
  let secs = (Date.now() - start) / 1000
  log(`${end - first} cases in ${secs.toFixed(1)}s`)
  for (let [k, table] of Object.entries(stats)) {
    let entries = [...table].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    log(`${k}: ` + entries.map(([n, c]) => `${n}=${c}`).join(" "))
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) main()
