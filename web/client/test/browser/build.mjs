// Bundles the page of web/test/browser-client.mjs into --outdir DIR
// (index.html and page.js), with web/node_modules' esbuild.
//
// Usage: node client/test/browser/build.mjs --outdir DIR (from web/)
import * as esbuild from "esbuild"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
if (process.argv[2] != "--outdir" || !process.argv[3]) throw new Error("usage: node build.mjs --outdir DIR")
let outdir = path.resolve(process.argv[3])
await esbuild.build({
  absWorkingDir: here, entryPoints: ["page.js"], outfile: path.join(outdir, "page.js"),
  bundle: true, format: "esm", preserveSymlinks: true, logLevel: "warning",
})
fs.copyFileSync(path.join(here, "index.html"), path.join(outdir, "index.html"))
