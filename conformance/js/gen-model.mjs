// Generates model conformance cases: random documents (valid, and
// mutated into every kind of invalid) for the text, basic, tables and
// stress schemas, with what prosemirror-model 1.25.13 answers for each:
// Node.fromJSON, toJSON, check, ResolvedPos facts, slices, content
// matches and replace. The output format is described in FORMAT-model.md.
//
// Usage: node gen-model.mjs [--seed N] [--count N] [--out FILE]
//
// The same seed and count give the same file byte for byte. Without
// --seed a random seed is chosen; it is printed on stderr either way.

import fs from "node:fs"
import { fileURLToPath } from "node:url"
import { createHash } from "node:crypto"
import { Node, Fragment } from "prosemirror-model"
import { loadSchemas, schemaNames } from "./schemas.mjs"
import { Ordered, RawNumber, parse, stringify, toOrdered } from "./ordered-json.mjs"
import { Rng, parseGenArgs } from "./gen-cli.mjs"

export const FORMAT_VERSION = 1

// caseSeed derives an independent seed for case `id`.
function caseSeed(seed, id) {
  let h = (seed ^ Math.imul(id + 1, 0x9e3779b1)) >>> 0
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0
  return (h ^ (h >>> 16)) >>> 0
}

// ---- random values -------------------------------------------------------

const textPieces = [
  "hello", "world", "a", "x", "the quick brown fox", "ProseMirror", " ", "  ", "lorem ipsum", "0",
  "é", "ñandú", "Grüße", "ŁÓDŹ", "漢字", "日本語のテキスト", "한국어", "中", "Ελληνικά", "עברית",
  "😀", "👍🏽", "🇫🇷", "👩‍💻", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "🎉🎉",
  "e\u0301", "\"quoted\"", "back\\slash", "<b>&amp;</b>", "\u2028", "\u2029", "\t", "\n", "\r\n",
  "\u0000", "\u001f", "\u007f", "\u00a0", "\ufeff", "\u200b", "/", "{}[],:",
]

const keyPool = ["b", "a", "2", "10", "1", "0", "01", "-1", "1.5", "4294967294", "4294967295",
  "9007199254740993", "", "é", "key with space", "__proto__", "z", "00", "999"]

const rawNumbers = ["1.5", "1e21", "-0", "2.0", "1E2", "1e400", "12345678901234567890", "0.1", "1e-7", "-3", "5e-324", "9007199254740993"]

class Values {
  constructor(rng) { this.rng = rng }

  text(maxPieces = 4) {
    let n = this.rng.range(1, maxPieces), s = ""
    for (let i = 0; i < n; i++) s += this.rng.pick(textPieces)
    return s
  }

  shortString() {
    return this.rng.pick(["", "x", "left", "https://example.com/a?b=1&c=<2>", "é", "😀", "with \"quotes\"", "1", "null", this.text(2)])
  }

  number() {
    let r = this.rng
    switch (r.weighted({ small: 12, neg: 4, frac: 1, big: 2 })) {
      case "small": return r.int(10)
      case "neg": return -r.range(1, 1000)
      case "frac": return r.pick([1.5, 0.25, -2.75, 3.14159])
      default: return r.pick([2 ** 31, 2 ** 32 + 1, 2 ** 53 - 1, 1e15])
    }
  }

  // object returns a plain object; its keys end up in JS order anyway.
  object(depth) {
    let o = {}, n = this.rng.int(4)
    for (let i = 0; i < n; i++) o[this.rng.pick(keyPool)] = this.any(depth + 1)
    return o
  }

  array(depth) {
    let n = this.rng.int(4), a = []
    for (let i = 0; i < n; i++) a.push(this.any(depth + 1))
    return a
  }

  any(depth = 0) {
    let kinds = depth > 2 ? ["string", "number", "boolean", "null"] : ["string", "number", "boolean", "null", "object", "array"]
    return this.ofType(this.rng.pick(kinds), depth)
  }

  ofType(type, depth = 0) {
    switch (type) {
      case "string": return this.shortString()
      case "number": return this.number()
      case "boolean": return this.rng.chance(0.5)
      case "null": return null
      case "object": return this.rng.chance(0.7) ? this.object(depth) : this.array(depth)
      case "array": return this.array(depth)
      default: return this.any(depth)
    }
  }

  // forValidate returns a value passing a validate type string ("string|null" …).
  forValidate(validate) {
    if (typeof validate != "string") return this.any()
    let types = validate.split("|").filter(t => ["string", "number", "boolean", "null", "object"].includes(t))
    return types.length ? this.ofType(this.rng.pick(types)) : this.any()
  }

  // against returns a value failing a validate type string, or undefined.
  against(validate) {
    let types = validate.split("|")
    let options = ["string", "number", "boolean", "null", "object"].filter(t => !types.includes(t))
    return options.length ? this.ofType(this.rng.pick(options)) : undefined
  }
}

function validateOf(type, attr) {
  let spec = type.spec.attrs && type.spec.attrs[attr]
  return spec && typeof spec.validate == "string" ? spec.validate : null
}

