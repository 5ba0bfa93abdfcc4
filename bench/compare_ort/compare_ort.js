#!/usr/bin/env node
// Compares OnePool's CLI with ONNX Runtime (CPU) on the same inputs: outputs, latency, memory.
//
//   node bench/compare_ort/compare_ort.js [MODEL ...] [--manifest FILE] [--cli PATH]
//        [--iterations N] [--warmup N] [--threads N] [--rounds R] [--paced K [--cpus LIST]]
//        [--json FILE] [--work DIR]
//        [--atol A] [--rtol R] [--self-test]
//
// MODEL is a model name or an .onnx path (shapes then come from a manifest entry with the same
// file name, else from the model's static input shapes). Without MODEL: every model in the
// --manifest files (repeatable; default .cache/models/manifest.json, from fetch_models.sh).
// Names are also looked up in build/models/manifest.json (models/generate.py).
// Per model:
//   Step 1. Deterministic inputs (seeded PRNG) written as raw little-endian .bin files.
//   Step 2. ONNX Runtime in a child process (so VmHWM is that model's peak RSS): warm-up, then N
//           timed runs; its outputs go to ort/ in the same layout as our --save-outputs.
//   Step 3. `onepool run ... --save-outputs` and `onepool bench ... --report`.
//   Step 4. Elementwise comparison: mismatch where |a-b| > atol + rtol*|b| (b = ORT).
//   Step 5. With --rounds R > 1: R - 1 more rounds of ORT's timing then ours, alternated; the
//           row's p50s and ratio are the medians over the R rounds (JSON: round_ratios).
//   Or, with --paced K: both runtimes stay loaded in two processes (ORT's worker and
//           `onepool bench --paced`) and take turns in bursts of K timed runs (who goes first
//           alternates), R x N timed runs each; each burst waits until the other runtime's threads
//           are idle (ONNX Runtime's spin for tens of milliseconds after a run) and starts with
//           one uncounted run (it re-warms caches and threads). The row's p50s are over all
//           counted runs, its ratio is theirs (JSON: paced, both sides' statistics; burst_ratios,
//           each burst's p50 ratio). A
//           shared machine's load, which drifts over seconds, then falls on both alike.
//           --cpus LIST (taskset's list, e.g. 1 or 0,1) runs both processes on those CPUs only: at
//           one thread each, two processes the scheduler left on different vCPUs of a shared host
//           meet different neighbours (MobileNetV2 here: our p50 1.2-1.4x apart between runs of
//           one binary, the other runtime's steady); on one CPU both meet the same.
// --self-test replaces step 3 by ORT with graph optimizations disabled, to test this script
// without our CLI. Exit status: 0 when every model matches, 1 on any mismatch or error.
// Needs only node and onnxruntime-node in .cache/ort (scripts/fetch_ort.sh).
'use strict';

const fs = require('fs');
const path = require('path');
const { spawn, spawnSync } = require('child_process');
const readline = require('readline');

const ROOT = path.resolve(__dirname, '..', '..');
const ORT_PATH = path.join(ROOT, '.cache', 'ort', 'node_modules', 'onnxruntime-node');

// ---------------------------------------------------------------------------------------------
// Data types and raw tensor files.
const DTYPES = {
  float32: { array: Float32Array, bytes: 4 },
  float64: { array: Float64Array, bytes: 8 },
  int64: { array: BigInt64Array, bytes: 8 },
  int32: { array: Int32Array, bytes: 4 },
  int8: { array: Int8Array, bytes: 1 },
  uint8: { array: Uint8Array, bytes: 1 },
  bool: { array: Uint8Array, bytes: 1 },
};

function numel(shape) {
  return shape.reduce((a, b) => a * b, 1);
}

