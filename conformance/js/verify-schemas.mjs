// Checks that the committed schema spec JSON files are up to date and
// rebuild schemas equivalent to the JS originals: same node and mark
// names in the same order, the same specs key by key (apart from DOM
// functions), and the same derived properties (groups, content match
// automata, mark sets, exclusions, attribute order and defaults).
// Exits 1 on any difference.
//
// Usage: node verify-schemas.mjs

import { Schema, Node } from "prosemirror-model"
import { Ordered, RawNumber, parse, stringify, jsKeyOrder } from "./ordered-json.mjs"
import { droppedKeys, knownFunctionValidators, originalSchemas, schemaPaths, specFiles } from "./schema-specs.mjs"
import { loadSpecText } from "./schemas.mjs"

let failures = 0
function fail(msg) {
  failures++
  console.error("FAIL " + msg)
}
function same(what, a, b) {
  let ja = JSON.stringify(a), jb = JSON.stringify(b)
  if (ja !== jb) fail(`${what}: original ${ja} != exported ${jb}`)
}

// 1. The files are what export-schemas.mjs writes today.
for (let [rel, text] of specFiles()) {
  let name = Object.keys(schemaPaths).find(n => schemaPaths[n] == rel)
  let onDisk
  try { onDisk = loadSpecText(name) } catch (e) { fail(`${rel}: ${e.message}`); continue }
  if (onDisk !== text) fail(`${rel} is stale: run node export-schemas.mjs`)
}

let originals = originalSchemas()

for (let name of Object.keys(schemaPaths)) {
  let text = loadSpecText(name)
  let orig = originals[name], loaded = new Schema(JSON.parse(text))
  let fileSpec = parse(text) // file order, as an order-preserving reader sees it

  // 2. File order is JS order for type names, so reading the file in
  //    order gives the JS schema.
  for (let kind of ["nodes", "marks"]) {
    let inFile = fileSpec.get(kind) ? fileSpec.get(kind).keys : []
    let ofMap = []
    loaded.spec[kind].forEach(k => ofMap.push(k))
    same(`${name}: ${kind} order in file vs JS`, inFile, ofMap)
    let origOrder = []
    orig.spec[kind].forEach(k => origOrder.push(k))
    same(`${name}: ${kind} order`, origOrder, ofMap)
    same(`${name}: ${kind} object order`, Object.keys(orig[kind]), Object.keys(loaded[kind]))
  }
  same(`${name}: topNodeType`, orig.topNodeType.name, loaded.topNodeType.name)
  same(`${name}: linebreakReplacement`, orig.linebreakReplacement && orig.linebreakReplacement.name,
    loaded.linebreakReplacement && loaded.linebreakReplacement.name)
  for (let key in orig.spec) if (key != "nodes" && key != "marks") same(`${name}: spec.${key}`, orig.spec[key], loaded.spec[key])
  same(`${name}: top-level spec keys`, Object.keys(orig.spec), Object.keys(loaded.spec))

  for (let typeName in orig.nodes) {
    let a = orig.nodes[typeName], b = loaded.nodes[typeName], where = `${name}: node ${typeName}`
    if (!b) { fail(`${where} missing`); continue }
    compareSpec(where, name, typeName, a.spec, b.spec)
    compareAttrs(where, name, typeName, a, b, fileSpec.get("nodes").get(typeName))
    for (let prop of ["isBlock", "isInline", "isText", "isLeaf", "isAtom", "isTextblock", "inlineContent", "whitespace", "groups"])
      same(`${where}.${prop}`, a[prop], b[prop])
    same(`${where}.markSet`, a.markSet && a.markSet.map(m => m.name), b.markSet && b.markSet.map(m => m.name))
    same(`${where}.contentMatch`, a.contentMatch.toString(), b.contentMatch.toString())
    same(`${where}.hasRequiredAttrs`, a.hasRequiredAttrs(), b.hasRequiredAttrs())
    if (!a.hasRequiredAttrs() && !a.isText)
      same(`${where}.createAndFill`, a.createAndFill().toJSON(), b.createAndFill().toJSON())
  }
  for (let markName in orig.marks) {
    let a = orig.marks[markName], b = loaded.marks[markName], where = `${name}: mark ${markName}`
    if (!b) { fail(`${where} missing`); continue }
    compareSpec(where, name, markName, a.spec, b.spec)
    compareAttrs(where, name, markName, a, b, fileSpec.get("marks").get(markName))
    same(`${where}.rank`, a.rank, b.rank)
    same(`${where}.excluded`, a.excluded.map(m => m.name), b.excluded.map(m => m.name))
  }

  // 3. A document built with the original parses under the exported schema.
  let doc = orig.topNodeType.createAndFill()
  try {
    same(`${name}: doc round trip`, doc.toJSON(), Node.fromJSON(loaded, doc.toJSON()).toJSON())
  } catch (e) { fail(`${name}: doc round trip: ${e.message}`) }
}