function passes(type, attr, value) {
  try { type.attrs[attr].validate && type.attrs[attr].validate(value); return true } catch { return false }
}

// ---- document generation -------------------------------------------------

class DocGen {
  constructor(rng, schema) {
    this.rng = rng
    this.schema = schema
    this.values = new Values(rng)
    this.markTypes = Object.values(schema.marks)
  }

  // attrs returns random attributes: every required one, some optional
  // ones (almost always those whose default fails its own validator).
  attrs(type) {
    let out = {}, any = false
    for (let name in type.attrs) {
      let attr = type.attrs[name]
      let include = attr.isRequired || this.rng.chance(passes(type, name, attr.default) ? 0.5 : 0.9)
      if (include) { out[name] = this.values.forValidate(validateOf(type, name)); any = true }
    }
    return any ? out : null
  }

  mark(type) { return type.create(this.attrs(type)) }

  marksFor(parentType) {
    if (!this.markTypes.length || this.rng.chance(0.55)) return []
    let allowed = this.markTypes.filter(m => parentType.allowsMarkType(m))
    if (!allowed.length) return []
    let set = [], n = this.rng.range(1, 3)
    for (let i = 0; i < n; i++) set = this.mark(this.rng.pick(allowed)).addToSet(set)
    return set
  }

  doc() {
    let r = this.rng, top = this.schema.topNodeType
    let shape = r.weighted({ normal: 80, large: 5, empty: 5, filled: 5, tiny: 5 })
    if (shape == "empty") return top.create(this.attrs(top))
    if (shape == "filled") return top.createAndFill(this.attrs(top))
    this.budget = shape == "large" ? r.range(150, 300) : shape == "tiny" ? 1 : r.range(2, 30)
    this.maxDepth = r.chance(0.15) ? 14 : 6
    this.stop = shape == "large" ? 0.03 : 0.3
    return this.node(top, 0)
  }

  node(type, depth) {
    let attrs = this.attrs(type)
    if (type.isLeaf) return type.create(attrs)
    return type.create(attrs, this.content(type, depth))
  }

  content(type, depth) {
    let r = this.rng, match = type.contentMatch, children = []
    for (;;) {
      let exhausted = this.budget <= 0 || depth >= this.maxDepth
      if (match.validEnd && (exhausted || match.edgeCount == 0 || r.chance(this.stop))) break
      if (exhausted) {
        let fill = match.fillBefore(Fragment.empty, true)
        if (fill) {
          fill.forEach(n => children.push(n))
          this.budget -= fill.childCount
          break
        }
      }
      let edge = match.edge(r.int(match.edgeCount))
      let child = edge.type.isText ? this.schema.text(this.values.text()) : this.node(edge.type, depth + 1)
      let marks = this.marksFor(type)
      if (marks.length) child = child.mark(marks)
      children.push(child)
      this.budget--
      match = edge.next
    }
    return children
  }

  // anyNode returns a filled node of a random type (or a text node).
  anyNode() {
    let types = Object.values(this.schema.nodes)
    for (let tries = 0; tries < 10; tries++) {
      let type = this.rng.pick(types)
      if (type.isText) return this.schema.text(this.values.text(2))
      if (type == this.schema.topNodeType && this.rng.chance(0.8)) continue
      let node = type.createAndFill(this.attrs(type))
      if (node) return node
    }
    return this.schema.text("fallback")
  }
}

// ---- mutations -----------------------------------------------------------

// walk lists every node object of an Ordered document with its parent.
function walk(json) {
  let out = []
  function rec(node, parent, index, depth) {
    if (!(node instanceof Ordered)) return
    out.push({ node, parent, index, depth })
    let content = node.get("content")
    if (Array.isArray(content)) content.forEach((c, i) => rec(c, node, i, depth + 1))
  }
  rec(json, null, -1, 0)
  return out
}

const isTextJSON = n => n.get("type") === "text"

// deepCopy copies an Ordered value keeping what JSON.parse would lose:
// duplicate keys and the spelling of raw numbers (a copied "1e400" stays
// 1e400 in the input instead of becoming Infinity, which JSON cannot write).
const deepCopy = v => parse(stringify(v))

class Mutator {
  constructor(rng, schema, gen) {
    this.rng = rng
    this.schema = schema
    this.gen = gen
    this.values = gen.values
  }

  typeOf(node) {
    let name = node.get("type")
    return typeof name == "string" ? this.schema.nodes[name] || null : null
  }

  // pickNode picks a node entry matching pred.
  pickNode(json, pred = () => true) {
    let all = walk(json).filter(pred)
    return all.length ? this.rng.pick(all) : null
  }

  nodeJSON(node) { return toOrdered(node.toJSON()) }

  markJSON(type) { return toOrdered(this.gen.mark(type).toJSON()) }

  addMark(node, markJSON) {
    let marks = node.get("marks")
    if (!Array.isArray(marks)) node.set("marks", marks = [])
    marks.splice(this.rng.int(marks.length + 1), 0, markJSON)
  }

