// Proof that pmauthority-client works as a package people install: packs
// it (npm pack), installs the tarball into a scratch app in a temporary
// directory (the app's other packages, the client's peers and two
// bundlers, are those pinned by bundle/package-lock.json: npm ci there
// first, which also fills npm's cache), bundles the app with esbuild and
// with rollup, checks that each bundle holds exactly one copy of
// prosemirror-model, and runs both bundles in node against a live server
// (--url). The app (scratch-app.mjs) checks collab, presence, comments,
// reconnection and the token.
//
// It also installs the package from its folder, as `npm install
// ../web/client` does (a symlink in node_modules), and checks that the
// bundlers' default, which follows the symlink and resolves the peers
// from the folder's real place, does not give one copy of
// prosemirror-model (the bundle fails, or holds a second copy from
// web/node_modules), while preserveSymlinks (esbuild and rollup) and
// `npm install --install-links` (a copy instead of the symlink) do.
//
// Usage: node client/test/package.mjs --url http://127.0.0.1:8080 [--keep]

import { execFileSync } from "node:child_process"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const pkgDir = path.resolve(here, "..")
const pinned = path.join(here, "bundle")

let url = "", keep = false
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] == "--url") url = process.argv[++i] || ""
  else if (process.argv[i] == "--keep") keep = true
  else throw new Error("unknown argument " + process.argv[i])
}
if (!url) throw new Error("usage: node client/test/package.mjs --url http://HOST:PORT [--keep]")
if (!fs.existsSync(path.join(pinned, "node_modules", "rollup")))
  throw new Error(`${pinned}/node_modules is missing: npm ci there first`)

function run(cmd, args, cwd) {
  console.log(`[package] ${path.basename(cwd)}$ ${cmd} ${args.join(" ")}`)
  return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, npm_config_update_notifier: "false" } })
}

// newApp makes a scratch app in dir with the pinned packages and the
// scratch app's code; install is the package spec of pmauthority-client
// (null: none), extra the npm install flags.
function newApp(dir, install, extra = []) {
  fs.mkdirSync(dir)
  fs.copyFileSync(path.join(pinned, "package.json"), path.join(dir, "package.json"))
  fs.copyFileSync(path.join(pinned, "package-lock.json"), path.join(dir, "package-lock.json"))
  fs.copyFileSync(path.join(here, "scratch-app.mjs"), path.join(dir, "main.mjs"))
  // --prefer-offline: the pinned packages come from the cache npm ci filled.
  let args = install ? ["install", install] : ["ci"]
  run("npm", [...args, "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", ...extra], dir)
}

// copies returns how many copies of prosemirror-model the bundle text
// holds: the times a message of its source occurs in it, divided by the
// times it occurs in one copy.
const marker = "Called contentMatchAt on a node with invalid content"
const perCopy = count(fs.readFileSync(path.join(pinned, "node_modules", "prosemirror-model", "dist", "index.js"), "utf8"), marker)
function count(text, s) {
  return text.split(s).length - 1
}
function copies(file) {
  return count(fs.readFileSync(file, "utf8"), marker) / perCopy
}

// The bundlers, from the pinned packages.
const esbuild = await import(pathToFileURL(path.join(pinned, "node_modules", "esbuild", "lib", "main.js")))
const { rollup } = await import(pathToFileURL(path.join(pinned, "node_modules", "rollup", "dist", "es", "rollup.js")))
const { nodeResolve } = await import(pathToFileURL(path.join(pinned, "node_modules", "@rollup", "plugin-node-resolve", "dist", "es", "index.js")))

// bundleEsbuild bundles app's main.mjs into out and returns the modules
// of prosemirror-model it took (their paths).
async function bundleEsbuild(app, out, options = {}) {
  let result = await esbuild.build({
    absWorkingDir: app, entryPoints: ["main.mjs"], bundle: true, platform: "node", format: "esm",
    outfile: out, logLevel: "silent", metafile: true, ...options,
  })
  return Object.keys(result.metafile.inputs).filter(f => /prosemirror-model\/dist\/index\.js$/.test(f))
}

// bundleRollup does the same with rollup and its node-resolve plugin.
async function bundleRollup(app, out, options = {}) {
  let bundle = await rollup({
    input: path.join(app, "main.mjs"),
    plugins: [nodeResolve({ preferBuiltins: true })],
    external: id => id.startsWith("node:"),
    onwarn: warning => { throw new Error("rollup: " + warning.message) },
    ...options,
  })
  let { output } = await bundle.write({ file: out, format: "es" })
  await bundle.close()
  return Object.keys(output[0].modules).filter(f => /prosemirror-model\/dist\/index\.js$/.test(f))
}

// oneCopy checks that a bundle holds exactly one prosemirror-model.
function oneCopy(what, file, modules) {
  let n = copies(file)
  console.log(`[package] ${what}: ${n} copy of prosemirror-model (${modules.join(" ")})`)
  if (n != 1 || modules.length != 1) throw new Error(`${what}: ${n} copies of prosemirror-model in the bundle, want 1: ${modules.join(" ")}`)
}

