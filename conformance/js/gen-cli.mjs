// The command line and the random numbers shared by the corpus
// generators (gen-model.mjs, gen-export.mjs, gen-rebase.mjs,
// gen-transform.mjs).

import fs from "node:fs"

// parseGenArgs reads a generator's arguments, [--seed N] [--count N]
// [--out FILE], exiting with its usage on a bad one; without --seed a
// random seed is chosen.
export function parseGenArgs(name, argv) {
  let usage = msg => {
    console.error(`${name}: ${msg}\nusage: node ${name}.mjs [--seed N] [--count N] [--out FILE]`)
    process.exit(2)
  }
  let parseUint = (s, flag) => {
    if (!/^\d+$/.test(s) || Number(s) > 0xffffffff) usage(`${flag} wants an integer in [0, 2^32)`)
    return Number(s)
  }
  let opts = { seed: null, count: 1000, out: null }
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i], v = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`)
      return argv[++i]
    }
    if (a == "--seed") opts.seed = parseUint(v(), a)
    else if (a == "--count") opts.count = parseUint(v(), a)
    else if (a == "--out") opts.out = v()
    else usage(`unknown argument ${a}`)
  }
  if (opts.seed == null) opts.seed = (Date.now() ^ (process.pid << 16)) >>> 0
  return opts
}

// Rng is mulberry32: tiny, fast, and the same sequence on every platform.
export class Rng {
  constructor(seed) { this.s = seed >>> 0 }
  next() {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  int(n) { return Math.floor(this.next() * n) }
  range(a, b) { return a + this.int(b - a + 1) }
  chance(p) { return this.next() < p }
  pick(arr) { return arr[this.int(arr.length)] }
  shuffle(arr) {
    for (let i = arr.length - 1; i > 0; i--) {
      let j = this.int(i + 1);
      [arr[i], arr[j]] = [arr[j], arr[i]]
    }
    return arr
  }
  // weighted picks a key of {key: weight}.
  weighted(table) {
    let total = 0
    for (let k in table) total += table[k]
    let r = this.next() * total
    for (let k in table) if ((r -= table[k]) < 0) return k
    return Object.keys(table)[0]
  }
}

// runGenerator is the command line of a corpus generator: it reads the
// arguments, calls generate(opts, write) with a write that buffers the
// lines for the output file (stdout without --out), and prints the seed
// and, when generate returns a Map of outcome counts, a summary on
// stderr.
export function runGenerator(name, generate) {
  let opts = parseGenArgs(name, process.argv.slice(2))
  console.error(`${name}: seed=${opts.seed} count=${opts.count}`)
  let fd = opts.out ? fs.openSync(opts.out, "w") : 1, buf = [], size = 0
  let flush = () => { if (buf.length) { fs.writeSync(fd, buf.join("")); buf = []; size = 0 } }
  let start = Date.now()
  let stats = generate(opts, line => { buf.push(line); size += line.length; if (size > 1 << 20) flush() })
  flush()
  if (opts.out) fs.closeSync(fd)
  if (stats) {
    let counts = [...stats].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(", ")
    console.error(`${name}: ${opts.count} cases in ${((Date.now() - start) / 1000).toFixed(1)}s: ${counts}`)
  }
}

// headerLine returns line 1 of a corpus: its format name and version,
// the seed, the case count, the schemas and the versions of the npm
// packages it records.
export function headerLine({ format, version, seed, count, schemas, packages }) {
  let versionOf = pkg => {
    let file = new URL(`./node_modules/${pkg}/package.json`, import.meta.url)
    return JSON.parse(fs.readFileSync(file, "utf8")).version
  }
  return JSON.stringify({
    format, version, seed, count, schemas,
    versions: Object.fromEntries(packages.map(p => [p, versionOf(p)])),
  }) + "\n"
}