  // Each mutation returns the document (possibly replaced) or null when it
  // does not apply to this document.

  // -- parse errors --
  "error:unknown-node-type"(json) {
    let e = this.pickNode(json)
    e.node.set("type", this.rng.pick(["nonexistent", "Paragraph", "", "__proto__", "constructor", "toString", "doc ", "hasOwnProperty"]))
    return json
  }
  "error:unknown-mark"(json) {
    if (!Object.keys(this.schema.marks).length && this.rng.chance(0.5)) {
      let e = this.pickNode(json, e => isTextJSON(e.node))
      if (e) { this.addMark(e.node, Ordered.of("type", "em")); return json }
    }
    let e = this.pickNode(json)
    this.addMark(e.node, Ordered.of("type", this.rng.pick(["bogus", "EM", "__proto__", "valueOf", "link "])))
    return json
  }
  "error:empty-text"(json) {
    let e = this.pickNode(json, e => isTextJSON(e.node))
    if (!e) return null
    e.node.set("text", "")
    return json
  }
  "error:text-not-string"(json) {
    let e = this.pickNode(json, e => isTextJSON(e.node))
    if (!e) return null
    let v = this.rng.pick([5, null, ["a"], new Ordered(), true, undefined])
    if (v === undefined) e.node.delete("text")
    else e.node.set("text", v)
    return json
  }
  "error:missing-type"(json) {
    this.pickNode(json).node.delete("type")
    return json
  }
  "error:type-not-string"(json) {
    this.pickNode(json).node.set("type", this.rng.pick([5, true, null, new Ordered(), 0, []]))
    return json
  }
  "error:content-not-array"(json) {
    let e = this.pickNode(json, e => !isTextJSON(e.node))
    if (!e) return null
    e.node.set("content", this.rng.pick([new Ordered(), "abc", 5, true, Ordered.of("type", "paragraph")]))
    return json
  }
  "error:bad-content-element"(json) {
    let e = this.pickNode(json, e => !isTextJSON(e.node))
    if (!e) return null
    let content = e.node.get("content")
    if (!Array.isArray(content)) e.node.set("content", content = [])
    content.splice(this.rng.int(content.length + 1), 0, this.rng.pick([null, 0, false, 5, "paragraph", [], new Ordered(), ""]))
    return json
  }
  "error:marks-not-array"(json) {
    let e = this.pickNode(json)
    e.node.set("marks", this.rng.pick([new Ordered(), "em", 5, true, Ordered.of("type", "em")]))
    return json
  }
  "error:bad-mark-element"(json) {
    let e = this.pickNode(json)
    this.addMark(e.node, this.rng.pick([new Ordered(), null, "em", 0, 5, false, Ordered.of("attrs", new Ordered()), []]))
    return json
  }
  "error:mark-attr-invalid"(json) {
    let candidates = Object.values(this.schema.marks).filter(m => Object.keys(m.attrs).some(a => validateOf(m, a)))
    if (!candidates.length) return null
    let type = this.rng.pick(candidates), mark = this.markJSON(type)
    let attrName = this.rng.pick(Object.keys(type.attrs).filter(a => validateOf(type, a)))
    let bad = this.values.against(validateOf(type, attrName))
    if (bad === undefined) return null
    let attrs = mark.get("attrs") || new Ordered()
    attrs.set(attrName, toOrdered(bad))
    mark.set("attrs", attrs)
    this.addMark(this.pickNode(json).node, mark)
    return json
  }
  "error:mark-required-attr-missing"(json) {
    let candidates = Object.values(this.schema.marks).filter(m => Object.values(m.attrs).some(a => a.isRequired))
    if (!candidates.length) return null
    let type = this.rng.pick(candidates), mark = this.markJSON(type)
    let attrs = mark.get("attrs")
    if (this.rng.chance(0.3)) mark.delete("attrs")
    else for (let name in type.attrs) if (type.attrs[name].isRequired) attrs.delete(name)
    this.addMark(this.pickNode(json).node, mark)
    return json
  }
  "error:attr-invalid"(json) {
    let e = this.pickNode(json, e => { let t = this.typeOf(e.node); return t && Object.keys(t.attrs).some(a => validateOf(t, a)) })
    if (!e) return null
    let type = this.typeOf(e.node), attrName = this.rng.pick(Object.keys(type.attrs).filter(a => validateOf(type, a)))
    let bad = this.values.against(validateOf(type, attrName))
    if (bad === undefined) return null
    let attrs = e.node.get("attrs")
    if (!(attrs instanceof Ordered)) e.node.set("attrs", attrs = new Ordered())
    attrs.set(attrName, toOrdered(bad))
    return json
  }
  "error:required-attr-missing"(json) {
    let e = this.pickNode(json, e => { let t = this.typeOf(e.node); return t && t.hasRequiredAttrs() })
    if (!e) {
      // Bring in a node with required attributes first.
      let types = Object.values(this.schema.nodes).filter(t => t.hasRequiredAttrs())
      let host = this.pickNode(json, e => !isTextJSON(e.node))
      if (!types.length || !host) return null
      let type = this.rng.pick(types)
      let node = this.nodeJSON(type.createAndFill(this.gen.attrs(type)) || this.gen.anyNode())
      let content = host.node.get("content")
      if (!Array.isArray(content)) host.node.set("content", content = [])
      content.splice(this.rng.int(content.length + 1), 0, node)
      e = { node }
      if (!this.typeOf(node) || !this.typeOf(node).hasRequiredAttrs()) return json
    }
    let type = this.typeOf(e.node), attrs = e.node.get("attrs")
    let choice = this.rng.int(3)
    if (choice == 0 || !(attrs instanceof Ordered)) e.node.delete("attrs")
    else if (choice == 1) e.node.set("attrs", null)
    else for (let name in type.attrs) if (type.attrs[name].isRequired) attrs.delete(name)
    return json
  }
  "error:root-not-object"() {
    return this.rng.pick([null, 5, "doc", [], true, false, 0, new Ordered(), [Ordered.of("type", this.schema.topNodeType.name)]])
  }