function readRaw(file, dtype, shape) {
  const info = DTYPES[dtype];
  if (!info) throw new Error(`${file}: unsupported dtype '${dtype}'`);
  const buf = fs.readFileSync(file);
  const expected = numel(shape) * info.bytes;
  if (buf.length !== expected) {
    throw new Error(`${file}: ${buf.length} bytes, expected ${expected} for ${dtype}[${shape.join(',')}]`);
  }
  // Copy into an aligned buffer; the platform is little-endian (x86-64, aarch64).
  const aligned = new ArrayBuffer(buf.length);
  new Uint8Array(aligned).set(buf);
  return new info.array(aligned);
}

function writeRaw(file, typed) {
  fs.writeFileSync(file, Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength));
}

function safeName(name) {
  return name.replace(/[^A-Za-z0-9_.-]/g, '_');
}

// ---------------------------------------------------------------------------------------------
// Step 1. Deterministic inputs: mulberry32 seeded by an FNV-1a hash of "model/input".
const { fnv1a, mulberry32 } = require('../common/seeded_random.js');

function makeInput(seedText, dtype, shape, range) {
  const info = DTYPES[dtype];
  if (!info) throw new Error(`input dtype '${dtype}' is not supported by this script`);
  const rand = mulberry32(fnv1a(seedText));
  const n = numel(shape);
  const out = new info.array(n);
  if (dtype === 'float32' || dtype === 'float64') {
    const [lo, hi] = range || [0, 1];
    for (let i = 0; i < n; i++) out[i] = lo + (hi - lo) * rand();
    return out;
  }
  // Integers: [lo, hi) from the manifest's input_ranges (token ids < vocab), else small values.
  const defaults = { bool: [0, 2], uint8: [0, 256], int8: [-128, 128] };
  const [lo, hi] = range || defaults[dtype] || [0, 2];
  for (let i = 0; i < n; i++) {
    const v = lo + Math.floor((hi - lo) * rand());
    out[i] = dtype === 'int64' ? BigInt(v) : v;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Step 2 (child process). Runs ORT on a job file; writes outputs and ort.json into job.dir.
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

function latencyStats(times) {
  const s = [...times].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { min: s[0], mean, p50: percentile(s, 50), p90: percentile(s, 90), p99: percentile(s, 99), max: s[s.length - 1] };
}

function vmStatus(field) {
  const m = fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return m ? Number(m[1]) * 1024 : NaN;
}

// The job's ORT session and its inputs.
async function openOrtSession(job) {
  const ort = require(ORT_PATH);
  const session = await ort.InferenceSession.create(job.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: job.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: job.optimization,
    logSeverityLevel: 3,
  });
  const feeds = {};
  for (const inp of job.inputs) {
    feeds[inp.name] = new ort.Tensor(inp.dtype, readRaw(inp.file, inp.dtype, inp.shape), inp.shape);
  }
  return { session, feeds };
}

async function ortWorker(jobFile) {
  const job = JSON.parse(fs.readFileSync(jobFile, 'utf8'));
  const baselineRss = vmStatus('VmHWM');
  const { session, feeds } = await openOrtSession(job);
  let results;
  for (let i = 0; i < job.warmup; i++) results = await session.run(feeds);
  const times = [];
  for (let i = 0; i < job.iterations; i++) {
    const t0 = process.hrtime.bigint();
    results = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  if (!results) results = await session.run(feeds);
  const outputs = [];
  for (const name of session.outputNames) {
    const t = results[name];
    const file = `${safeName(name)}.bin`;
    writeRaw(path.join(job.dir, file), t.data);
    outputs.push({ name, dtype: t.type, shape: t.dims.map(Number), file });
  }
  fs.writeFileSync(path.join(job.dir, 'outputs.json'), JSON.stringify(outputs, null, 2) + '\n');
  const report = {
    latency_ms: latencyStats(times),
    peak_rss_bytes: vmStatus('VmHWM'),
    baseline_rss_bytes: baselineRss,
  };
  report.throughput_per_s = 1000 / report.latency_ms.mean;
  fs.writeFileSync(path.join(job.dir, 'ort.json'), JSON.stringify(report, null, 2) + '\n');
}

// --paced: after the warm-up, each line N on stdin times N runs, answered as `onepool bench
// --paced` answers ("paced: MS MS ...").
async function ortPacedWorker(jobFile) {
  const job = JSON.parse(fs.readFileSync(jobFile, 'utf8'));
  const { session, feeds } = await openOrtSession(job);
  for (let i = 0; i < job.warmup; i++) await session.run(feeds);
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const count = Number(line.trim());
    if (!Number.isInteger(count) || count < 1) throw new Error(`paced: expected a run count, got '${line}'`);
    const times = [];
    for (let i = 0; i < count; i++) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    process.stdout.write(`paced: ${times.map((t) => t.toFixed(6)).join(' ')}\n`);
  }
}

function writeOrtJob(model, inputs, dir, opts, optimization) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const job = { model, inputs, dir, threads: opts.threads, warmup: opts.warmup, iterations: opts.iterations, optimization };
  const jobFile = path.join(dir, 'job.json');
  fs.writeFileSync(jobFile, JSON.stringify(job, null, 2));
  return jobFile;
}

