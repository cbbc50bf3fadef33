#!/usr/bin/env python3
"""Where a model's time goes, task by task, on Lathe and on ONNX Runtime.

  per_task.py LATHE.json ORT.json

LATHE.json: `lathe bench MODEL.onnx --json` (each step with the ONNX nodes it
covers); ORT.json: bench/models/ort_profile.js on the same model and thread
count (each node of ONNX Runtime's optimized graph with its median time).
ONNX Runtime's nodes are matched to Lathe's steps by name: a fused node
keeps the name of a node it grew from, or (its NCHWc convolutions) is named
after the value it computes with "_nchwc" added; nodes it adds that match
no value (layout reorders) get their own row. A convolution Lathe splits
into Winograd's kernels (steps named NAME_winograd_input, _product and
_output after the Conv NAME, compiler/graph/passes/winograd_conv.h) is one
row per shape, its three kernels' time against ONNX Runtime's Conv NAME.
Prints a Markdown table
of Lathe's tasks (in `lathe tasks` order, each with its occurrences), their
time per run on both sides and the ratio (ONNX Runtime's time over Lathe's:
above 1, Lathe is faster), largest gap first.
"""
import json
import re
import sys


def shape_summary(spec):
    """'in0[1,144,56,56] in1[144,1,3,3]': the first two inputs' shapes."""
    shapes = re.findall(r"input (in\d+)(\[[0-9,]*\])", spec)
    return " ".join(f"{name}{shape}" for name, shape in shapes[:2])


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: per_task.py LATHE.json ORT.json")
    lathe = json.load(open(sys.argv[1]))
    ort = json.load(open(sys.argv[2]))
    # Every ONNX node name -> the Lathe task (spec) or host row that runs it.
    # Every ONNX node name, and every value name, -> the Lathe task (spec) or
    # host row that computes it.
    owner = {}
    for step in lathe["steps"]:
        key = step["spec"] if step["kind"] == "kernel" else "(host steps and views)"
        for name in step["nodes"] + step["values"]:
            owner[name] = key
    # Winograd convolutions: Conv name -> row label, with their steps' time.
    # The view that gives a Winograd conv's result its [N,K,H,W] shape
    # (NAME_untile, after the output transform's kernel) holds the value
    # ONNX Runtime may name its convolution after.
    winograd = re.compile(r"^(.*)_winograd_(input|product|output)$")
    parts = {}  # conv name -> {part: step}
    results = {}  # conv name -> value names of its untile views
    last = None
    for step in lathe["steps"]:
        for name in step["nodes"]:
            m = winograd.match(name) if step["kind"] == "kernel" else None
            if m:
                parts.setdefault(m.group(1), {})[m.group(2)] = step
                last = m.group(1)
            elif name.endswith("_untile") and last is not None:
                results.setdefault(last, []).extend(step["values"])
    winograd_specs = set()
    winograd_rows = {}  # label -> [convs, Lathe ms]
    for conv, steps in parts.items():
        x = re.search(r"in0(\[[0-9,]*\])", steps["input"]["spec"]).group(1)
        k = re.search(r"in0\[16,([0-9]+),", steps["product"]["spec"]).group(1)
        label = f"{x} to {k} channels"
        row = winograd_rows.setdefault(label, [0, 0.0])
        row[0] += 1
        for step in steps.values():
            row[1] += step["ms"]
            winograd_specs.add(step["spec"])
            for name in step["nodes"] + step["values"]:
                owner[name] = ("winograd", label)
        owner[conv] = ("winograd", label)
        for name in results.get(conv, []):
            owner[name] = ("winograd", label)
    names = sorted(owner, key=len, reverse=True)
    ort_ms = {}
    ort_ops = {}
    unmatched = []
    for node in ort["nodes"]:
        name = node["name"]
        if name.endswith("_nchwc"):
            name = name[: -len("_nchwc")]
        key = owner.get(name)
        if key is None:
            key = next((owner[n] for n in names if name.startswith(n)), None)
        if key is None:
            unmatched.append(node)
            continue
        ort_ms[key] = ort_ms.get(key, 0.0) + node["median_us"] / 1e3
        ort_ops.setdefault(key, set()).add(node["op"])
    rows = []
    for label, (convs, lathe_ms) in sorted(winograd_rows.items()):
        key = ("winograd", label)
        rows.append(("Winograd Conv (3 kernels)", label, convs, lathe_ms,
                     ort_ms.get(key, 0.0), ",".join(sorted(ort_ops.get(key, [])))))
    for task in lathe["tasks"]:
        spec = task["spec"]
        if spec in winograd_specs:
            continue
        rows.append((task["anchor"] or "chain", shape_summary(spec), task["count"],
                     task["ms"], ort_ms.get(spec, 0.0),
                     ",".join(sorted(ort_ops.get(spec, [])))))
    host = "(host steps and views)"
    rows.append(("host", "-", lathe["host"]["steps"], lathe["host"]["ms"],
                 ort_ms.get(host, 0.0), ",".join(sorted(ort_ops.get(host, [])))))
    rows.append(("ONNX Runtime only", "-", len(unmatched), 0.0,
                 sum(n["median_us"] for n in unmatched) / 1e3,
                 ",".join(sorted({n["op"] for n in unmatched}))))
    rows.sort(key=lambda r: r[4] - r[3])
    print(f"Lathe {lathe['steps_ms']:.3f} ms in steps; ONNX Runtime "
          f"{sum(n['median_us'] for n in ort['nodes']) / 1e3:.3f} ms in nodes "
          f"({lathe['threads']} thread(s))\n")
    print("| task (anchor) | shapes | count | Lathe (ms) | ONNX Runtime (ms) | ORT / Lathe | ONNX Runtime's ops |")
    print("|---|---|---|---|---|---|---|")
    for anchor, shapes, count, lathe_ms, peer_ms, ops in rows:
        ratio = f"{peer_ms / lathe_ms:.2f}" if lathe_ms > 0 else "-"
        print(f"| {anchor} | {shapes} | {count} | {lathe_ms:.3f} | {peer_ms:.3f} | {ratio} | {ops} |")


if __name__ == "__main__":
    main()
