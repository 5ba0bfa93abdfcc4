#!/usr/bin/env node
// Dynamic shapes against ONNX Runtime: one OnePool session (`onepool bench --shapes-sweep`)
// runs a list of shapes; a sample of them is also run by ONNX Runtime (CPU) on the same inputs
// and the outputs are compared elementwise.
//
//   node bench/dynamic_shapes/check_ort.js MODEL --shapes RANGE --sweep FILE [--sample N]
//        [--mode static|dynamic] [--cache N] [--threads N] [--cli PATH] [--work DIR]
//        [--atol A] [--rtol R]
//
// Step 1. Every N-th line of FILE (default: 4 lines spread over the file) gets deterministic
//         inputs (mulberry32 seeded by "<line>/<input>", floats in [0,1)) in WORK/<line>/inputs.
// Step 2. ONNX Runtime runs each sampled line; outputs go to WORK/<line>/ort.
// Step 3. `onepool bench MODEL --shapes RANGE --shapes-sweep FILE --sweep-io WORK` runs every
//         line on one session; sampled lines read their inputs and save outputs (WORK/<line>/onepool).
// Step 4. Mismatch where |a-b| > atol + rtol*|b| (b = ORT). Exit 0 when all sampled lines match.
// Needs node and onnxruntime-node in .cache/ort (scripts/fetch_ort.sh).
'use strict';

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const ORT_PATH = path.join(ROOT, '.cache', 'ort', 'node_modules', 'onnxruntime-node');

const { fnv1a, mulberry32 } = require('../common/seeded_random.js');

function readFloat32(file) {
  const buf = fs.readFileSync(file);
  const aligned = new ArrayBuffer(buf.length);
  new Uint8Array(aligned).set(buf);
  return new Float32Array(aligned);
}

// "x:1x3x640x480,y:1x10" -> [{name, shape}]
function parseShapeLine(text) {
  return text.split(',').map((entry) => {
    const colon = entry.lastIndexOf(':');
    return { name: entry.slice(0, colon), shape: entry.slice(colon + 1).split('x').map(Number) };
  });
}

function sweepLines(file) {
  return fs.readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
}

async function runOrt(model, lines, work, threads) {
  const ort = require(ORT_PATH);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1, logSeverityLevel: 3,
  });
  for (const { index, text } of lines) {
    const feeds = {};
    for (const { name, shape } of parseShapeLine(text)) {
      const rand = mulberry32(fnv1a(`${index}/${name}`));
      const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
      for (let i = 0; i < data.length; i++) data[i] = rand();
      fs.mkdirSync(path.join(work, String(index), 'inputs'), { recursive: true });
      fs.writeFileSync(path.join(work, String(index), 'inputs', `${name}.bin`), Buffer.from(data.buffer));
      feeds[name] = new ort.Tensor('float32', data, shape);
    }
    const results = await session.run(feeds);
    const dir = path.join(work, String(index), 'ort');
    fs.mkdirSync(dir, { recursive: true });
    for (const name of session.outputNames) {
      fs.writeFileSync(path.join(dir, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.bin`), Buffer.from(results[name].data.buffer));
    }
    process.stderr.write(`ort: line ${index} ${text}\n`);
  }
}

function compareLine(work, index, atol, rtol) {
  const ours = JSON.parse(fs.readFileSync(path.join(work, String(index), 'onepool', 'outputs.json'), 'utf8'));
  let maxAbs = 0;
  let bad = 0;
  let count = 0;
  for (const o of ours) {
    const a = readFloat32(path.join(work, String(index), 'onepool', o.file));
    const b = readFloat32(path.join(work, String(index), 'ort', `${o.name.replace(/[^A-Za-z0-9_.-]/g, '_')}.bin`));
    if (a.length !== b.length) return { maxAbs: Infinity, bad: 1, count: a.length, problem: `${o.name}: ${a.length} vs ORT ${b.length} elements` };
    for (let i = 0; i < a.length; i++) {
      const d = Math.abs(a[i] - b[i]);
      if (!(d <= maxAbs)) maxAbs = Number.isNaN(d) ? Infinity : d;
      if (!(d <= atol + rtol * Math.abs(b[i]))) bad++;
    }
    count += a.length;
  }
  return { maxAbs, bad, count };
}

function parseArgs(argv) {
  const opts = { sample: 4, mode: 'static', cache: 8, threads: 2, atol: 1e-4, rtol: 1e-3,
    cli: path.join(ROOT, 'build', 'onepool'), work: path.join(ROOT, 'build', 'dynamic_shapes_check') };
  for (let i = 0; i < argv.length; i++) {
    const take = () => argv[++i];
    switch (argv[i]) {
      case '--shapes': opts.shapes = take(); break;
      case '--sweep': opts.sweep = path.resolve(take()); break;
      case '--sample': opts.sample = Number(take()); break;
      case '--mode': opts.mode = take(); break;
      case '--cache': opts.cache = Number(take()); break;
      case '--threads': opts.threads = Number(take()); break;
      case '--cli': opts.cli = path.resolve(take()); break;
      case '--work': opts.work = path.resolve(take()); break;
      case '--atol': opts.atol = Number(take()); break;
      case '--rtol': opts.rtol = Number(take()); break;
      default:
        if (argv[i].startsWith('-')) throw new Error(`unknown option ${argv[i]}`);
        opts.model = path.resolve(argv[i]);
    }
  }
  if (!opts.model || !opts.shapes || !opts.sweep) throw new Error('usage: check_ort.js MODEL --shapes RANGE --sweep FILE');
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const lines = sweepLines(opts.sweep);
  const stride = Math.max(1, Math.floor(lines.length / Math.max(1, opts.sample)));
  const sampled = [];
  for (let i = 0; i < lines.length && sampled.length < opts.sample; i += stride) sampled.push({ index: i + 1, text: lines[i] });
  fs.rmSync(opts.work, { recursive: true, force: true });
  await runOrt(opts.model, sampled, opts.work, opts.threads);
  const r = spawnSync(opts.cli, ['bench', opts.model, '--shapes', opts.shapes, '--shapes-sweep', opts.sweep,
    '--mode', opts.mode, '--cache', String(opts.cache), '--threads', String(opts.threads), '--sweep-io', opts.work],
  { encoding: 'utf8', maxBuffer: 64 << 20 });
  process.stdout.write(r.stdout || '');
  if (r.status !== 0) throw new Error(`onepool bench failed (exit ${r.status}):\n${r.stderr}`);
  let ok = true;
  for (const { index, text } of sampled) {
    const c = compareLine(opts.work, index, opts.atol, opts.rtol);
    ok = ok && c.bad === 0;
    console.log(`${c.bad === 0 ? 'match   ' : 'MISMATCH'} line ${index} ${text}: max abs diff ${c.maxAbs.toExponential(2)}, ` +
      `${c.bad} of ${c.count} elements outside atol ${opts.atol} + rtol ${opts.rtol}${c.problem ? ' (' + c.problem + ')' : ''}`);
  }
  console.log(`check: ${ok ? 'PASS' : 'FAIL'} (${sampled.length} of ${lines.length} lines compared with ONNX Runtime)`);
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  console.error(`error: ${e.message}`);
  process.exit(1);
});