  // -- schema violations (parse, then check() fails, mostly) --
  "schema:wrong-child"(json) {
    let e = this.pickNode(json, e => !isTextJSON(e.node))
    if (!e) return null
    let content = e.node.get("content")
    if (!Array.isArray(content)) e.node.set("content", content = [])
    content.splice(this.rng.int(content.length + 1), 0, this.nodeJSON(this.gen.anyNode()))
    return json
  }
  "schema:remove-child"(json) {
    let e = this.pickNode(json, e => e.parent)
    if (!e) return null
    e.parent.get("content").splice(e.index, 1)
    return json
  }
  "schema:empty-content"(json) {
    let e = this.pickNode(json, e => Array.isArray(e.node.get("content")))
    if (!e) return null
    if (this.rng.chance(0.5)) e.node.delete("content")
    else e.node.set("content", [])
    return json
  }
  "schema:duplicate-child"(json) {
    let e = this.pickNode(json, e => e.parent)
    if (!e) return null
    let copy = deepCopy(e.node)
    e.parent.get("content").splice(e.index, 0, copy)
    return json
  }
  "schema:disallowed-mark"(json) {
    let e = this.pickNode(json, e => {
      let pt = e.parent && this.typeOf(e.parent)
      return pt && this.gen.markTypes.some(m => !pt.allowsMarkType(m))
    })
    if (!e) return null
    let pt = this.typeOf(e.parent)
    this.addMark(e.node, this.markJSON(this.rng.pick(this.gen.markTypes.filter(m => !pt.allowsMarkType(m)))))
    return json
  }
  "schema:excluded-marks"(json) {
    let e = this.pickNode(json, e => e.parent)
    if (!e || !this.gen.markTypes.length) return null
    let a = this.rng.pick(this.gen.markTypes)
    let b = this.rng.chance(0.5) ? a : this.rng.pick(this.gen.markTypes.filter(m => m.excludes(a) || a.excludes(m)).concat([a]))
    this.addMark(e.node, this.markJSON(a))
    this.addMark(e.node, this.rng.chance(0.3) ? this.markJSON(a) : this.markJSON(b))
    return json
  }
  "schema:root-type"(json) {
    let types = Object.values(this.schema.nodes).filter(t => !t.isText && t != this.schema.topNodeType && !t.hasRequiredAttrs())
    if (!types.length) return null
    json.set("type", this.rng.pick(types).name)
    return json
  }
  "schema:root-text"() {
    return Ordered.of("type", "text", "text", this.values.text())
  }
  "schema:leaf-with-content"(json) {
    let e = this.pickNode(json, e => { let t = this.typeOf(e.node); return t && t.isLeaf && !t.isText })
    if (!e) {
      let leaves = Object.values(this.schema.nodes).filter(t => t.isLeaf && !t.isText)
      if (!leaves.length) return null
      let type = this.rng.pick(leaves)
      let host = this.pickNode(json, e => !isTextJSON(e.node))
      if (!host) return null
      let node = this.nodeJSON(type.create(this.gen.attrs(type)))
      let content = host.node.get("content")
      if (!Array.isArray(content)) host.node.set("content", content = [])
      content.splice(this.rng.int(content.length + 1), 0, node)
      e = { node }
    }
    e.node.set("content", [this.nodeJSON(this.gen.anyNode())])
    return json
  }

