// The stateless apply server as prosemirror-v8-perf's node version had
// it: express with body-parser's JSON parser. It answers with res.json
// (Content-Type application/json; charset=utf-8), and its errors are
// pmauthority's instead of express's HTML pages.
//
//   node express-server.mjs [--addr 127.0.0.1:8080] [--schema text|basic]

import express from "express"
import bodyParser from "body-parser"
import { apply, ApplyError, parseArgs } from "./apply.mjs"

const opts = parseArgs(process.argv.slice(2))
const app = express()

// The limit is pmauthority's default (8 MiB); body-parser's own is 100 kB,
// too small for the 1 MB documents.
app.use(bodyParser.json({ limit: "8mb" }))

app.post(["/", "/v1/apply"], (req, res) => {
  try {
    res.json({ doc: apply(req.body, opts.schema).toJSON() })
  } catch (e) {
    if (!(e instanceof ApplyError)) throw e
    res.status(e.status).json(e.body)
  }
})

app.use((err, req, res, next) => {
  res.status(err.status ?? err.statusCode ?? 500).json({ error: { message: err.message } })
})

const server = app.listen(opts.port, opts.host, () => {
  console.error(`express apply server on ${opts.host}:${server.address().port}, default schema ${opts.schema}`)
})
