"""Checks a rewritten graph with ONNX's checker and that its layout file is JSON with a hash.

Usage: check_rewritten.py REWRITTEN.onnx LAYOUT.json
"""
import json
import sys

import onnx


def main(model, layout):
    onnx.checker.check_model(onnx.load(model))
    manifest = json.load(open(layout))
    assert manifest["hash"].startswith("fnv1a64:"), manifest["hash"]
    assert manifest["nranks"] == 2, manifest["nranks"]
    print("checker ok")


if __name__ == "__main__":
    main(*sys.argv[1:])
