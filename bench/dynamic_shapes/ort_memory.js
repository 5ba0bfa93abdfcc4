#!/usr/bin/env node
// The peer's memory over a shape sweep: one ONNX Runtime (CPU) session runs every line of a
// --shapes-sweep file and the process's resident set (VmRSS) and peak (VmHWM) are printed after
// each, to set beside `onepool bench --shapes-sweep` (run it under `/usr/bin/time -v`).
//
//   node bench/dynamic_shapes/ort_memory.js MODEL SWEEP_FILE [--threads N] [--lines N]
// Needs onnxruntime-node in .cache/ort (scripts/fetch_ort.sh).
'use strict';

const fs = require('fs');
const path = require('path');

const ORT_PATH = path.join(__dirname, '..', '..', '.cache', 'ort', 'node_modules', 'onnxruntime-node');

function vmStatus(field) {
  const m = fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return m ? Number(m[1]) * 1024 : NaN;
}

async function main() {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args.splice(i, 2)[1]) : fallback;
  };
  const threads = option('--threads', 2);
  const limit = option('--lines', Infinity);
  const [model, sweep] = args;
  if (!model || !sweep) throw new Error('usage: ort_memory.js MODEL SWEEP_FILE [--threads N] [--lines N]');
  const ort = require(ORT_PATH);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1, logSeverityLevel: 3,
  });
  const lines = fs.readFileSync(sweep, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const start = vmStatus('VmRSS');
  console.log(`after create: rss ${(start / 1e6).toFixed(1)} MB`);
  let grew = 0;
  let lastPeak = vmStatus('VmHWM');
  for (let i = 0; i < Math.min(lines.length, limit); i++) {
    const feeds = {};
    for (const entry of lines[i].split(',')) {
      const colon = entry.lastIndexOf(':');
      const shape = entry.slice(colon + 1).split('x').map(Number);
      const data = new Float32Array(shape.reduce((a, b) => a * b, 1)).fill(0.5);
      feeds[entry.slice(0, colon)] = new ort.Tensor('float32', data, shape);
    }
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const peak = vmStatus('VmHWM');
    if (peak > lastPeak + (1 << 20)) grew++;
    lastPeak = peak;
    console.log(`${String(i + 1).padStart(4)}  ${lines[i].padEnd(24)} run ${ms.toFixed(1).padStart(8)} ms  ` +
      `rss ${(vmStatus('VmRSS') / 1e6).toFixed(1).padStart(8)} MB  peak ${(peak / 1e6).toFixed(1).padStart(8)} MB`);
  }
  console.log(`summary: rss ${(start / 1e6).toFixed(1)} MB after create -> ${(vmStatus('VmRSS') / 1e6).toFixed(1)} MB; ` +
    `peak ${(vmStatus('VmHWM') / 1e6).toFixed(1)} MB; peak rose (>1 MB) after ${grew} runs`);
}

main().catch((e) => {
  console.error(`error: ${e.message}`);
  process.exit(1);
});
