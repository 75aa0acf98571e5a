// Proof that pmauthority-client works outside this repository: packs it
// (npm pack), installs the tarball into a scratch app in a temporary
// directory (npm install --offline: the package has no dependencies of
// its own, and its peers, the prosemirror packages, are linked from
// web/node_modules), bundles the app with esbuild, and runs the bundle
// in node against a live server (--url). The app (scratch-app.mjs)
// checks collab, presence, comments, reconnection and the token.
//
// Usage: node client/test/package.mjs --url http://127.0.0.1:8080 [--keep]

import { execFileSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const pkgDir = path.resolve(here, "..")
const webModules = path.resolve(pkgDir, "..", "node_modules")
const peers = ["prosemirror-collab", "prosemirror-model", "prosemirror-state", "prosemirror-transform", "prosemirror-view",
  "prosemirror-schema-basic", "prosemirror-schema-list"]

let url = "", keep = false
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] == "--url") url = process.argv[++i] || ""
  else if (process.argv[i] == "--keep") keep = true
  else throw new Error("unknown argument " + process.argv[i])
}
if (!url) throw new Error("usage: node client/test/package.mjs --url http://HOST:PORT [--keep]")

function run(cmd, args, cwd) {
  console.log(`[package] ${path.basename(cwd)}$ ${cmd} ${args.join(" ")}`)
  return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, npm_config_update_notifier: "false" } })
}

let tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pmauthority-client-"))
try {
  // 1. Pack. The tarball holds what package.json's files name.
  let packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", tmp], pkgDir))[0]
  let files = packed.files.map(f => f.path).sort()
  console.log("[package]", packed.filename, packed.size, "bytes:", files.join(" "))
  for (let want of ["package.json", "README.md", "index.d.ts", "src/index.js", "src/client.js", "src/comments.js", "src/presence.js", "src/dom.js"])
    if (!files.includes(want)) throw new Error(`the tarball lacks ${want}`)
  if (files.some(f => f.startsWith("test/"))) throw new Error("the tarball holds the tests")

  // 2. A scratch app that depends on the tarball, installed offline.
  let app = path.join(tmp, "app")
  fs.mkdirSync(app)
  fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "scratch-app", private: true, type: "module" }, null, 2))
  run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--legacy-peer-deps", path.join(tmp, packed.filename)], app)
  let installed = path.join(app, "node_modules", "pmauthority-client")
  if (fs.lstatSync(installed).isSymbolicLink()) throw new Error("npm linked the package instead of installing the tarball")
  for (let p of peers) fs.symlinkSync(path.join(webModules, p), path.join(app, "node_modules", p), "dir")
  fs.copyFileSync(path.join(here, "scratch-app.mjs"), path.join(app, "main.mjs"))

  // 3. Bundle it as an app would, with esbuild (from web/node_modules).
  let esbuild = await import(path.join(webModules, "esbuild", "lib", "main.js"))
  let result = await esbuild.build({
    absWorkingDir: app, entryPoints: ["main.mjs"], bundle: true, platform: "node", format: "esm",
    outfile: "dist/main.mjs", logLevel: "warning", metafile: true,
  })
  let inputs = Object.keys(result.metafile.inputs)
  if (!inputs.some(f => f.includes("node_modules/pmauthority-client/src/client.js")))
    throw new Error("the bundle does not contain the installed package: " + inputs.filter(f => /client/.test(f)).join(" "))

  // 4. Run it against the server. Node before 22 has WebSocket behind a flag.
  let flags = typeof WebSocket == "undefined" ? ["--experimental-websocket"] : []
  let out = execFileSync(process.execPath, [...flags, "dist/main.mjs", url], { cwd: app, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 60000 })
  process.stdout.write(out)
  if (!/^PASS$/m.test(out)) throw new Error("the scratch app did not pass")
  console.log("[package] PASS")
} finally {
  if (keep) console.log("[package] kept", tmp)
  else fs.rmSync(tmp, { recursive: true, force: true })
}