function runOrt(model, inputs, dir, opts, optimization) {
  const jobFile = writeOrtJob(model, inputs, dir, opts, optimization);
  const r = spawnSync(process.execPath, [__filename, '--ort-worker', jobFile], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error || r.status !== 0) {
    throw new Error(`ONNX Runtime failed on ${path.basename(model)} (exit ${r.status}${r.signal ? ', ' + r.signal : ''}):\n${tail(r.stderr || String(r.error))}`);
  }
  return JSON.parse(fs.readFileSync(path.join(dir, 'ort.json'), 'utf8'));
}

// ---------------------------------------------------------------------------------------------
// Step 3. Our CLI.
function tail(text, lines = 30) {
  const all = (text || '').trimEnd().split('\n');
  return all.slice(-lines).map((l) => '    | ' + l).join('\n');
}

function runCli(cli, args, what) {
  const r = spawnSync(cli, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  const cmd = [cli, ...args].map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(' ');
  if (r.error) throw new Error(`${what}: cannot run ${cli}: ${r.error.message}\n  command: ${cmd}`);
  if (r.status !== 0) {
    throw new Error(`${what}: exit ${r.status}${r.signal ? ' (' + r.signal + ')' : ''}\n  command: ${cmd}\n  stderr:\n${tail(r.stderr)}` +
      (r.stdout ? `\n  stdout:\n${tail(r.stdout, 10)}` : ''));
  }
  return r;
}

// The CLI's flags for the model's inputs: --shapes and --bound (shapes), --inputs (files). A
// scalar input has one shape only: it needs no --shapes entry (and `name:` is not one). The
// manifest's bounds (a Loop's scan output length) travel as --bound flags.
function cliInputFlags(inputs, bounds) {
  const shapes = inputs.filter((i) => i.shape.length > 0)
    .flatMap((i) => ['--shapes', `${i.name}:${i.shape.join('x')}`])
    .concat(Object.entries(bounds).flatMap(([name, n]) => ['--bound', `${name}=${n}`]));
  const files = inputs.flatMap((i) => ['--inputs', `${i.name}:${i.file}`]);
  return { shapes, files };
}

function runOurs(model, inputs, dir, opts, bounds = {}) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const { shapes, files } = cliInputFlags(inputs, bounds);
  const outDir = path.join(dir, 'outputs');
  runCli(opts.cli, ['run', model, ...shapes, ...files, '--save-outputs', outDir, '--save-format', 'bin'],
    'onepool run');
  return { outDir, report: benchOurs(model, shapes, files, dir, opts) };
}

