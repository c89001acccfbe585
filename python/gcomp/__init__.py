"""gcomp: compile ONNX ResNet and ViT models into plans and run them, from Python.

    import gcomp, numpy as np
    plan = gcomp.compile("resnet50.onnx", target="cpu", batch=8)     # or gcomp.load("r.gplan")
    session = gcomp.Session(plan, threads=2)
    out = session.run({"input": np.zeros((1, 3, 224, 224), np.float32)})   # {"output": array}

Errors raise gcomp.Error (InvalidArgumentError for bad models, options and inputs, NotFoundError
for missing files) with the messages the gcomp CLI prints.
"""
from ._gcomp import Plan, Session, TensorInfo, __version__, compile, inspect, load, load_bytes
from . import _gcomp


class Error(RuntimeError):
    """A gcomp failure (its message is the CLI's)."""


class InvalidArgumentError(Error, ValueError):
    """An invalid or unsupported model, option, plan or input."""


class NotFoundError(Error, FileNotFoundError):
    """A file that does not exist."""


_gcomp._set_error_types(Error, InvalidArgumentError, NotFoundError)

__all__ = ["Error", "InvalidArgumentError", "NotFoundError", "Plan", "Session", "TensorInfo", "compile", "inspect",
           "load", "load_bytes", "__version__"]
