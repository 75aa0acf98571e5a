// A collaborative-editing authority written the way the ProseMirror
// website's collab demo server is (src/collab/server/{server,instance,
// comments}.js): documents kept in memory, steps decoded and applied with
// the real prosemirror-transform, waiting long-polls answered when a new
// version is published. It speaks pmauthority's collab API (the demo's
// routes and JSON, pmauthority's JSON error bodies and limits) and is the
// node baseline of bench/collab; conformance tests also use it to check
// their client harness.
//
//   node authority.mjs [--port 8080] [--host 127.0.0.1] [--poll-timeout 60]
//                      [--history 10000] [--trust-proxy]
//   node --expose-gc authority.mjs --gc-route …   also POST /debug/gc: a full
//                      garbage collection, answering {rss, heapUsed} (the
//                      memory benchmark measures node's documents without
//                      its garbage too)
//
//   GET  /docs                   [{id, users}], ordered by id
//   GET  /docs/ID                {doc, users, version, comments, commentVersion}
//                                (an unknown ID is created: an empty basic doc)
//   GET  /docs/ID/events?version=V&commentVersion=C
//                                {version, commentVersion, steps, clientIDs, comment, users}
//                                as soon as something is newer, {} after the poll timeout
//   POST /docs/ID/events         {version, steps, clientID, comment} -> {version, commentVersion}
//
// Errors are {"error": {"message": "…"}} ({"error": {"step": i, "message": "…"}}
// for a step that fails): 400 "Invalid version N" for a version the
// document never had, 409 "Version not current" for a stale one, 410
// "History no longer available", 413 over a limit, 422 a step that cannot
// be decoded or applied (nothing changes).
//
// Beyond the demo, for a fair comparison: every step's JSON is encoded
// once when it is accepted, the document's JSON is cached until the next
// change, the step history is trimmed in batches instead of copied on
// every submission, and waiters woken together share one encoded answer.
// Documents are never evicted (the demo keeps 20).

import http from "node:http"
import { Schema } from "prosemirror-model"
import { Step, Mapping } from "prosemirror-transform"
import { schema as basicSchema } from "prosemirror-schema-basic"
import { addListNodes } from "prosemirror-schema-list"

// schema is pmauthority's "basic" (schemas/basic.json is exported from
// the same two packages, in the same way).
const schema = new Schema({
  nodes: addListNodes(basicSchema.spec.nodes, "paragraph block*", "block"),
  marks: basicSchema.spec.marks,
})

// Limits, as pmauthority's defaults.
const MAX_BODY = 8 << 20
const MAX_STEPS = 1000
const MAX_DOC_SIZE = 10_000_000
// How often the users of a document are counted again (the demo's).
const COLLECT_USERS_EVERY = 5000

const opts = parseArgs(process.argv.slice(2))

// HTTPError is an error answer. It is thrown but is no Error: capturing
// a stack trace for every 409 was 5 % of the CPU under load.
class HTTPError {
  constructor(status, message, step) {
    this.status = status
    this.message = message
    this.step = step
  }

  get body() {
    return JSON.stringify(this.step == null ? { error: { message: this.message } }
      : { error: { step: this.step, message: this.message } })
  }
}

// Comments are a document's comments and the events that made them.
class Comments {
  constructor() {
    this.comments = [] // {from, to, text, id}
    this.events = [] // {type: "create"|"delete", id}
    this.version = 0
  }

  // mapThrough moves every comment through mapping, dropping those whose
  // range collapses.
  mapThrough(mapping) {
    for (let i = this.comments.length - 1; i >= 0; i--) {
      let comment = this.comments[i]
      let from = mapping.map(comment.from, 1), to = mapping.map(comment.to, -1)
      if (from >= to) {
        this.comments.splice(i, 1)
      } else {
        comment.from = from
        comment.to = to
      }
    }
  }

  created(event) {
    this.comments.push({ from: event.from, to: event.to, text: event.text, id: event.id })
    this.events.push({ type: "create", id: event.id })
    this.version++
  }

  index(id) {
    for (let i = 0; i < this.comments.length; i++) if (this.comments[i].id == id) return i
    return -1
  }

  deleted(id) {
    let found = this.index(id)
    if (found < 0) return
    this.comments.splice(found, 1)
    this.events.push({ type: "delete", id })
    this.version++
  }

  // eventsAfter returns the events from index start on; a create shows
  // the comment where it is now and is left out once it is deleted.
  eventsAfter(start) {
    let result = []
    for (let i = start; i < this.events.length; i++) {
      let event = this.events[i]
      if (event.type == "delete") {
        result.push(event)
      } else {
        let found = this.index(event.id)
        if (found < 0) continue
        let c = this.comments[found]
        result.push({ type: "create", id: event.id, text: c.text, from: c.from, to: c.to })
      }
    }
    return result
  }
}

