"""On-chip memory sizes per SoC (ascendc.md §1.2; pypto-dsl.md §10.4): one table, read by the
emitter's UB budget check (emit/soc.py), the linter's buffer rule (PTO024) and the cost model
(ir/costmodel.py: core counts, clock)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

KIB = 1024


@dataclass(frozen=True)
class Soc:
    name: str
    product: str
    npu_arch: int
    ub: int  # per AIV
    l1: int  # per AIC
    l0a: int
    l0b: int
    l0c: int
    ub_reserved: int  # framework reserve (256 B) + API scratch at the top of UB (8 KiB)
    vector_cores: int
    clock_mhz: int = 1800  # AI Core clock: the cycles-per-microsecond of pypto 0.2.0's simulator output
    # (design §33); it turns the cost model's cycles into microseconds

    @property
    def cube_cores(self) -> int:
        """AIC count: one per AI Core, which holds 2 AIV (ascendc.md §1.1)."""
        return self.vector_cores // 2

    @property
    def ub_budget(self) -> int:
        """Bytes of TPipe buffers an AIV kernel may allocate (184 KiB on 2201)."""
        return self.ub - self.ub_reserved


# ascendc.md §1.2 (memories on A2) and §12.1: A3 (Ascend910_93xx) is the same __NPU_ARCH__ 2201
# with the same per-core memories.  Vector cores: the smaller A2 SKUs (910B3/B4) have 40 AIV.
_A2201 = dict(npu_arch=2201, ub=192 * KIB, l1=512 * KIB, l0a=64 * KIB, l0b=64 * KIB, l0c=128 * KIB,
              ub_reserved=8 * KIB, vector_cores=40)
SOCS = {
    "ascend910b": Soc("ascend910b", "Atlas A2 (Ascend910B1..B4)", **_A2201),
    "ascend910_93": Soc("ascend910_93", "Atlas A3 (Ascend910_93xx)", **_A2201),
}
DEFAULT_SOC = "ascend910b"


def get_soc(name: Optional[str] = None) -> Soc:
    key = (name or DEFAULT_SOC).lower()
    if key not in SOCS:
        raise KeyError(f"unknown SoC {name!r} (known: {', '.join(SOCS)})")
    return SOCS[key]
