// ONNX Runtime's latency on one model, the peer of bench_model_latency.
//
//   node bench/models/ort_latency.js MODEL.onnx THREADS RUNS NAME=d0,d1,... [NAME=...]
//
// Creates a CPU session (all graph optimizations, intraOpNumThreads =
// THREADS, one inter-op thread), feeds each named input uniform random
// float32 data of the given shape, runs it 5 times to warm up and RUNS timed
// times, and prints one JSON line: {"model", "threads", "runs", "median_ms",
// "min_ms", "max_ms"}. onnxruntime-node is found through NODE_PATH
// (bench/models/run.sh installs it).
'use strict';
const ort = require('onnxruntime-node');
const {randomFeeds} = require('./ort_feeds');

async function main() {
  const [model, threadsText, runsText, ...shapeArgs] = process.argv.slice(2);
  const threads = Number(threadsText);
  const runs = Number(runsText);
  if (!model || !(threads >= 1) || !(runs >= 1) || shapeArgs.length === 0) {
    console.error('usage: node ort_latency.js MODEL.onnx THREADS RUNS NAME=d0,d1,...');
    process.exit(2);
  }
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionProviders: ['cpu'],
  });
  const feeds = randomFeeds(shapeArgs);
  for (let i = 0; i < 5; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const median = times.length % 2
      ? times[(times.length - 1) / 2]
      : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
  console.log(JSON.stringify({
    model, threads, runs, median_ms: median, min_ms: times[0],
    max_ms: times[times.length - 1],
  }));
}

main().catch((error) => {
  console.error(`ort_latency: ${error.message}`);
  process.exit(1);
});
