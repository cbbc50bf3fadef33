// The inputs ort_latency.js and ort_profile.js feed a session: for each
// NAME=d0,d1,... argument, a float32 tensor of that shape filled with
// uniform random values in [-1, 1).
'use strict';
const ort = require('onnxruntime-node');

function randomFeeds(shapeArgs) {
  const feeds = {};
  for (const arg of shapeArgs) {
    const [name, dims] = arg.split('=');
    const shape = dims.split(',').map(Number);
    const size = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    for (let i = 0; i < size; i++) data[i] = Math.random() * 2 - 1;
    feeds[name] = new ort.Tensor('float32', data, shape);
  }
  return feeds;
}

module.exports = {randomFeeds};
