"""Check the NPU control program against CANN's real ACL headers with ``g++ -fsyntax-only``.

The NPU control program (``control_npu.cpp``) and its runtime (``npu/pypto_npu_runtime.*``) are
plain C++ against ``acl/acl.h``: every ACL call, type and constant in them can be checked on a
machine without CANN, against the headers that torch_npu's wheel ships (``torch_npu/include/acl``,
the same ACL runtime API).  Where to find them: ``$PYPTO_AST_ACL_INCLUDE`` (a directory holding
``acl/acl.h``), else the CANN toolkit's ``include``, else an installed torch_npu's ``include`` (found
without importing torch_npu, which fails without CANN).  ``.ci/run`` downloads the wheel and points
the variable at its headers, so CI checks every example's control program on every run.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Mapping, Optional

from .. import knobs

ACL_ENV = "PYPTO_AST_ACL_INCLUDE"
SKIP_REASON = (f"no ACL headers: set {ACL_ENV} to a directory holding acl/acl.h (torch_npu's wheel has one: "
               "`pip download --no-deps torch_npu==2.13.0`, then unzip torch_npu/include), or install CANN")


def find_acl_include(environ: Optional[Mapping[str, str]] = None) -> Optional[Path]:
    environ = os.environ if environ is None else environ
    candidates = []
    if environ.get(ACL_ENV, "").strip():
        candidates.append(Path(environ[ACL_ENV].strip()).expanduser())
    for name in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CANN_PACKAGE_PATH"):
        if environ.get(name, "").strip():
            candidates.append(Path(environ[name].strip()) / "include")
    try:
        spec = importlib.util.find_spec("torch_npu")  # a top-level package: found, not imported
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        candidates.append(Path(list(spec.submodule_search_locations)[0]) / "include")
    return next((c for c in candidates if (c / "acl" / "acl.h").is_file()), None)


class AclChecker:
    """``g++ -fsyntax-only`` of control programs (and the runtime once) against one ACL include dir."""

    def __init__(self, include: str | os.PathLike, *, cxx: Optional[str] = None):
        from .npu_build import runtime_sources

        self.include = Path(include).resolve()
        self.cxx = shutil.which(cxx or knobs.cxx)
        if self.cxx is None:
            raise RuntimeError(f"C++ compiler {cxx or knobs.cxx!r} not on PATH (set PYPTO_AST_CXX)")
        self._tmp = tempfile.TemporaryDirectory(prefix="pypto-aclheaders-")
        self.work = Path(self._tmp.name)
        for name, text in runtime_sources().items():
            (self.work / name).write_text(text, encoding="utf-8")

    def __enter__(self) -> "AclChecker":
        return self

    def __exit__(self, *exc) -> None:
        self._tmp.cleanup()

    def check(self, name: str, text: str) -> Optional[str]:
        """None when ``text`` compiles, else the compiler's messages."""
        path = self.work / name
        path.write_text(text, encoding="utf-8")
        done = subprocess.run([self.cxx, "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                               f"-I{self.work}", f"-I{self.include}", name], cwd=self.work, capture_output=True,
                              text=True, timeout=300)
        return None if done.returncode == 0 else (done.stderr or done.stdout)

    def check_runtime(self) -> Optional[str]:
        return self.check("pypto_npu_runtime.cpp", (self.work / "pypto_npu_runtime.cpp").read_text(encoding="utf-8"))