  // -- accepted, normalised by fromJSON/toJSON --
  "benign:unsorted-marks"(json) {
    let e = this.pickNode(json, e => Array.isArray(e.node.get("marks")) && e.node.get("marks").length > 1)
    if (!e) return null
    e.node.get("marks").reverse()
    return json
  }
  "benign:split-text"(json) {
    let e = this.pickNode(json, e => e.parent && isTextJSON(e.node) && typeof e.node.get("text") == "string" && e.node.get("text").length > 1)
    if (!e) return null
    let text = e.node.get("text"), at = this.rng.range(1, text.length - 1)
    if (/[\ud800-\udbff]/.test(text[at - 1])) at++ // keep surrogate pairs whole in the input
    if (at >= text.length) return null
    let second = deepCopy(e.node)
    e.node.set("text", text.slice(0, at))
    second.set("text", text.slice(at))
    e.parent.get("content").splice(e.index + 1, 0, second)
    return json
  }
  "benign:extra-attrs"(json) {
    let e = this.pickNode(json, e => !isTextJSON(e.node))
    if (!e) return null
    let attrs = e.node.get("attrs")
    if (!(attrs instanceof Ordered)) e.node.set("attrs", attrs = new Ordered())
    attrs.set(this.rng.pick(["unknown", "2", "data-x", "__proto__", "constructor", "level", "src"]), toOrdered(this.values.any()))
    return json
  }
  "benign:text-attrs"(json) {
    let e = this.pickNode(json, e => isTextJSON(e.node))
    if (!e) return null
    e.node.set("attrs", this.rng.pick([Ordered.of("x", 1), null, "str", Ordered.of("level", 2)]))
    return json
  }
  "benign:empty-fields"(json) {
    let e = this.pickNode(json)
    let field = this.rng.pick(isTextJSON(e.node) ? ["marks", "content"] : ["marks", "content", "attrs"])
    if (field == "content" && Array.isArray(e.node.get("content")) && e.node.get("content").length) return null
    if (field == "marks" && Array.isArray(e.node.get("marks")) && e.node.get("marks").length) return null
    if (field == "attrs" && e.node.has("attrs")) return null
    e.node.set(field, field == "attrs" ? new Ordered() : [])
    return json
  }
  "benign:falsy-fields"(json) {
    let e = this.pickNode(json)
    let field = this.rng.pick(["marks", "content", "attrs"])
    e.node.set(field, this.rng.pick([0, false, "", null]))
    return json
  }
  "benign:text-node-content"(json) {
    let e = this.pickNode(json, e => isTextJSON(e.node))
    if (!e) return null
    e.node.set("content", [this.nodeJSON(this.gen.anyNode())])
    return json
  }
  "benign:text-field-on-node"(json) {
    let e = this.pickNode(json, e => !isTextJSON(e.node))
    if (!e) return null
    e.node.set("text", this.rng.pick(["zzz", "", 5]))
    return json
  }
  "benign:odd-numbers"(json) {
    let e = this.pickNode(json, e => {
      let t = this.typeOf(e.node)
      return t && Object.keys(t.attrs).some(a => /number/.test(validateOf(t, a) || "number"))
    })
    if (!e) return null
    let t = this.typeOf(e.node)
    let name = this.rng.pick(Object.keys(t.attrs).filter(a => /number/.test(validateOf(t, a) || "number")))
    let attrs = e.node.get("attrs")
    if (!(attrs instanceof Ordered)) e.node.set("attrs", attrs = new Ordered())
    let num = new RawNumber(this.rng.pick(rawNumbers))
    attrs.set(name, validateOf(t, name) || this.rng.chance(0.6) ? num : [num, Ordered.of("n", num)])
    return json
  }
  "benign:type-as-array"(json) {
    let e = this.pickNode(json, e => typeof e.node.get("type") == "string")
    if (!e) return null
    let marks = e.node.get("marks")
    if (Array.isArray(marks) && marks.length && marks[0] instanceof Ordered && this.rng.chance(0.5) && typeof marks[0].get("type") == "string")
      marks[0].set("type", [marks[0].get("type")])
    else
      e.node.set("type", this.rng.chance(0.8) ? [e.node.get("type")] : [[e.node.get("type")]])
    return json
  }
  "benign:attrs-not-object"(json) {
    let e = this.pickNode(json, e => { let t = this.typeOf(e.node); return t && !t.isText && Object.keys(t.attrs).length })
    if (!e) return null
    e.node.set("attrs", this.rng.pick(["str", "hello world", 5, [7, "x", 9, true], true, 0, "", ["only"]]))
    return json
  }
  "benign:null-required-attr"(json) {
    let e = this.pickNode(json, e => { let t = this.typeOf(e.node); return t && Object.keys(t.attrs).some(a => t.attrs[a].isRequired && !validateOf(t, a)) })
    if (!e) return null
    let t = this.typeOf(e.node), attrs = e.node.get("attrs")
    if (!(attrs instanceof Ordered)) e.node.set("attrs", attrs = new Ordered())
    for (let a in t.attrs) if (t.attrs[a].isRequired && !validateOf(t, a)) attrs.set(a, null)
    return json
  }
  "benign:omit-default-attrs"(json) {
    return omitDefaultAttrs(this.schema, json, this.rng.chance(0.5) ? null : this.pickNode(json).node) && json
  }
  "benign:duplicate-key"(json) {
    let e = this.pickNode(json)
    let key = this.rng.pick(["type", "attrs", "content", "marks", "text"])
    let v = e.node.get(key)
    if (v === undefined) return null
    // An earlier duplicate that JSON.parse overrides with the later value.
    let decoy = key == "type" ? "nonexistent" : key == "text" ? 5 : key == "content" ? "bad" : key == "marks" ? [new Ordered()] : "x"
    e.node.pairs.splice(this.rng.int(e.node.pairs.length), 0, [key, decoy])
    return json
  }
  "benign:lone-surrogate"(json) {
    let e = this.pickNode(json, e => isTextJSON(e.node) && typeof e.node.get("text") == "string")
    if (!e) return null
    let text = e.node.get("text"), at = this.rng.int(text.length + 1)
    e.node.set("text", text.slice(0, at) + this.rng.pick(["\ud83d", "\ude00", "\udfff\ud800"]) + text.slice(at))
    return json
  }
}