// compareSpec compares two type specs key by key, ignoring DOM glue and
// functions; attrs are compared by compareAttrs.
function compareSpec(where, schemaName, typeName, a, b) {
  let keys = spec => Object.keys(spec).filter(k => !droppedKeys.has(k) && typeof spec[k] != "function")
  same(`${where} spec keys`, keys(a), keys(b))
  for (let k of keys(a)) if (k != "attrs") same(`${where} spec.${k}`, a[k], b[k])
}

// compareAttrs compares attribute descriptors, and checks that the JS
// attribute order and default values follow from the file by the JS key
// order rule (array-index keys first, ascending), which the Go loader
// must apply.
function compareAttrs(where, schemaName, typeName, origType, loadedType, fileType) {
  let a = origType.attrs, b = loadedType.attrs, aSpec = origType.spec, bSpec = loadedType.spec
  same(`${where} attr names`, Object.keys(a), Object.keys(b))
  let fileAttrs = fileType && fileType.get("attrs")
  same(`${where} attr order from file`, fileAttrs ? jsKeyOrder(fileAttrs.keys) : [], Object.keys(b))
  for (let attr in a) {
    let x = a[attr], y = b[attr], w = `${where}.${attr}`
    if (!y) continue
    same(`${w}.hasDefault`, x.hasDefault, y.hasDefault)
    same(`${w}.default`, x.default, y.default)
    if (x.hasDefault) {
      let fileDefault = fileAttrs.get(attr).get("default")
      same(`${w}.default from file`, stringify(jsCanonical(fileDefault)), JSON.stringify(y.default))
    }
    let knownFn = knownFunctionValidators.has(`${schemaName}:${typeName}.${attr}`)
    if (knownFn) {
      if (typeof x.validate != "function" || y.validate !== undefined) fail(`${w}: expected a dropped function validator`)
    } else {
      same(`${w}.validate`, typeof x.validate, typeof y.validate)
    }
  }
  // The validator type strings themselves, and any other attr spec keys.
  for (let attr in specAttrs(aSpec)) {
    let keys = Object.keys(aSpec.attrs[attr]).filter(k => typeof aSpec.attrs[attr][k] != "function")
    same(`${where}.${attr} spec keys`, keys, Object.keys(bSpec.attrs[attr]))
    for (let k of keys) same(`${where}.${attr}.${k}`, aSpec.attrs[attr][k], bSpec.attrs[attr][k])
  }
}

function specAttrs(spec) { return spec.attrs || {} }

// jsCanonical applies JSON.parse's object semantics to a file-order value:
// last duplicate wins, array-index keys first.
function jsCanonical(v) {
  if (Array.isArray(v)) return v.map(jsCanonical)
  if (v instanceof Ordered) return new Ordered(jsKeyOrder(v.keys).map(k => [k, jsCanonical(v.get(k))]))
  if (v instanceof RawNumber) return JSON.parse(v.text)
  return v
}

if (failures) {
  console.error(`${failures} difference(s)`)
  process.exit(1)
}
console.log(`schemas ok: ${Object.keys(schemaPaths).join(", ")}`)