// runBundle runs a bundle of the scratch app against the server.
function runBundle(app, file) {
  // Node before 22 has WebSocket behind a flag.
  let flags = typeof WebSocket == "undefined" ? ["--experimental-websocket"] : []
  let out = execFileSync(process.execPath, [...flags, file, url], { cwd: app, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 60000 })
  process.stdout.write(out)
  if (!/^PASS$/m.test(out)) throw new Error(`the scratch app (${path.basename(file)}) did not pass`)
}

let tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pmauthority-client-"))
try {
  // 1. Pack. The tarball holds what package.json's files name.
  let packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", tmp], pkgDir))[0]
  let files = packed.files.map(f => f.path).sort()
  console.log("[package]", packed.filename, packed.size, "bytes:", files.join(" "))
  for (let want of ["package.json", "README.md", "LICENSE", "index.d.ts", "src/index.js", "src/client.js", "src/comments.js", "src/presence.js", "src/dom.js", "src/persist.js"])
    if (!files.includes(want)) throw new Error(`the tarball lacks ${want}`)
  if (files.some(f => f.startsWith("test/") || f.includes("node_modules") || f.startsWith("example-")))
    throw new Error("the tarball holds more than the package: " + files.join(" "))

  // 2. A scratch app that installs the tarball.
  let app = path.join(tmp, "app")
  newApp(app, path.join(tmp, packed.filename))
  let installed = path.join(app, "node_modules", "pmauthority-client")
  if (fs.lstatSync(installed).isSymbolicLink()) throw new Error("npm linked the package instead of installing the tarball")
  let deps = JSON.parse(fs.readFileSync(path.join(app, "package.json"), "utf8")).dependencies
  if (!deps["pmauthority-client"]?.startsWith("file:")) throw new Error("the app's package.json does not name the tarball: " + JSON.stringify(deps))

  // 3. Bundled as an app would, with esbuild and with rollup: one
  // prosemirror-model each, the app's.
  let own = m => m.every(f => !path.resolve(app, f).startsWith(pkgDir))
  let mods = await bundleEsbuild(app, "dist/esbuild.mjs")
  oneCopy("tarball, esbuild", path.join(app, "dist/esbuild.mjs"), mods)
  mods = await bundleRollup(app, path.join(app, "dist/rollup.mjs"))
  oneCopy("tarball, rollup", path.join(app, "dist/rollup.mjs"), mods)
  if (!own(mods)) throw new Error("the bundle took prosemirror-model from the repository: " + mods)

  // 4. Both bundles run against the server.
  runBundle(app, "dist/esbuild.mjs")
  runBundle(app, "dist/rollup.mjs")

  // 5. From the folder, as npm install ../web/client leaves it: a symlink
  // beside the app's packages. Following the symlink (the bundlers'
  // default) resolves the client's imports from web/client's real place:
  // a second prosemirror-model (web/node_modules) or none at all.
  let folder = path.join(tmp, "folder")
  fs.mkdirSync(path.join(folder, "node_modules"), { recursive: true })
  fs.copyFileSync(path.join(here, "scratch-app.mjs"), path.join(folder, "main.mjs"))
  for (let name of fs.readdirSync(path.join(app, "node_modules"))) {
    if (name == "pmauthority-client" || name.startsWith(".")) continue
    fs.symlinkSync(path.join(app, "node_modules", name), path.join(folder, "node_modules", name), "dir")
  }
  fs.symlinkSync(pkgDir, path.join(folder, "node_modules", "pmauthority-client"), "dir")
  let broken
  try {
    mods = await bundleEsbuild(folder, "dist/default.mjs")
    broken = copies(path.join(folder, "dist/default.mjs")) != 1 && `${mods.length} copies: ${mods.join(" ")}`
  } catch (e) {
    broken = String(e.message).split("\n")[0]
  }
  if (!broken) throw new Error("the folder install bundled with one prosemirror-model without preserveSymlinks: the check cannot tell")
  console.log("[package] folder (symlink), esbuild's default: fails as expected:", broken)
  mods = await bundleEsbuild(folder, "dist/esbuild.mjs", { preserveSymlinks: true })
  oneCopy("folder, esbuild preserveSymlinks", path.join(folder, "dist/esbuild.mjs"), mods)
  mods = await bundleRollup(folder, path.join(folder, "dist/rollup.mjs"), { preserveSymlinks: true })
  oneCopy("folder, rollup preserveSymlinks", path.join(folder, "dist/rollup.mjs"), mods)

  // 6. From the folder with --install-links: npm packs and copies it, as
  // the tarball.
  let links = path.join(tmp, "links")
  newApp(links, pkgDir, ["--install-links"])
  if (fs.lstatSync(path.join(links, "node_modules", "pmauthority-client")).isSymbolicLink())
    throw new Error("npm install --install-links linked the folder")
  mods = await bundleEsbuild(links, "dist/esbuild.mjs")
  oneCopy("folder --install-links, esbuild", path.join(links, "dist/esbuild.mjs"), mods)
  console.log("[package] PASS")
} finally {
  if (keep) console.log("[package] kept", tmp)
  else fs.rmSync(tmp, { recursive: true, force: true })
}
