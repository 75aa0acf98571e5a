// Bundles main.js into main.bundle.js (or --outdir DIR, with index.html).
// preserveSymlinks: pmauthority-client is linked from web/client
// ("file:.."), and must import the prosemirror packages that Tiptap uses,
// from this directory's node_modules, not web/'s.
import * as esbuild from "esbuild"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
let outdir = here
if (process.argv[2] == "--outdir" && process.argv[3]) outdir = path.resolve(process.argv[3])
await esbuild.build({
  absWorkingDir: here, entryPoints: ["main.js"], outfile: path.join(outdir, "main.bundle.js"),
  bundle: true, format: "esm", minify: true, preserveSymlinks: true, logLevel: "warning",
})
if (outdir != here) fs.copyFileSync(path.join(here, "index.html"), path.join(outdir, "index.html"))
