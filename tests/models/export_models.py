#!/usr/bin/python3
"""Exports the models of Lathe's model tests to ONNX, with reference data.

Run with Debian's Python (it has python3-torch and python3-torchvision):

    /usr/bin/python3 tests/models/export_models.py OUT_DIR \
        [--models resnet18,mobilenet_v2,encoder] [--opsets 13,17]

For each model and opset it writes OUT_DIR/<model>_opset<N>/ in the layout of
the ONNX backend test cases:

    model.onnx                      (torch.onnx.export, static shapes)
    test_data_set_0/input_0.pb      (an input, ONNX TensorProto)
    test_data_set_0/output_0.pb     (PyTorch's own output for it)

Weights and inputs are random with a fixed seed, so two runs write the same
models. The encoder is a 2-layer nn.TransformerEncoder (d=256, 4 heads,
sequence 128, batch 1, GELU): it is exported with grad enabled and
enable_nested_tensor=False, since torch 1.13's fused inference path
(aten::_transformer_encoder_layer_fwd) cannot be exported.

Prints one line per model written; exits non-zero with a message on stderr
when torch or torchvision is missing.
"""

import argparse
import os
import sys

MODELS = ("resnet18", "mobilenet_v2", "encoder")
SEED = 20241126


def build(name):
    import torch
    import torchvision

    torch.manual_seed(SEED)
    if name == "resnet18":
        model = torchvision.models.resnet18(weights=None)
        example = torch.randn(1, 3, 224, 224)
    elif name == "mobilenet_v2":
        model = torchvision.models.mobilenet_v2(weights=None)
        example = torch.randn(1, 3, 224, 224)
    elif name == "encoder":
        layer = torch.nn.TransformerEncoderLayer(
            d_model=256, nhead=4, dim_feedforward=1024, dropout=0.1,
            activation="gelu", batch_first=True)
        model = torch.nn.TransformerEncoder(
            layer, num_layers=2, enable_nested_tensor=False)
        # TransformerEncoder clones one layer: perturb every parameter so
        # the two layers differ (and a mix-up of them shows in the output).
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.add_(torch.randn_like(parameter) * 0.02)
        example = torch.randn(1, 128, 256)
    else:
        raise ValueError(f"unknown model {name}")
    model.eval()
    return model, example


def save_tensor(array, name, path):
    from onnx import numpy_helper

    tensor = numpy_helper.from_array(array, name)
    with open(path, "wb") as f:
        f.write(tensor.SerializeToString())


def export(name, opset, out_dir):
    import torch

    model, example = build(name)
    folder = os.path.join(out_dir, f"{name}_opset{opset}")
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    # Grad stays enabled for the reference run and the export alike (the
    # encoder's inference fast path is taken only without grad).
    with torch.enable_grad():
        expected = model(example).detach()
        torch.onnx.export(
            model, (example,), os.path.join(folder, "model.onnx"),
            input_names=["input"], output_names=["output"],
            opset_version=opset, do_constant_folding=True)
    save_tensor(example.numpy(), "input", os.path.join(data, "input_0.pb"))
    save_tensor(expected.numpy(), "output", os.path.join(data, "output_0.pb"))
    print(f"export_models: {folder} (input {tuple(example.shape)}, "
          f"output {tuple(expected.shape)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--opsets", default="13,17")
    args = parser.parse_args()
    try:
        import onnx  # noqa: F401
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as error:
        print(f"export_models: {error} (install python3-torch, "
              "python3-torchvision and python3-onnx)", file=sys.stderr)
        return 2
    models = [m for m in args.models.split(",") if m]
    for m in models:
        if m not in MODELS:
            print(f"export_models: unknown model {m} (known: "
                  f"{', '.join(MODELS)})", file=sys.stderr)
            return 2
    opsets = [int(o) for o in args.opsets.split(",") if o]
    for m in models:
        for opset in opsets:
            export(m, opset, args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