// Instance is one document: its current state, its recent steps and the
// long-polls waiting for its next version.
class Instance {
  constructor(id) {
    this.id = id
    this.doc = schema.topNodeType.createAndFill()
    this.docJSON = null // cached JSON text of doc
    this.comments = new Comments()
    this.version = 0
    // steps[stepsStart..] are the steps up to version, at most
    // opts.history of them: {json, clientID} with their JSON texts.
    this.steps = []
    this.stepsStart = 0
    this.users = new Set()
    this.collecting = null
    this.waiting = new Set()
  }

  get stepCount() {
    return this.steps.length - this.stepsStart
  }

  // addEvents checks and applies a submission, all or nothing, and wakes
  // the waiters; it returns the answer to send.
  addEvents(version, stepsJSON, comments, clientID) {
    this.checkVersion(version)
    if (version != this.version) throw new HTTPError(409, "Version not current")
    let doc = this.doc, maps = [], texts = []
    for (let i = 0; i < stepsJSON.length; i++) {
      let step, result
      try {
        step = Step.fromJSON(schema, stepsJSON[i])
        result = step.apply(doc)
      } catch (e) {
        throw new HTTPError(422, e.message, i)
      }
      if (result.failed) throw new HTTPError(422, result.failed, i)
      doc = result.doc
      if (doc.content.size > MAX_DOC_SIZE)
        throw new HTTPError(413, `document content size ${doc.content.size} is over the limit of ${MAX_DOC_SIZE}`, i)
      maps.push(step.getMap())
      texts.push(JSON.stringify(step.toJSON()))
    }
    if (texts.length) {
      let idJSON = JSON.stringify(clientID)
      this.doc = doc
      this.docJSON = null
      this.version += texts.length
      for (let json of texts) this.steps.push({ json, clientID: idJSON })
      if (this.stepCount > opts.history) {
        this.stepsStart = this.steps.length - opts.history
        // Trim in batches: copying the whole history on every submission
        // (the demo's concat + slice) is what makes long histories slow.
        if (this.stepsStart >= opts.history) {
          this.steps = this.steps.slice(this.stepsStart)
          this.stepsStart = 0
        }
      }
      this.comments.mapThrough(new Mapping(maps))
    }
    if (comments) for (let event of comments) {
      if (event.type == "delete") this.comments.deleted(event.id)
      else this.comments.created(event)
    }
    this.sendUpdates()
    return { version: this.version, commentVersion: this.comments.version }
  }

  // checkVersion throws unless the document has had version.
  checkVersion(version) {
    if (version < 0 || version > this.version) throw new HTTPError(400, "Invalid version " + version)
  }

  // getEvents returns the steps after version and the comment events
  // after commentVersion, or null when they are no longer kept.
  getEvents(version, commentVersion) {
    this.checkVersion(version)
    // The demo waits for a comment version that is ahead; pmauthority
    // answers 400 as for a version that is ahead (the client reloads).
    if (commentVersion > this.comments.version)
      throw new HTTPError(400, `Invalid version ${commentVersion} (commentVersion)`)
    let start = this.steps.length - (this.version - version)
    if (start < this.stepsStart) return null
    let commentStart = this.comments.events.length - (this.comments.version - commentVersion)
    if (commentStart < 0) return null
    return { start, comment: this.comments.eventsAfter(commentStart) }
  }

  // eventsBody encodes the answer of getEvents.
  eventsBody(events) {
    let steps = "", ids = ""
    for (let i = events.start; i < this.steps.length; i++) {
      let s = this.steps[i]
      if (i > events.start) { steps += ","; ids += "," }
      steps += s.json
      ids += s.clientID
    }
    return `{"version":${this.version},"commentVersion":${this.comments.version},"steps":[${steps}],` +
      `"clientIDs":[${ids}],"comment":${JSON.stringify(events.comment)},"users":${this.users.size}}`
  }

  // sendUpdates answers every waiting long-poll; waiters that asked for
  // the same versions get the same encoded answer.
  sendUpdates() {
    if (!this.waiting.size) return
    let waiting = this.waiting, answers = new Map()
    this.waiting = new Set()
    for (let w of waiting) {
      let key = w.version + "," + w.commentVersion
      let answer = answers.get(key)
      if (!answer) answers.set(key, answer = this.eventsAnswer(w.version, w.commentVersion))
      w.send(answer.status, answer.body)
    }
  }