// `onepool bench` on the given --shapes / --bound and --inputs flags: its JSON report.
function benchOurs(model, shapes, files, dir, opts) {
  const reportFile = path.join(dir, 'report.json');
  // Timed on the inputs ONNX Runtime ran on (an If's branch may depend on their values).
  runCli(opts.cli, ['bench', model, ...shapes, ...files, '--warmup', String(opts.warmup), '--iterations', String(opts.iterations),
    '--threads', String(opts.threads), '--report', reportFile], 'onepool bench');
  let report;
  try {
    report = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
  } catch (e) {
    throw new Error(`onepool bench: cannot read its report ${reportFile}: ${e.message}`);
  }
  if (!report.latency_ms || typeof report.latency_ms.p50 !== 'number') {
    throw new Error(`onepool bench: ${reportFile} has no latency_ms.p50`);
  }
  return report;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// Rounds 2..N of a model's timing (--rounds): ONNX Runtime, then OnePool's bench, again and again,
// so that both see the same stretches of a shared machine's load. Each round's p50s and their
// ratio are kept; the row reports the medians.
function timeMoreRounds(entry, inputs, dir, opts, row) {
  const times = { ort: [row.ort_p50_ms], ours: [row.ours_p50_ms] };
  const { shapes, files } = cliInputFlags(inputs, entry.bounds || {});
  for (let round = 1; round < opts.rounds; round++) {
    times.ort.push(runOrt(entry.path, inputs, path.join(dir, 'ort_rounds'), opts, 'all').latency_ms.p50);
    if (opts.selfTest) {
      times.ours.push(runOrt(entry.path, inputs, path.join(dir, 'ours_rounds'), opts, 'disabled').latency_ms.p50);
    } else {
      const roundDir = path.join(dir, 'ours_rounds');
      fs.mkdirSync(roundDir, { recursive: true });
      times.ours.push(benchOurs(entry.path, shapes, files, roundDir, opts).latency_ms.p50);
    }
  }
  row.round_ratios = times.ours.map((ours, i) => ours / times.ort[i]);
  row.ort_p50_ms = median(times.ort);
  row.ours_p50_ms = median(times.ours);
  row.ratio = median(row.round_ratios);
}

// A child process that answers each run-count request on its stdin with one "paced: MS ..." line.
class PacedChild {
  constructor(command, args, what) {
    this.what = what;
    this.command = [command, ...args].map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(' ');
    this.waiting = [];
    this.stderr = '';
    this.proc = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stderr.on('data', (d) => { this.stderr = (this.stderr + d).slice(-65536); });
    this.proc.stdin.on('error', () => {});  // a child that died is reported by its exit
    this.closed = new Promise((resolve) => {
      this.proc.on('error', (e) => { this.exit = { error: e }; this.failAll(); resolve(); });
      this.proc.on('close', (code, signal) => { this.exit = this.exit || { code, signal }; this.failAll(); resolve(); });
    });
    readline.createInterface({ input: this.proc.stdout }).on('line', (line) => {
      if (!line.startsWith('paced:')) return;
      const waiter = this.waiting.shift();
      if (waiter) waiter.resolve(line.slice(6).trim().split(/\s+/).map(Number));
    });
  }

  failure() {
    const how = this.exit.error ? this.exit.error.message : `exit ${this.exit.code}${this.exit.signal ? ' (' + this.exit.signal + ')' : ''}`;
    return new Error(`${this.what}: ${how}\n  command: ${this.command}\n  stderr:\n${tail(this.stderr)}`);
  }

  failAll() {
    for (const waiter of this.waiting.splice(0)) waiter.reject(this.failure());
  }

  run(count) {
    if (this.exit) return Promise.reject(this.failure());
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.proc.stdin.write(`${count}\n`);
    });
  }

  // Ends its input and waits for it to exit; a non-zero exit is an error.
  async finish() {
    this.proc.stdin.end();
    await this.closed;
    if (this.exit.error || this.exit.code !== 0) throw this.failure();
  }
}

