#!/usr/bin/env python3
"""Runs ONNX's checker on every .onnx file in a folder (one process for many models keeps the
round-trip test fast). Prints each failure; exits 1 if any model fails or none is found."""

import pathlib
import sys

import onnx


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: check_models.py FOLDER", file=sys.stderr)
        return 2
    paths = sorted(pathlib.Path(sys.argv[1]).glob("*.onnx"))
    failures = 0
    for path in paths:
        try:
            # By path, so that external data is checked where it lies.
            onnx.checker.check_model(str(path))
            model = onnx.load(str(path), load_external_data=False)
            if model.ir_version != 8:
                raise ValueError(f"ir_version is {model.ir_version}, not 8")
        except Exception as error:  # noqa: BLE001 - report every kind of failure
            failures += 1
            print(f"FAIL {path.name}: {str(error).strip()}")
    print(f"checked {len(paths)} models, {failures} failed")
    return 1 if failures or not paths else 0


if __name__ == "__main__":
    sys.exit(main())