  // eventsAnswer returns the status and body answering a request for the
  // events after version and commentVersion.
  eventsAnswer(version, commentVersion) {
    try {
      let events = this.getEvents(version, commentVersion)
      if (!events) throw new HTTPError(410, "History no longer available")
      return { status: 200, body: this.eventsBody(events) }
    } catch (e) {
      if (!(e instanceof HTTPError)) throw e
      return { status: e.status, body: e.body }
    }
  }

  docBody() {
    if (this.docJSON == null) this.docJSON = JSON.stringify(this.doc.toJSON())
    return `{"doc":${this.docJSON},"users":${this.users.size},"version":${this.version},` +
      `"comments":${JSON.stringify(this.comments.comments)},"commentVersion":${this.comments.version}}`
  }

  // registerUser counts ip as a user; a new user wakes the waiters (they
  // learn the new count).
  registerUser(ip) {
    if (this.users.has(ip)) return
    this.addUser(ip)
    this.sendUpdates()
  }

  addUser(ip) {
    if (this.users.has(ip)) return
    this.users.add(ip)
    if (this.collecting == null) this.collecting = setTimeout(() => this.collectUsers(), COLLECT_USERS_EVERY)
  }

  // collectUsers counts again, as users, only the clients waiting now.
  collectUsers() {
    let before = this.users.size
    this.users = new Set()
    this.collecting = null
    for (let w of this.waiting) this.addUser(w.ip)
    if (this.users.size != before) this.sendUpdates()
  }
}

// Waiting is a long-poll waiting for a new version.
class Waiting {
  constructor(res, inst, ip, version, commentVersion) {
    this.res = res
    this.inst = inst
    this.ip = ip
    this.version = version
    this.commentVersion = commentVersion
    this.done = false
    this.timer = setTimeout(() => {
      this.abort()
      this.send(200, "{}")
    }, opts.pollTimeout * 1000)
  }

  abort() {
    this.inst.waiting.delete(this)
    clearTimeout(this.timer)
  }

  send(status, body) {
    if (this.done) return
    this.done = true
    clearTimeout(this.timer)
    send(this.res, status, body)
  }
}

const instances = new Map()

function getInstance(id, ip) {
  let inst = instances.get(id)
  if (!inst) instances.set(id, inst = new Instance(id))
  if (ip) inst.registerUser(ip)
  return inst
}

function send(res, status, body) {
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
  })
  res.end(body)
}

function nonNegInteger(value, what) {
  let num = typeof value == "string" && value != "" ? Number(value) : value
  if (typeof num == "number" && Number.isSafeInteger(num) && num >= 0) return num
  throw new HTTPError(400, `${what}: not a non-negative integer: ${value}`)
}

const docID = /^[A-Za-z0-9._~-]{1,128}$/

function reqIP(req) {
  return (opts.trustProxy && req.headers["x-forwarded-for"]) || req.socket.remoteAddress
}

function route(req, res, body) {
  let q = req.url.indexOf("?")
  let path = q < 0 ? req.url : req.url.slice(0, q)
  if (opts.gcRoute && path == "/debug/gc" && req.method == "POST") {
    global.gc()
    let mem = process.memoryUsage()
    return send(res, 200, JSON.stringify({ rss: mem.rss, heapUsed: mem.heapUsed }))
  }
  let parts = path.split("/")
  if (parts[1] != "docs" || parts.length > 4 || (parts.length == 4 && parts[3] != "events"))
    throw new HTTPError(404, "not found")
  if (parts.length == 2 || (parts.length == 3 && parts[2] == "")) {
    if (req.method != "GET") throw new HTTPError(405, "method not allowed")
    let list = [...instances.keys()].sort().map(id => ({ id, users: instances.get(id).users.size }))
    return send(res, 200, JSON.stringify(list))
  }
  let id = parts[2]
  if (!docID.test(id)) throw new HTTPError(400, "invalid document id (1 to 128 of A-Z a-z 0-9 . _ ~ -)")
  if (parts.length == 3) {
    if (req.method != "GET") throw new HTTPError(405, "method not allowed")
    return send(res, 200, getInstance(id, reqIP(req)).docBody())
  }
  if (req.method == "GET") return getEvents(req, res, id, new URLSearchParams(q < 0 ? "" : req.url.slice(q + 1)))
  if (req.method == "POST") return postEvents(req, res, id, body)
  throw new HTTPError(405, "method not allowed")
}