// CPU time of every thread of process `pid` so far, in ns (/proc/PID/task/*/schedstat), or NaN.
function cpuTimeNs(pid) {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).reduce((sum, task) =>
      sum + Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]), 0);
  } catch (e) {
    return NaN;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Waits until the child's threads have stopped using the CPU: ONNX Runtime's spin for tens of
// milliseconds after a run (while the other runtime's burst would share the cores with them).
// Idle: under kIdleCpuNs of CPU time in kIdleWindowMs (kernels account it in scheduler ticks, 4 ms
// here: a spinning thread shows 4 ms of it per tick, an idle one none); at most kMaxIdleWaitMs.
const kIdleWindowMs = 10;
const kIdleCpuNs = 2e6;
const kMaxIdleWaitMs = 1000;
async function untilIdle(child) {
  for (let waited = 0; waited < kMaxIdleWaitMs; waited += kIdleWindowMs) {
    const before = cpuTimeNs(child.proc.pid);
    await sleep(kIdleWindowMs);
    const used = cpuTimeNs(child.proc.pid) - before;
    if (!(used >= kIdleCpuNs)) return;  // idle, or no /proc to ask
  }
}

// --paced K: both runtimes loaded side by side, taking turns in bursts of K counted runs.
async function timePaced(entry, inputs, dir, opts, row) {
  const jobFile = writeOrtJob(entry.path, inputs, path.join(dir, 'ort_paced'), opts, 'all');
  // The command line of a child, under taskset with --cpus.
  const pinned = (command, args) => (opts.cpus ? ['taskset', ['-c', opts.cpus, command, ...args]] : [command, args]);
  const ort = new PacedChild(...pinned(process.execPath, [__filename, '--ort-paced', jobFile]), 'ONNX Runtime (paced)');
  const { shapes, files } = cliInputFlags(inputs, entry.bounds || {});
  const ours = new PacedChild(...pinned(opts.cli, ['bench', entry.path, ...shapes, ...files, '--warmup', String(opts.warmup),
    '--threads', String(opts.threads), '--paced']), 'onepool bench --paced');
  const times = { ort: [], ours: [] };
  const burstRatios = [];
  const total = opts.iterations * opts.rounds;
  try {
    for (let done = 0, burst = 0; done < total; burst++) {
      const count = Math.min(opts.paced, total - done);
      const turns = burst % 2 === 0 ? [['ort', ort], ['ours', ours]] : [['ours', ours], ['ort', ort]];
      const got = {};
      for (const [who, child] of turns) {
        await untilIdle(who === 'ort' ? ours : ort);
        got[who] = (await child.run(count + 1)).slice(1);
      }
      times.ort.push(...got.ort);
      times.ours.push(...got.ours);
      burstRatios.push(median(got.ours) / median(got.ort));
      done += count;
    }
  } finally {
    const ends = await Promise.allSettled([ort.finish(), ours.finish()]);
    const failed = ends.find((e) => e.status === 'rejected');
    if (failed && times.ours.length === total) throw failed.reason;
  }
  row.ort_p50_ms = median(times.ort);
  row.ours_p50_ms = median(times.ours);
  row.ratio = row.ours_p50_ms / row.ort_p50_ms;
  row.paced = { burst: opts.paced, runs: total, ours: latencyStats(times.ours), ort: latencyStats(times.ort) };
  row.burst_ratios = burstRatios;
}

// ---------------------------------------------------------------------------------------------
// Step 4. Comparison.
function readOutputs(dir, who) {
  const file = path.join(dir, 'outputs.json');
  if (!fs.existsSync(file)) throw new Error(`${who}: ${file} is missing`);
  const list = JSON.parse(fs.readFileSync(file, 'utf8'));
  const map = new Map();
  const aliases = { float: 'float32', double: 'float64' };
  for (const o of list) {
    const dtype = aliases[o.dtype] || o.dtype;
    map.set(o.name, { ...o, dtype, data: readRaw(path.join(dir, o.file), dtype, o.shape) });
  }
  return map;
}

function compareOutputs(ours, ref, atol, rtol) {
  const problems = [];
  let maxAbs = 0;
  let mismatches = 0;
  for (const [name, b] of ref) {
    const a = ours.get(name);
    if (!a) {
      problems.push(`output '${name}' missing from ours`);
      continue;
    }
    if (a.shape.join('x') !== b.shape.join('x')) {
      problems.push(`output '${name}': shape [${a.shape}] vs ORT [${b.shape}]`);
      continue;
    }
    if (a.dtype !== b.dtype) {
      problems.push(`output '${name}': dtype ${a.dtype} vs ORT ${b.dtype}`);
      continue;
    }
    let worst = -1;
    let bad = 0;
    for (let i = 0; i < b.data.length; i++) {
      const x = Number(a.data[i]);
      const y = Number(b.data[i]);
      const d = Math.abs(x - y);
      // NaN on either side (not both) counts as a mismatch of infinite size.
      const diff = Number.isNaN(d) ? (Number.isNaN(x) && Number.isNaN(y) ? 0 : Infinity) : d;
      if (diff > maxAbs) maxAbs = diff;
      if (diff > atol + rtol * Math.abs(y)) {
        bad++;
        if (worst < 0) worst = i;
      }
    }
    if (bad > 0) {
      problems.push(`output '${name}': ${bad}/${b.data.length} elements differ; first at flat index ${worst}: ` +
        `${a.data[worst]} vs ORT ${b.data[worst]}`);
      mismatches += bad;
    }
  }
  for (const name of ours.keys()) if (!ref.has(name)) problems.push(`output '${name}' is not an ORT output`);
  return { maxAbs, mismatches, problems };
}

// ---------------------------------------------------------------------------------------------
// Models, options, report.
function loadManifest(file) {
  const data = JSON.parse(fs.readFileSync(file, 'utf8'));
  const models = Array.isArray(data) ? data : data.models;
  if (!Array.isArray(models)) throw new Error(`${file}: expected {"models": [...]} or a list`);
  return models.map((m) => ({ ...m, path: path.resolve(path.dirname(file), m.file) }));
}

function resolveModels(opts) {
  // With no MODEL arguments: every model of the --manifest files (default: the fetched models).
  // Names are looked up in those files and, by default, also in build/models/manifest.json.
  const explicit = opts.manifests.length > 0;
  const runAll = explicit ? opts.manifests : [path.join(ROOT, '.cache', 'models', 'manifest.json')];
  const lookup = explicit ? opts.manifests : [...runAll, path.join(ROOT, 'build', 'models', 'manifest.json')];
  const load = (files) => files.filter((f) => fs.existsSync(f)).flatMap(loadManifest);
  if (opts.models.length === 0) {
    const all = load(runAll);
    if (all.length === 0) throw new Error(`no models: ${runAll.join(', ')} missing or empty (run scripts/fetch_models.sh)`);
    return all;
  }
  const manifest = load(lookup);
  return opts.models.map((arg) => {
    const byName = manifest.find((m) => m.name === arg || m.path === path.resolve(arg));
    if (byName) return byName;
    if (arg.endsWith('.onnx') && fs.existsSync(arg)) {
      const twin = manifest.find((m) => m.file === path.basename(arg));
      return { ...(twin || {}), name: path.basename(arg, '.onnx'), path: path.resolve(arg), inputs: twin ? twin.inputs : null };
    }
    throw new Error(`'${arg}' is neither a model in ${lookup.join(' or ')} nor an .onnx file`);
  });
}

async function inputSpecs(entry, dir) {
  // Shapes from the manifest; dtypes from the manifest, else from ORT's metadata.
  const ort = require(ORT_PATH);
  const session = await ort.InferenceSession.create(entry.path, { logSeverityLevel: 3 });
  const meta = new Map((session.inputMetadata || []).map((m) => [m.name, m]));
  const specs = [];
  for (const name of session.inputNames) {
    const m = meta.get(name) || {};
    let shape = entry.inputs && entry.inputs[name];
    if (!shape) {
      if (!m.shape || !m.shape.every((d) => typeof d === 'number' && d > 0)) {
        throw new Error(`${entry.name}: input '${name}' has shape [${m.shape}]; give its shape in a manifest`);
      }
      shape = m.shape;
    }
    const dtype = (entry.input_dtypes && entry.input_dtypes[name]) || m.type || 'float32';
    const range = entry.input_ranges && entry.input_ranges[name];
    // A manifest's input_seed lets two models (a half model and its float32 twin) share inputs.
    const data = makeInput(`${entry.input_seed || entry.name}/${name}`, dtype, shape, range);
    const file = path.join(dir, `${safeName(name)}.bin`);
    writeRaw(file, data);
    specs.push({ name, dtype, shape, file });
  }
  if (typeof session.release === 'function') await session.release();
  return specs;
}

function parseArgs(argv) {
  const opts = {
    models: [], manifests: [], cli: path.join(ROOT, 'build', 'onepool'),
    iterations: 20, warmup: 3, threads: 2, rounds: 1, paced: 0, cpus: null, json: null, work: path.join(ROOT, '.cache', 'compare_ort'),
    atol: 1e-4, rtol: 1e-3, selfTest: false,
  };
  const value = (i, flag) => {
    if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
    return argv[i + 1];
  };
  const number = (text, flag) => {
    const n = Number(text);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${flag}: '${text}' is not a non-negative number`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let inline = null;
    if (a.startsWith('--') && a.includes('=')) [a, inline] = [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)];
    const take = () => (inline !== null ? inline : value(i++, a));
    switch (a) {
      case '--manifest': opts.manifests.push(path.resolve(take())); break;
      case '--cli': opts.cli = path.resolve(take()); break;
      case '--iterations': opts.iterations = Math.max(1, Math.floor(number(take(), a))); break;
      case '--warmup': opts.warmup = Math.floor(number(take(), a)); break;
      case '--threads': opts.threads = Math.max(1, Math.floor(number(take(), a))); break;
      case '--rounds': opts.rounds = Math.max(1, Math.floor(number(take(), a))); break;
      case '--paced': opts.paced = Math.max(1, Math.floor(number(take(), a))); break;
      case '--cpus': {
        opts.cpus = take();
        if (!/^\d+([-,]\d+)*$/.test(opts.cpus)) throw new Error(`--cpus: '${opts.cpus}' is not a CPU list such as 1 or 0,1 or 0-3`);
        break;
      }
      case '--json': opts.json = path.resolve(take()); break;
      case '--work': opts.work = path.resolve(take()); break;
      case '--atol': opts.atol = number(take(), a); break;
      case '--rtol': opts.rtol = number(take(), a); break;
      case '--self-test': opts.selfTest = true; break;
      case '-h': case '--help':
        console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(1).filter((l, i, all) => all.slice(0, i + 1).every((x) => x.startsWith('//')))
          .map((l) => l.slice(3)).join('\n'));
        process.exit(0);
        break;
      default:
        if (a.startsWith('-')) throw new Error(`unknown option ${a} (see --help)`);
        opts.models.push(a);
    }
  }
  if (opts.cpus !== null && opts.paced === 0) throw new Error('--cpus pins the paced processes: give --paced K too');
  return opts;
}

function fmt(x, digits = 2) {
  return typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '-';
}

function printTable(rows) {
  const header = ['model', 'max_abs_diff', 'match', 'ours_p50_ms', 'ort_p50_ms', 'ours/ort', 'pool_MB', 'weights_MB', 'ort_rss_MB'];
  const body = rows.map((r) => [r.model, r.max_abs_diff === undefined ? '-' : r.max_abs_diff.toExponential(2),
    r.error ? 'ERROR' : r.match ? 'yes' : 'NO', fmt(r.ours_p50_ms), fmt(r.ort_p50_ms), fmt(r.ratio, 3),
    fmt(r.pool_mb, 1), fmt(r.weights_mb, 1), fmt(r.ort_peak_rss_mb, 1)]);
  const widths = header.map((h, c) => Math.max(h.length, ...body.map((b) => b[c].length)));
  const line = (cells) => cells.map((x, c) => (c === 0 ? x.padEnd(widths[c]) : x.padStart(widths[c]))).join('  ');
  console.log(line(header));
  for (const b of body) console.log(line(b));
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(ORT_PATH)) throw new Error(`onnxruntime-node not found at ${ORT_PATH}: run scripts/fetch_ort.sh`);
  if (!opts.selfTest && !fs.existsSync(opts.cli)) throw new Error(`OnePool CLI not found at ${opts.cli} (build it, or pass --cli PATH)`);
  const models = resolveModels(opts);
  const MB = 1024 * 1024;
  const rows = [];
  for (const entry of models) {
    const row = { model: entry.name };
    rows.push(row);
    try {
      const dir = path.join(opts.work, safeName(entry.name));
      fs.mkdirSync(path.join(dir, 'inputs'), { recursive: true });
      const inputs = await inputSpecs(entry, path.join(dir, 'inputs'));
      const ort = runOrt(entry.path, inputs, path.join(dir, 'ort'), opts, 'all');
      row.ort_p50_ms = ort.latency_ms.p50;
      row.ort_peak_rss_mb = ort.peak_rss_bytes / MB;
      let oursDir;
      if (opts.selfTest) {
        const ref = runOrt(entry.path, inputs, path.join(dir, 'ours'), opts, 'disabled');
        oursDir = path.join(dir, 'ours');
        row.ours_p50_ms = ref.latency_ms.p50;
      } else {
        const ours = runOurs(entry.path, inputs, path.join(dir, 'ours'), opts, entry.bounds || {});
        oursDir = ours.outDir;
        row.ours_p50_ms = ours.report.latency_ms.p50;
        row.pool_mb = ours.report.pool_bytes / MB;
        row.weights_mb = ours.report.weights_bytes / MB;
      }
      row.ratio = row.ours_p50_ms / row.ort_p50_ms;
      const cmp = compareOutputs(readOutputs(oursDir, 'ours'), readOutputs(path.join(dir, 'ort'), 'ORT'), opts.atol, opts.rtol);
      row.max_abs_diff = cmp.maxAbs;
      row.match = cmp.problems.length === 0;
      if (!row.match) row.problems = cmp.problems;
      if (opts.paced > 0 && !opts.selfTest) {
        await timePaced(entry, inputs, dir, opts, row);
      } else if (opts.rounds > 1) {
        timeMoreRounds(entry, inputs, dir, opts, row);
      }
    } catch (e) {
      row.error = e.message;
    }
    const status = row.error ? 'ERROR' : row.match ? 'ok' : 'MISMATCH';
    console.error(`[compare_ort] ${entry.name}: ${status}`);
    for (const p of row.problems || []) console.error(`    ${p}`);
    if (row.error) console.error(`    ${row.error.split('\n').join('\n    ')}`);
  }
  console.log('');
  printTable(rows);
  const ratios = rows.filter((r) => !r.error && Number.isFinite(r.ratio) && r.ratio > 0).map((r) => r.ratio);
  const geomean = ratios.length ? Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length) : NaN;
  const failed = rows.filter((r) => r.error || !r.match).length;
  console.log(`\ngeomean ours/ORT p50 ratio: ${fmt(geomean, 3)} over ${ratios.length} model(s); ` +
    `${rows.length - failed}/${rows.length} match (atol ${opts.atol}, rtol ${opts.rtol})` +
    (opts.selfTest ? '  [self-test: "ours" is ORT with graph optimizations disabled]' : ''));
  if (opts.json) {
    const doc = { version: 1, self_test: opts.selfTest, iterations: opts.iterations, warmup: opts.warmup,
      threads: opts.threads, rounds: opts.rounds, paced: opts.paced, atol: opts.atol, rtol: opts.rtol, geomean_ratio: geomean, models: rows };
    fs.writeFileSync(opts.json, JSON.stringify(doc, null, 2) + '\n');
  }
  return failed === 0 ? 0 : 1;
}

if (process.argv[2] === '--ort-worker' || process.argv[2] === '--ort-paced') {
  (process.argv[2] === '--ort-worker' ? ortWorker : ortPacedWorker)(process.argv[3]).catch((e) => {
    console.error(e && e.stack ? e.stack : String(e));
    process.exit(1);
  });
} else {
  main().then((code) => process.exit(code), (e) => {
    console.error(`compare_ort: ${e.message}`);
    process.exit(2);
  });
}
