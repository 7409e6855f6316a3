"""torch's NPU extension points under the drop-in, where NPU devices are the CPU.

The official models wrap their kernels as torch custom ops for graph mode: a
``torch.library.Library("pypto", "FRAGMENT")`` op with a ``Meta`` kernel (shapes for tracing)
and an ``NPU`` kernel that launches the PyPTO kernel, then ``torch.compile(model,
backend=torchair.get_npu_backend(...))``.  Without torch_npu, torch knows no ``NPU`` dispatch key
(the registration fails and the models skip it, so calling the op raises NotImplementedError),
and torchair (torch_npu's graph compiler) does not import.  With the torch_npu stub active:

* a kernel registered for ``NPU`` (or ``PrivateUse1``) is registered for ``CPU``, the device NPU
  tensors are here, so the op runs the kernel on the drop-in's backend;
* ``torchair`` is a stub whose ``get_npu_backend`` gives a ``torch.compile`` backend that runs
  the captured FX graph as captured: torchair compiles that graph for the NPU (a GE graph, or an
  aclgraph capture in ``reduce-overhead`` mode), which computes the same values; its other APIs
  are ``Unsupported`` with the caller's line.
"""

from __future__ import annotations

NPU_KEYS = {"NPU": "CPU", "PrivateUse1": "CPU", "AutogradNPU": "AutogradCPU", "AutogradPrivateUse1": "AutogradCPU"}


def cpu_dispatch_key(key: str) -> str:
    """The key a registration for an NPU key takes here."""
    return NPU_KEYS.get(key, key)


def patch_torch(torch, patch) -> None:
    """``Library.impl(op, fn, "NPU")`` registers ``fn`` for CPU; ``patch(owner, name, replace)`` is
    the drop-in's reversible patcher (the legacy ``torch.library.impl(lib, name, key)`` decorator
    goes through ``Library.impl`` too)."""

    def replace(original):
        def impl(self, op_name, fn, dispatch_key="", *args, **kwargs):
            return original(self, op_name, fn, cpu_dispatch_key(dispatch_key), *args, **kwargs)

        return impl

    patch(torch.library.Library, "impl", replace)
    # torch.npu (the stub) says it is available, for the scripts' own checks; torch's accelerator
    # API would then take the renamed PrivateUse1 device for a real one (dynamo asks it for the
    # current stream while tracing a graph) and fail: NPU tensors are CPU tensors, no accelerator
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None:
        patch(accelerator, "is_available", lambda original: lambda: False)


class CompilerConfig:
    """torchair's compiler settings: any attribute may be set, nested groups appear on first use
    (``config.experimental_config.frozen_parameter = True``); the drop-in reads none of them."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        group = CompilerConfig()
        object.__setattr__(self, name, group)
        return group


def run_as_captured(graph_module, example_inputs):
    """A ``torch.compile`` backend: the captured graph itself, run eagerly."""
    return graph_module.forward


def get_npu_backend(*args, compiler_config=None, **kwargs):
    """torchair's NPU graph backend, as the captured graph run on the drop-in's CPU device."""
    return run_as_captured


def build_torchair(new_module) -> dict:
    """The stub ``torchair`` package and the submodules the models import from it;
    ``new_module(name, doc, package)`` makes a drop-in module (unknown names ``Unsupported``)."""
    package = new_module("torchair", "torchair stub of the pypto-ast drop-in (graphs run as captured)", True)
    configs = new_module("torchair.configs", "torchair.configs stub of the pypto-ast drop-in", True)
    compiler = new_module("torchair.configs.compiler_config", "torchair compiler config stub", False)
    compiler.CompilerConfig = CompilerConfig
    configs.compiler_config = compiler
    package.configs = configs
    package.CompilerConfig = CompilerConfig
    package.get_npu_backend = get_npu_backend
    package.__version__ = "0.0+pypto_ast_dropin"
    return {"torchair": package, "torchair.configs": configs, "torchair.configs.compiler_config": compiler}


def served(name: str) -> bool:
    return name == "torchair" or name.startswith("torchair.")