function getEvents(req, res, id, query) {
  let version = nonNegInteger(query.get("version"), "version")
  let commentVersion = nonNegInteger(query.get("commentVersion"), "commentVersion")
  let ip = reqIP(req)
  let inst = getInstance(id, ip)
  let events = inst.getEvents(version, commentVersion)
  if (!events) throw new HTTPError(410, "History no longer available")
  if (events.start < inst.steps.length || events.comment.length) return send(res, 200, inst.eventsBody(events))
  let wait = new Waiting(res, inst, ip, version, commentVersion)
  inst.waiting.add(wait)
  res.on("close", () => wait.abort())
}

function postEvents(req, res, id, body) {
  let data
  try {
    data = JSON.parse(body)
  } catch (e) {
    throw new HTTPError(400, e.message)
  }
  if (data == null || typeof data != "object" || Array.isArray(data)) throw new HTTPError(400, "request must be a JSON object")
  let version = nonNegInteger(data.version, "version")
  let steps = data.steps ?? []
  if (!Array.isArray(steps)) throw new HTTPError(400, "steps must be an array")
  if (steps.length > MAX_STEPS) throw new HTTPError(413, `${steps.length} steps is over the limit of ${MAX_STEPS}`)
  let clientID = data.clientID
  if (steps.length && !validClientID(clientID)) throw new HTTPError(400, "clientID must be a non-negative integer or a string")
  let comments = data.comment ?? []
  if (!Array.isArray(comments)) throw new HTTPError(400, "comment must be an array")
  comments.forEach(checkCommentEvent)
  let result = getInstance(id, reqIP(req)).addEvents(version, steps, comments, clientID)
  send(res, 200, JSON.stringify(result))
}

function validClientID(id) {
  return (typeof id == "number" && Number.isInteger(id) && id >= 0 && id <= 2 ** 53) ||
    (typeof id == "string" && Buffer.byteLength(id) <= 256)
}

function checkCommentEvent(e, i) {
  let ok = e != null && typeof e == "object" && typeof e.id == "number" && (e.type == "delete" ||
    (e.type == "create" && Number.isSafeInteger(e.from) && Number.isSafeInteger(e.to) && typeof e.text == "string"))
  if (!ok) throw new HTTPError(400, `comment event ${i}: want {"type":"create","id","from","to","text"} or {"type":"delete","id"}`)
}

const server = http.createServer((req, res) => {
  let chunks = [], size = 0
  req.on("data", chunk => {
    size += chunk.length
    if (size <= MAX_BODY) chunks.push(chunk)
  })
  req.on("end", () => {
    try {
      if (size > MAX_BODY) throw new HTTPError(413, `request body over the limit of ${MAX_BODY} bytes`)
      route(req, res, chunks.length == 1 ? chunks[0] : Buffer.concat(chunks))
    } catch (e) {
      if (!(e instanceof HTTPError)) {
        console.error(e.stack)
        e = new HTTPError(500, "internal error")
      }
      send(res, e.status, e.body)
    }
  })
})
// A long-poll may take opts.pollTimeout; node's own limit on a request is
// 5 minutes.
server.requestTimeout = Math.max(server.requestTimeout, (opts.pollTimeout + 60) * 1000)

server.listen(opts.port, opts.host, () => {
  console.log(`listening on ${server.address().port}`)
})

for (let signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(0))

function parseArgs(argv) {
  let o = { host: "127.0.0.1", port: 8080, pollTimeout: 60, history: 10000, trustProxy: false, gcRoute: false }
  const usage = "usage: node [--expose-gc] authority.mjs [--port 8080] [--host 127.0.0.1] [--poll-timeout SECONDS] [--history STEPS] [--trust-proxy] [--gc-route]"
  for (let i = 0; i < argv.length; i++) {
    let [flag, inline] = argv[i].split(/=(.*)/s)
    let value = () => inline ?? argv[++i]
    switch (flag.replace(/^--?/, "-")) {
      case "-port": o.port = Number(value()); break
      case "-host": o.host = value(); break
      case "-poll-timeout": o.pollTimeout = Number(value()); break
      case "-history": o.history = Number(value()); break
      case "-trust-proxy": o.trustProxy = true; break
      case "-gc-route": o.gcRoute = true; break
      case "-h": case "-help": console.log(usage); process.exit(0)
      default:
        console.error(`unknown flag ${argv[i]}\n${usage}`)
        process.exit(2)
    }
  }
  if (!Number.isInteger(o.port) || !(o.pollTimeout > 0) || !(o.history >= 1)) {
    console.error(usage)
    process.exit(2)
  }
  if (o.gcRoute && typeof global.gc != "function") {
    console.error("--gc-route needs node --expose-gc")
    process.exit(2)
  }
  return o
}
