// Builds the demo pages into dist/ (or --outdir DIR):
//   index.html, edit.html           the list page and the editor page
//   assets/{list,edit}-HASH.{js,css} the minified bundles (hashed names:
//                                    served as immutable)
//   assets/licenses.txt             the licenses of the bundled packages
//
// The output depends only on src/ and the pinned packages (esbuild is
// deterministic), so check-dist.sh can compare a fresh build with the
// committed dist/.
//
// Usage: node build.mjs [--outdir DIR]

import * as esbuild from "esbuild"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
// The pages and where each refers to its assets: relative to the page
// (the list page is /, the editor /edit/{id}), so that they work under any
// prefix an embedding server mounts them at.
const pages = {
  list: { html: "index.html", assets: "assets/" },
  edit: { html: "edit.html", assets: "../assets/" },
}

function parseArgs(argv) {
  let outdir = path.join(here, "dist")
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] == "--outdir" && i + 1 < argv.length) outdir = path.resolve(argv[++i])
    else throw new Error(`unknown argument ${argv[i]} (usage: node build.mjs [--outdir DIR])`)
  }
  return { outdir }
}

async function build({ outdir }) {
  fs.rmSync(outdir, { recursive: true, force: true })
  let assets = path.join(outdir, "assets")
  let result = await esbuild.build({
    absWorkingDir: here,
    entryPoints: Object.fromEntries(Object.keys(pages).map(name => [name, `src/${name}.js`])),
    outdir: assets,
    entryNames: "[name]-[hash]",
    bundle: true,
    minify: true,
    format: "esm",
    target: ["es2020", "chrome100", "firefox100", "safari15"],
    legalComments: "none",
    banner: { js: "/* pmauthority demo. Bundled packages and their licenses: licenses.txt beside this file */" },
    metafile: true,
    // Module paths as seen from here, also when node_modules is a symlink
    // (a git worktree sharing another tree's packages): the output is the same.
    preserveSymlinks: true,
    logLevel: "warning",
  })

  // Which hashed file each entry became.
  let outputs = {}
  for (let [file, out] of Object.entries(result.metafile.outputs)) {
    if (!out.entryPoint) continue
    let name = path.basename(out.entryPoint, ".js")
    outputs[name] = { js: path.basename(file), css: out.cssBundle && path.basename(out.cssBundle) }
  }

  for (let [name, { html, assets: dir }] of Object.entries(pages)) {
    let text = fs.readFileSync(path.join(here, "src", html), "utf8")
    if (/(?:src|href)="\//.test(text)) throw new Error(`${html} has an absolute URL: the pages' URLs are relative`)
    let out = outputs[name]
    if (!out || !out.css) throw new Error(`no JS or CSS bundle for ${name}`)
    for (let [ext, file] of [["js", out.js], ["css", out.css]]) {
      let ref = `"${dir}${name}.${ext}"`
      if (!text.includes(ref)) throw new Error(`${html} does not reference ${ref}`)
      text = text.replaceAll(ref, `"${dir}${file}"`)
    }
    fs.writeFileSync(path.join(outdir, html), text)
  }

  fs.writeFileSync(path.join(assets, "licenses.txt"), licenses(result.metafile))
  for (let file of fs.readdirSync(assets).sort())
    console.log(`${path.relative(here, path.join(assets, file))} ${fs.statSync(path.join(assets, file)).size} bytes`)
}

// licenses collects the license texts of the packages in the bundles.
function licenses(metafile) {
  let names = new Set()
  for (let input of Object.keys(metafile.inputs)) {
    let m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)
    if (m) names.add(m[1])
  }
  let parts = ["The demo pages of pmauthority bundle these packages, under these licenses.\n"]
  for (let name of [...names].sort()) {
    let dir = path.join(here, "node_modules", name)
    let version = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version
    let file = fs.readdirSync(dir).find(f => /^licen[cs]e(\.md|\.txt)?$/i.test(f))
    if (!file) throw new Error(`no license file in ${dir}`)
    parts.push(`${"=".repeat(72)}\n${name} ${version}\n${"=".repeat(72)}\n\n${fs.readFileSync(path.join(dir, file), "utf8").trim()}\n`)
  }
  return parts.join("\n")
}

await build(parseArgs(process.argv.slice(2)))
