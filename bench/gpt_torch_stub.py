"""Lets onnxruntime.training import without torch: it imports torch at import time, and
generate_artifacts uses none of it. Every torch module and attribute is a placeholder."""
import importlib.machinery
import sys
import types


class _Placeholder(type):
    def __getattr__(cls, name):
        return _Placeholder(name, (), {})

    def __call__(cls, *args, **kwargs):
        return cls

    def __getitem__(cls, key):
        return cls

    def __or__(cls, other):
        return cls


class _Module(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(name, (), {})


if "torch" not in sys.modules:
    for _name in ["torch", "torch.nn", "torch.onnx", "torch.utils", "torch.cuda"]:
        _m = _Module(_name)
        _m.__spec__ = importlib.machinery.ModuleSpec(_name, None)
        _m.__path__ = []
        _m.__version__ = "0.0"
        sys.modules[_name] = _m
