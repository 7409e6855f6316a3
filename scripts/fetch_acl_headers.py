#!/usr/bin/env python3
"""Put CANN's ACL runtime headers from torch_npu's wheel into DEST (DEST/acl/acl.h, ...).

    python scripts/fetch_acl_headers.py DEST [--version 2.13.0]

The wheel is downloaded with pip (``--no-deps``: nothing is installed; an installed torch_npu
without CANN would make ``import torch`` fail) and only ``torch_npu/include/acl/`` is extracted.
Then ``PYPTO_AST_ACL_INCLUDE=DEST`` lets tests/npu/test_acl_headers.py check the NPU control
programs against the real ACL API.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PREFIX = "torch_npu/include/"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", type=Path)
    ap.add_argument("--version", default="2.13.0", help="torch_npu's version (that of torch)")
    ns = ap.parse_args(argv)
    if (ns.dest / "acl" / "acl.h").is_file():
        print(f"{ns.dest}: ACL headers already there")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        f"torch_npu=={ns.version}", "-d", tmp], check=True)
        wheel = next(Path(tmp).glob("torch_npu-*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            names = [n for n in archive.namelist() if n.startswith(PREFIX + "acl/") and not n.endswith("/")]
            for name in names:
                target = ns.dest / name[len(PREFIX):]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(name))
    print(f"{ns.dest}: {len(names)} ACL headers from {wheel.name}")
    return 0 if names else 1


if __name__ == "__main__":
    sys.exit(main())
