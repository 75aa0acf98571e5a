// What both node servers share: the schemas, the command line, and
// applying a request the way prosemirror-v8-perf's server did
// (Node.fromJSON, then Step.fromJSON + step.apply for each step in
// order), with the errors pmauthority's server gives.
//
// prosemirror-model and prosemirror-transform are imported as ESM: their
// CommonJS build is several times slower under this node, and the
// comparison is against node at its best.

import { readFileSync } from "node:fs"
import { Node, Schema } from "prosemirror-model"
import { Step } from "prosemirror-transform"

// schemas are the schemas a request may name. "text" is
// prosemirror-v8-perf's schema as it wrote it; "basic" is built from the
// spec file that pmauthority embeds (schemas/basic.json).
export const schemas = {
  text: new Schema({ nodes: { text: {}, doc: { content: "text*" } } }),
  basic: new Schema(JSON.parse(readFileSync(new URL("../../schemas/basic.json", import.meta.url), "utf8"))),
}

// parseArgs reads --addr HOST:PORT (or --port N) and --schema NAME.
export function parseArgs(argv) {
  let opts = { host: "127.0.0.1", port: 8080, schema: "text" }
  for (let i = 0; i < argv.length; i++) {
    let [flag, inline] = argv[i].split(/=(.*)/s)
    let value = () => inline ?? argv[++i]
    switch (flag.replace(/^--?/, "-")) {
      case "-addr": {
        let v = value(), at = v.lastIndexOf(":")
        opts.host = v.slice(0, at) || "127.0.0.1"
        opts.port = Number(v.slice(at + 1))
        break
      }
      case "-port": opts.port = Number(value()); break
      case "-schema": opts.schema = value(); break
      default:
        console.error(`unknown flag ${argv[i]}\nusage: node ${process.argv[1]} [--addr 127.0.0.1:8080] [--schema text|basic]`)
        process.exit(2)
    }
  }
  if (!schemas[opts.schema]) {
    console.error(`unknown schema ${opts.schema} (have ${Object.keys(schemas).join(", ")})`)
    process.exit(2)
  }
  return opts
}

// ApplyError is a request that cannot be applied: status is the HTTP
// status, body the JSON error object.
export class ApplyError extends Error {
  constructor(status, message, step) {
    super(message)
    this.status = status
    this.step = step
  }
  get body() {
    return this.step == null ? { error: { message: this.message } }
      : { error: { step: this.step, message: this.message } }
  }
}

// apply returns the document that req.steps make of req.doc, in the
// schema req.schema names (defaultSchema when it names none).
export function apply(req, defaultSchema) {
  if (req == null || typeof req != "object" || Array.isArray(req))
    throw new ApplyError(400, "request must be a JSON object")
  let name = req.schema ?? defaultSchema
  let schema = schemas[name]
  if (!schema || typeof name != "string") throw new ApplyError(400, `unknown schema ${JSON.stringify(name)}`)
  if (!Array.isArray(req.steps)) throw new ApplyError(400, "steps must be an array")
  let doc
  try {
    doc = Node.fromJSON(schema, req.doc)
  } catch (e) {
    throw new ApplyError(422, `doc: ${e.message}`)
  }
  req.steps.forEach((json, i) => {
    let result
    try {
      result = Step.fromJSON(schema, json).apply(doc)
    } catch (e) {
      throw new ApplyError(422, e.message, i)
    }
    if (result.failed) throw new ApplyError(422, result.failed, i)
    doc = result.doc
  })
  return doc
}
