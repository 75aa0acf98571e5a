// JSON text whose object key order (and duplicate keys, and number
// spelling) we control exactly.
//
// Plain JS objects cannot do that: the engine moves integer-like keys
// ("0", "2", "10" — array indices up to 2**32-2) in front of the others,
// in ascending order. The Go side reads JSON in file order, so the
// conformance data must be able to carry keys in any order and let JS
// reorder them through JSON.parse, exactly as a real client would.

// Ordered is a JSON object as a list of [key, value] pairs, in order,
// duplicates allowed.
export class Ordered {
  constructor(pairs = []) {
    this.pairs = pairs
  }

  // o("a", 1, "b", 2) builds an Ordered from alternating keys and values.
  static of(...kv) {
    if (kv.length % 2) throw new Error("Ordered.of needs key/value pairs")
    let pairs = []
    for (let i = 0; i < kv.length; i += 2) pairs.push([kv[i], kv[i + 1]])
    return new Ordered(pairs)
  }

  get keys() { return this.pairs.map(p => p[0]) }

  has(key) { return this.pairs.some(p => p[0] === key) }

  // get returns the value JSON.parse would keep: the last one.
  get(key) {
    for (let i = this.pairs.length - 1; i >= 0; i--)
      if (this.pairs[i][0] === key) return this.pairs[i][1]
    return undefined
  }

  // set replaces the value of every pair with that key, or appends one.
  set(key, value) {
    let found = false
    for (let p of this.pairs) if (p[0] === key) { p[1] = value; found = true }
    if (!found) this.pairs.push([key, value])
    return this
  }

  delete(key) {
    this.pairs = this.pairs.filter(p => p[0] !== key)
    return this
  }
}

// RawNumber is a number written exactly as `text` (e.g. "-0", "2.0",
// "1e400"), for JSON.parse to interpret.
export class RawNumber {
  constructor(text) {
    if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) throw new Error("not a JSON number: " + text)
    this.text = text
  }
}

// toOrdered converts a plain JSON value into Ordered form, keeping the
// JS property order of every object.
export function toOrdered(value) {
  if (Array.isArray(value)) return value.map(toOrdered)
  if (value && typeof value == "object" && !(value instanceof Ordered) && !(value instanceof RawNumber))
    return new Ordered(Object.keys(value).map(k => [k, toOrdered(value[k])]))
  return value
}

// stringify writes a value made of Ordered, RawNumber, arrays and JSON
// primitives. Strings and numbers are written as JSON.stringify writes
// them. With `indent` > 0 the output is pretty-printed like
// JSON.stringify(value, null, indent).
export function stringify(value, indent = 0) {
  let out = []
  write(value, "")
  return out.join("")

  function write(v, pad) {
    if (v instanceof Ordered) {
      if (!v.pairs.length) { out.push("{}"); return }
      let inner = pad + " ".repeat(indent)
      out.push("{")
      v.pairs.forEach(([k, val], i) => {
        if (i) out.push(",")
        if (indent) out.push("\n", inner)
        out.push(JSON.stringify(k), indent ? ": " : ":")
        write(val, inner)
      })
      if (indent) out.push("\n", pad)
      out.push("}")
    } else if (Array.isArray(v)) {
      if (!v.length) { out.push("[]"); return }
      let inner = pad + " ".repeat(indent)
      out.push("[")
      v.forEach((val, i) => {
        if (i) out.push(",")
        if (indent) out.push("\n", inner)
        write(val, inner)
      })
      if (indent) out.push("\n", pad)
      out.push("]")
    } else if (v instanceof RawNumber) {
      out.push(v.text)
    } else if (typeof v == "number") {
      if (!isFinite(v)) throw new Error("non-finite number in JSON output")
      out.push(Object.is(v, -0) ? "-0" : JSON.stringify(v))
    } else if (typeof v == "string" || typeof v == "boolean" || v === null) {
      out.push(JSON.stringify(v))
    } else if (v && typeof v == "object") {
      write(toOrdered(v), pad)
    } else {
      throw new Error("not a JSON value: " + typeof v)
    }
  }
}

// parse reads JSON text into Ordered form, keeping file order and
// duplicate keys (what an order-preserving reader such as Go's
// json.Decoder token stream sees). Numbers become RawNumber so that their
// spelling survives.
export function parse(text) {
  let pos = 0
  let value = parseValue()
  skipWS()
  if (pos != text.length) fail("trailing data")
  return value

  function fail(msg) { throw new SyntaxError(`${msg} at offset ${pos}`) }
  function skipWS() { while (pos < text.length && " \t\n\r".includes(text[pos])) pos++ }
  function parseValue() {
    skipWS()
    let ch = text[pos]
    if (ch == "{") {
      pos++
      let obj = new Ordered()
      skipWS()
      if (text[pos] == "}") { pos++; return obj }
      for (;;) {
        skipWS()
        if (text[pos] != "\"") fail("expected key")
        let key = parseString()
        skipWS()
        if (text[pos++] != ":") fail("expected ':'")
        obj.pairs.push([key, parseValue()])
        skipWS()
        if (text[pos] == ",") { pos++; continue }
        if (text[pos] == "}") { pos++; return obj }
        fail("expected ',' or '}'")
      }
    }
    if (ch == "[") {
      pos++
      let arr = []
      skipWS()
      if (text[pos] == "]") { pos++; return arr }
      for (;;) {
        arr.push(parseValue())
        skipWS()
        if (text[pos] == ",") { pos++; continue }
        if (text[pos] == "]") { pos++; return arr }
        fail("expected ',' or ']'")
      }
    }
    if (ch == "\"") return parseString()
    let m = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(pos, pos + 400))
    if (!m) fail("unexpected character")
    pos += m[0].length
    if (m[0] == "true") return true
    if (m[0] == "false") return false
    if (m[0] == "null") return null
    return new RawNumber(m[0])
  }
  function parseString() {
    let start = pos
    pos++
    for (;;) {
      let ch = text[pos]
      if (ch === undefined) fail("unterminated string")
      if (ch == "\\") pos += 2
      else if (ch == "\"") { pos++; break }
      else pos++
    }
    return JSON.parse(text.slice(start, pos))
  }
}

// isArrayIndex tells whether a property key is ordered numerically by JS
// engines: a canonical decimal integer below 2**32 - 1.
export function isArrayIndex(key) {
  return /^(0|[1-9]\d*)$/.test(key) && Number(key) <= 4294967294
}

// jsKeyOrder returns keys (without duplicates) in the order a JS object
// built by inserting them in this order enumerates them: array indices
// first, ascending, then the rest in first-insertion order.
export function jsKeyOrder(keys) {
  let seen = new Set(), ints = [], rest = []
  for (let k of keys) {
    if (seen.has(k)) continue
    seen.add(k)
    ;(isArrayIndex(k) ? ints : rest).push(k)
  }
  ints.sort((a, b) => Number(a) - Number(b))
  return ints.concat(rest)
}