// omitDefaultAttrs deletes attributes equal to their default (on `only`,
// or on every node when it is null), as hand-written JSON does. Returns
// whether anything was removed.
function omitDefaultAttrs(schema, json, only) {
  let removed = false
  for (let { node } of walk(json)) {
    if (only && node != only) continue
    let name = node.get("type"), type = typeof name == "string" && schema.nodes[name]
    let attrs = node.get("attrs")
    if (!type || !(attrs instanceof Ordered)) continue
    for (let key of attrs.keys) {
      let attr = type.attrs[key]
      if (attr && attr.hasDefault && stringify(attrs.get(key)) === JSON.stringify(attr.default)) {
        attrs.delete(key)
        removed = true
      }
    }
    if (!attrs.pairs.length) node.delete("attrs")
  }
  return removed
}

const mutationNames = Object.getOwnPropertyNames(Mutator.prototype).filter(n => n.includes(":"))
const mutationsByGroup = {}
for (let n of mutationNames) (mutationsByGroup[n.split(":")[0]] ||= []).push(n)

// scramble reorders object keys in the input (no effect in JS, whose
// JSON.parse and toJSON fix the order): node keys sometimes, keys of
// objects inside attribute values often.
function scramble(rng, value, inAttrs = false) {
  if (Array.isArray(value)) return value.forEach(v => scramble(rng, v, inAttrs))
  if (!(value instanceof Ordered)) return
  if (rng.chance(inAttrs ? 0.6 : 0.1)) rng.shuffle(value.pairs)
  for (let [k, v] of value.pairs) scramble(rng, v, inAttrs || k == "attrs")
}

// ---- recording -----------------------------------------------------------

function errorInfo(e) {
  return { error: String(e && e.message !== undefined ? e.message : e), errorType: e && e.constructor ? e.constructor.name : typeof e }
}

// attempt runs f and captures what it throws. Stack traces are switched
// off meanwhile: capturing them is most of the cost of the many expected
// errors, and only messages are recorded.
function attempt(f) {
  let limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try { return { ok: true, value: f() } } catch (e) { return { ok: false, ...errorInfo(e) } } finally { Error.stackTraceLimit = limit }
}

// Long JSON texts inside positions, slices and replace results are
// recorded as "sha256:" + the hex SHA-256 of their UTF-8 bytes, to keep
// the files small. (JSON.stringify escapes lone surrogates, so the text
// is always valid Unicode.)
export const DIGEST_OVER = 200

function digest(str) {
  if (Buffer.byteLength(str, "utf8") <= DIGEST_OVER) return str
  return "sha256:" + createHash("sha256").update(str, "utf8").digest("hex")
}

const nodeDigest = n => (n ? digest(JSON.stringify(n.toJSON())) : null)
const marksStr = marks => JSON.stringify(marks.map(m => m.toJSON()))
const fragStr = f => JSON.stringify(f.content.map(n => n.toJSON()))

function hasInexactNumber(v) {
  if (typeof v == "number") return !Number.isSafeInteger(v)
  if (Array.isArray(v)) return v.some(hasInexactNumber)
  if (v && typeof v == "object") return Object.keys(v).some(k => hasInexactNumber(v[k]))
  return false
}

function randomPositions(rng, size, n) {
  let out = [0, size]
  for (let i = 0; i < n; i++) out.push(rng.range(0, size))
  return out
}

function describePos(rng, doc, pos) {
  let size = doc.content.size
  let r = attempt(() => doc.resolve(pos))
  if (!r.ok) return { pos, error: r.error, errorType: r.errorType }
  let $pos = r.value, levels = []
  for (let d = 0; d <= $pos.depth; d++) {
    // [node type, index, indexAfter, start, end, before, after]
    levels.push([$pos.node(d).type.name, $pos.index(d), $pos.indexAfter(d), $pos.start(d), $pos.end(d),
      d ? $pos.before(d) : null, d ? $pos.after(d) : null])
  }
  let other = rng.range(0, size), $other = doc.resolve(other)
  let range = $pos.blockRange($other)
  let ca = doc.childAfter(pos), cb = doc.childBefore(pos)
  return {
    pos,
    depth: $pos.depth,
    parentOffset: $pos.parentOffset,
    textOffset: $pos.textOffset,
    levels,
    nodeAfter: nodeDigest($pos.nodeAfter),
    nodeBefore: nodeDigest($pos.nodeBefore),
    marks: marksStr($pos.marks()),
    nodeAt: nodeDigest(doc.nodeAt(pos)),
    childAfter: [ca.index, ca.offset, ca.node ? ca.node.type.name : null],
    childBefore: [cb.index, cb.offset, cb.node ? cb.node.type.name : null],
    other,
    sharedDepth: $pos.sharedDepth(other),
    blockRange: range && [range.start, range.end, range.depth, range.startIndex, range.endIndex],
  }
}

