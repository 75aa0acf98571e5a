// The stateless apply server on plain node:http: the fastest fair node
// baseline for pmauthority's POST / and POST /v1/apply. Same answers and
// Content-Type as express-server.mjs.
//
//   node http-server.mjs [--addr 127.0.0.1:8080] [--schema text|basic]

import http from "node:http"
import { apply, ApplyError, parseArgs } from "./apply.mjs"

const opts = parseArgs(process.argv.slice(2))
const limit = 8 << 20 // as pmauthority's default request body limit

function send(res, status, value) {
  let body = JSON.stringify(value)
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
  })
  res.end(body)
}

const server = http.createServer((req, res) => {
  if (req.url != "/" && req.url != "/v1/apply") return send(res, 404, { error: { message: "not found" } })
  if (req.method != "POST") return send(res, 405, { error: { message: "method not allowed" } })
  let chunks = [], size = 0, tooLarge = false
  req.on("data", chunk => {
    size += chunk.length
    if (size > limit) tooLarge = true
    else chunks.push(chunk)
  })
  req.on("end", () => {
    if (tooLarge) return send(res, 413, { error: { message: "request body too large" } })
    let body
    try {
      body = JSON.parse(chunks.length == 1 ? chunks[0] : Buffer.concat(chunks))
    } catch (e) {
      return send(res, 400, { error: { message: e.message } })
    }
    try {
      send(res, 200, { doc: apply(body, opts.schema).toJSON() })
    } catch (e) {
      if (!(e instanceof ApplyError)) throw e
      send(res, e.status, e.body)
    }
  })
})

server.listen(opts.port, opts.host, () => {
  console.error(`node:http apply server on ${opts.host}:${server.address().port}, default schema ${opts.schema}`)
})
