#!/usr/bin/python3
"""PyTorch's latency on one of the bench models, a peer of bench_model_latency.

    /usr/bin/python3 bench/models/torch_latency.py MODEL THREADS RUNS

MODEL is one of tests/models/export_models.py's models (resnet18,
mobilenet_v2, encoder), built the same way (same seed, eval mode). Runs it
on Debian's python3-torch with torch.set_num_threads(THREADS) and one
inter-op thread, under torch.inference_mode() (PyTorch's fastest eager path;
the encoder then takes torch's fused transformer kernels), 5 times to warm
up and RUNS timed times on a random input of the model's shape, and prints
one JSON line: {"model", "threads", "runs", "median_ms", "min_ms",
"max_ms"}.
"""

import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "models"))


def main():
    if len(sys.argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    name, threads, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if threads < 1 or runs < 1:
        print("torch_latency: THREADS and RUNS must be at least 1",
              file=sys.stderr)
        sys.exit(2)
    import torch
    import export_models

    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set in this process
    model, example = export_models.build(name)
    times = []
    with torch.inference_mode():
        for i in range(5 + runs):
            start = time.perf_counter()
            model(example)
            end = time.perf_counter()
            if i >= 5:
                times.append((end - start) * 1e3)
    print(json.dumps({"model": name, "threads": threads, "runs": runs,
                      "median_ms": statistics.median(times),
                      "min_ms": min(times), "max_ms": max(times)}))


if __name__ == "__main__":
    main()
