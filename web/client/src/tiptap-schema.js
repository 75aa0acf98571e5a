// exportSchema: the JSON schema spec of a Tiptap editor (or of any
// prosemirror-model Schema), for `pmauthority serve --schema NAME=FILE`.
// No imports: node scripts may load this file on its own.

// The DOM glue of node and mark specs, which the server does not use.
const domKeys = new Set(["toDOM", "parseDOM", "leafText", "toDebugString"])

// isArrayIndex tells whether name is a canonical array index ("0",
// "12"), which a JavaScript object lists before its other keys.
function isArrayIndex(name) {
  return /^(0|[1-9][0-9]*)$/.test(name) && Number(name) < 4294967295
}

// plain returns v as JSON will hold it, failing on what JSON cannot hold
// (undefined, NaN, class instances) rather than changing it silently.
function plain(v, where) {
  if (v === null || typeof v == "string" || typeof v == "boolean") return v
  if (typeof v == "number") {
    if (!isFinite(v)) throw new Error(`exportSchema: ${where} is ${v}, which JSON cannot hold`)
    return v
  }
  if (Array.isArray(v)) return v.map((x, i) => plain(x, `${where}[${i}]`))
  if (typeof v == "object" && (Object.getPrototypeOf(v) == Object.prototype || Object.getPrototypeOf(v) == null)) {
    let out = {}
    for (let k of Object.keys(v)) if (typeof v[k] != "function") out[k] = plain(v[k], `${where}.${k}`)
    return out
  }
  throw new Error(`exportSchema: ${where} is ${v === undefined ? "undefined" : "a " + (v?.constructor?.name || typeof v)}, which JSON cannot hold`)
}

// typeSpecs returns the specs of an OrderedMap of node or mark specs as
// [name, spec] pairs, without DOM glue and functions.
function typeSpecs(map, kind) {
  let out = []
  map.forEach((name, spec) => {
    let s = {}
    for (let key of Object.keys(spec)) {
      let value = spec[key]
      if (domKeys.has(key) || typeof value == "function" || value === undefined) continue
      if (key == "attrs" && value) {
        let attrs = {}
        for (let attr of Object.keys(value)) {
          let a = value[attr], where = `${kind} "${name}" attribute "${attr}"`
          if (a && Object.prototype.hasOwnProperty.call(a, "default") && a.default === undefined)
            throw new Error(`exportSchema: ${where} has the default undefined, which JSON cannot hold (it would become a required attribute): give it a default such as null`)
          attrs[attr] = {}
          for (let k of Object.keys(a || {})) if (typeof a[k] != "function") attrs[attr][k] = plain(a[k], `${where}.${k}`)
        }
        s.attrs = attrs
      } else {
        s[key] = plain(value, `${kind} "${name}".${key}`)
      }
    }
    out.push([name, s])
  })
  return out
}

// exportSchema returns the JSON text (indented, with a final newline) of
// the schema spec of editor (a Tiptap Editor, or anything with a
// prosemirror-model schema, or a Schema itself): the node and mark specs
// in their order, without the DOM glue (toDOM, parseDOM …) and functions
// (a function validate of an attribute is dropped: the server checks only
// the type strings). Nodes and marks are objects, which both the server
// and `new Schema(JSON.parse(text))` read in order, unless a name is an
// array index ("0"), which an object would move first: then they are
// written as JavaScript serializes an OrderedMap ({"content": [name, spec,
// …]}), which the server reads too. It throws on a value JSON cannot
// hold (an attribute default of undefined, a class instance).
//
// Save it and give it to the server: pmauthority serve --schema NAME=FILE.
export function exportSchema(editor) {
  let schema = editor && editor.spec && editor.nodes ? editor : editor?.schema
  if (!schema || !schema.spec || !schema.spec.nodes) throw new Error("exportSchema: expected a Tiptap Editor or a prosemirror-model Schema")
  let spec = { topNode: schema.topNodeType.name }
  for (let kind of ["nodes", "marks"]) {
    let pairs = typeSpecs(schema.spec[kind], kind == "nodes" ? "node" : "mark")
    spec[kind] = pairs.some(([name]) => isArrayIndex(name)) ? { content: pairs.flat() } : Object.fromEntries(pairs)
  }
  return JSON.stringify(spec, null, 2) + "\n"
}