function describeSlices(rng, doc, schema) {
  let size = doc.content.size, out = [], markTypes = Object.values(schema.marks)
  for (let i = 0; i < 5; i++) {
    let a = rng.range(0, size), b = rng.range(0, size)
    let from = Math.min(a, b), to = Math.max(a, b)
    let s = { from, to }
    let sl = attempt(() => digest(JSON.stringify(doc.slice(from, to).toJSON())))
    if (sl.ok) s.slice = sl.value
    else Object.assign(s, { error: sl.error, errorType: sl.errorType })
    s.textBetween = doc.textBetween(from, to, "\n", "*")
    if (markTypes.length) {
      let m = rng.pick(markTypes)
      s.rangeHasMark = { mark: m.name, result: doc.rangeHasMark(from, to, m) }
    }
    out.push(s)
  }
  // Out of range: an error, except that equal positions short-circuit to
  // the empty slice without resolving.
  let kind = rng.int(4)
  let from = kind == 0 ? -1 : kind == 1 ? rng.range(0, size) : kind == 2 ? size + 1 + rng.int(3) : -2 - rng.int(3)
  let to = kind == 0 ? rng.range(0, size) : kind == 1 ? size + 1 + rng.int(5) : from
  let sl = attempt(() => digest(JSON.stringify(doc.slice(from, to).toJSON())))
  out.push(sl.ok ? { from, to, slice: sl.value } : { from, to, error: sl.error, errorType: sl.errorType })
  return out
}

function describeMatches(rng, schema, gen) {
  let types = Object.values(schema.nodes), containers = types.filter(t => !t.isLeaf), out = []
  let nodeOf = type => {
    if (type.isText) return schema.text(rng.pick(["a", "é", "😀", "text"]))
    let node = attempt(() => type.createAndFill(gen.attrs(type)))
    if (!node.ok || !node.value) return null
    // Only nodes whose JSON reads back (a default failing its validator
    // does not), so that the Go side can rebuild the fragment.
    return attempt(() => Node.fromJSON(schema, node.value.toJSON())).ok ? node.value : null
  }
  for (let i = 0; i < 4 && containers.length; i++) {
    let type = rng.pick(containers), seq = []
    let style = rng.weighted({ plausible: 60, plusOne: 25, random: 15 })
    let steps = rng.int(5), match = type.contentMatch
    for (let s = 0; s < steps; s++) {
      if (style == "random" || !match || !match.edgeCount) { seq.push(rng.pick(types)); continue }
      let edge = match.edge(rng.int(match.edgeCount))
      seq.push(edge.type)
      match = edge.next
    }
    if (style == "plusOne") seq.splice(rng.int(seq.length + 1), 0, rng.pick(types))
    let frag = Fragment.from(seq.map(nodeOf).filter(n => n))
    let entry = { type: type.name, fragment: frag.content.map(n => n.toJSON()) }
    let m = type.contentMatch.matchFragment(frag)
    if (!m) entry.match = null
    else {
      let fill = m.fillBefore(Fragment.empty, true)
      let target = rng.pick(types), wrapping = m.findWrapping(target)
      let edges = []
      for (let e = 0; e < m.edgeCount; e++) edges.push(m.edge(e).type.name)
      entry.match = {
        validEnd: m.validEnd,
        defaultType: m.defaultType ? m.defaultType.name : null,
        edgeCount: m.edgeCount,
        edges,
        fill: fill ? fragStr(fill) : null,
        wrapTarget: target.name,
        wrapping: wrapping ? wrapping.map(t => t.name) : null,
      }
    }
    let fb = type.contentMatch.fillBefore(frag, true)
    entry.fillBeforeToEnd = fb ? fragStr(fb) : null
    if (!type.hasRequiredAttrs()) entry.createAndFill = nodeDigest(type.createAndFill(null, frag))
    out.push(entry)
  }
  return out
}

// fittingRange looks for from <= to whose depths agree with the slice's
// open sides, so that the replace gets past its first checks.
function fittingRange(rng, doc, slice) {
  let size = doc.content.size
  for (let tries = 0; tries < 8; tries++) {
    let from = rng.range(0, size), $from = doc.resolve(from)
    if ($from.depth < slice.openStart) continue
    let want = $from.depth - slice.openStart + slice.openEnd, candidates = []
    for (let p = from, end = Math.min(size, from + 60); p <= end; p++) if (doc.resolve(p).depth == want) candidates.push(p)
    if (candidates.length) return [from, rng.pick(candidates)]
  }
  return null
}

