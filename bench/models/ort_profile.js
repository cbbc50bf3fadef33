// ONNX Runtime's time per node on one model: the peer's side of
// bench/models/per_task.py.
//
//   node bench/models/ort_profile.js MODEL.onnx THREADS RUNS OUT.json NAME=d0,d1,... [NAME=...]
//
// The session of ort_latency.js (all graph optimizations, intraOpNumThreads =
// THREADS) with ONNX Runtime's profiler on: 5 warm-up runs and RUNS
// profiled runs on uniform random float32 inputs; writes OUT.json:
// {"model", "threads", "runs", "nodes": [{"name", "op", "median_us",
// "calls"}]}, one entry per node of the optimized graph (fused nodes and
// layout reorders included), its median over the runs (warm-up runs
// included in the profile; the median leaves them out).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');
const {randomFeeds} = require('./ort_feeds');

async function main() {
  const [model, threadsText, runsText, out, ...shapeArgs] = process.argv.slice(2);
  const threads = Number(threadsText);
  const runs = Number(runsText);
  if (!model || !(threads >= 1) || !(runs >= 1) || !out || shapeArgs.length === 0) {
    console.error('usage: node ort_profile.js MODEL.onnx THREADS RUNS OUT.json NAME=d0,d1,...');
    process.exit(2);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort_profile_'));
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionProviders: ['cpu'],
    enableProfiling: true,
    profileFilePrefix: path.join(dir, 'profile'),
  });
  const feeds = randomFeeds(shapeArgs);
  for (let i = 0; i < 5 + runs; i++) await session.run(feeds);
  session.endProfiling();
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
  if (files.length !== 1) throw new Error(`expected one profile in ${dir}, found ${files.length}`);
  const events = JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8'));
  fs.rmSync(dir, {recursive: true});
  const byNode = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    if (!byNode.has(name)) byNode.set(name, {op: e.args.op_name, durs: []});
    byNode.get(name).durs.push(e.dur);
  }
  const nodes = [];
  for (const [name, {op, durs}] of byNode) {
    durs.sort((a, b) => a - b);
    const mid = durs.length >> 1;
    const median = durs.length % 2 ? durs[mid] : (durs[mid - 1] + durs[mid]) / 2;
    nodes.push({name, op, median_us: median, calls: durs.length});
  }
  fs.writeFileSync(out, JSON.stringify({model, threads, runs, nodes}, null, 1));
}

main().catch((error) => {
  console.error(`ort_profile: ${error.message}`);
  process.exit(1);
});