function describeReplaces(rng, doc) {
  let size = doc.content.size, out = []
  for (let i = 0; i < 3; i++) {
    let a = rng.range(0, size), b = rng.range(0, size)
    let sliceFrom = Math.min(a, b), sliceTo = Math.max(a, b)
    if (rng.chance(0.1)) { sliceFrom = 0; sliceTo = size }
    let slice = doc.slice(sliceFrom, sliceTo)
    let [from, to] = rng.chance(0.5) && fittingRange(rng, doc, slice) || [rng.range(0, size), rng.range(0, size)].sort((a, b) => a - b)
    if (rng.chance(0.1)) [from, to] = [to, from] // from > to: accepted by JS, duplicates content
    let entry = { from, to, sliceFrom, sliceTo, slice: digest(JSON.stringify(slice.toJSON())) }
    let r = attempt(() => doc.replace(from, to, slice))
    if (r.ok) {
      entry.result = nodeDigest(r.value)
      let c = attempt(() => r.value.check())
      entry.check = c.ok ? null : c.error
    } else {
      entry.error = r.error
      entry.errorType = r.errorType
    }
    out.push(entry)
  }
  return out
}

// ---- cases ---------------------------------------------------------------

const schemaWeights = { text: 10, basic: 30, tables: 25, stress: 35 }
const groupWeights = { valid: 40, benign: 20, schema: 20, error: 20 }

function makeCase(seed, id, schemas) {
  let rng = new Rng(caseSeed(seed, id))
  let schemaName = rng.weighted(schemaWeights), schema = schemas[schemaName]
  let gen = new DocGen(rng, schema), mut = new Mutator(rng, schema, gen)
  let json = toOrdered(gen.doc().toJSON())

  let group = rng.weighted(groupWeights), kinds = []
  if (group != "valid") {
    let n = rng.chance(0.15) ? rng.range(2, 3) : 1
    for (let i = 0; i < n && json instanceof Ordered; i++) {
      let g = i == 0 ? group : rng.pick(["benign", "schema", "error"])
      for (let tries = 0; tries < 5; tries++) {
        let name = rng.pick(mutationsByGroup[g])
        let result = mut[name](json)
        if (result !== null) { json = result; kinds.push(name); break }
      }
    }
  }
  if (group == "valid" && rng.chance(0.3)) omitDefaultAttrs(schema, json, null)
  scramble(rng, json)

  let inputText = stringify(json)
  let record = { kind: kinds.length ? kinds.join("+") : "valid" }
  let parsed = attempt(() => Node.fromJSON(schema, JSON.parse(inputText)))
  if (!parsed.ok) {
    record.error = parsed.error
    record.errorType = parsed.errorType
  } else {
    let doc = parsed.value
    let docJSON = doc.toJSON()
    record.output = JSON.stringify(docJSON)
    let c = attempt(() => doc.check())
    record.check = c.ok ? null : c.error
    let size = doc.content.size
    record.size = size
    record.textContent = doc.textContent
    record.textBetween = doc.textBetween(0, size, "\n", "*")
    let positions = randomPositions(rng, size, 7)
    positions.push(-1, size + 1 + rng.int(3))
    record.positions = positions.map(p => describePos(rng, doc, p))
    record.slices = describeSlices(rng, doc, schema)
    record.matches = describeMatches(rng, schema, gen)
    record.replace = describeReplaces(rng, doc)
    if (hasInexactNumber(docJSON) || record.matches.some(m => hasInexactNumber(m.fragment))) record.inexactNumbers = true
  }
  let head = `{"id":${id},"schema":${JSON.stringify(schemaName)},"kind":${JSON.stringify(record.kind)},"input":${inputText}`
  delete record.kind
  let rest = JSON.stringify(record)
  return head + (rest.length > 2 ? "," + rest.slice(1) : "}")
}

function modelVersion() {
  let file = new URL("./node_modules/prosemirror-model/package.json", import.meta.url)
  return JSON.parse(fs.readFileSync(file, "utf8")).version
}

export function generate({ seed, count }, write) {
  let schemas = loadSchemas()
  write(JSON.stringify({
    format: "pmauthority-model-conformance",
    version: FORMAT_VERSION,
    seed,
    count,
    schemas: schemaNames,
    versions: { "prosemirror-model": modelVersion() },
  }) + "\n")
  for (let id = 0; id < count; id++) write(makeCase(seed, id, schemas) + "\n")
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  let opts = parseGenArgs("gen-model", process.argv.slice(2))
  console.error(`gen-model: seed=${opts.seed} count=${opts.count}`)
  let fd = opts.out ? fs.openSync(opts.out, "w") : 1, buf = []
  let size = 0
  let flush = () => { if (buf.length) { fs.writeSync(fd, buf.join("")); buf = []; size = 0 } }
  generate(opts, line => { buf.push(line); size += line.length; if (size > 1 << 20) flush() })
  flush()
  if (opts.out) fs.closeSync(fd)
}
