"""Tile shapes that pypto computes in Python while it traces, from build-time objects: a
``@dataclass`` of tile lists built inside the kernel and unpacked into ``set_vec_tile_shapes(*...)``,
a config class whose ``__init__`` sets ``self.tile = ...`` (decorated ``@dataclass`` or not), class
attributes, properties and methods of a tiling class, ``field(default_factory=...)`` and
``__post_init__``, a subclass calling ``super().__init__``, a config object handed to the kernel
factory (its closure) or to the kernel, and values the call's shapes determine (``x.shape``, the
``loop_unroll`` length).  The front end evaluates all of them as Python would; kernels are our
own, in the models' style (a helper module, bf16 in, fp32 math, outputs compared with torch)."""

from __future__ import annotations

import importlib.util

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import dropin  # noqa: E402
from support import BACKENDS, write  # noqa: E402

TILING = """
    from dataclasses import dataclass, field
    from typing import List

    import pypto


    @dataclass
    class PairTiles:
        flat: List[int]
        split: List[int]


    @dataclass
    class NormSettings:
        eps: float = 1e-5
        scales: List[float] = field(default_factory=lambda: [0.5, 2.0])
        total: float = 0.0

        def __post_init__(self):
            self.total = self.scales[0] * self.scales[1]


    class BaseTiling:
        lane = 16  # a class attribute

        def __init__(self, rows):
            self.rows = rows

        @property
        def row_tile(self):
            return min(self.rows, 8)


    class ColumnTiling(BaseTiling):
        def __init__(self, rows, cols):
            super().__init__(rows)
            self.cols = cols

        def col_tile(self, parts=2):
            return self.cols // parts

        @staticmethod
        def halve(n):
            return n // 2

        @classmethod
        def widest(cls):
            return cls.lane * 4


    @dataclass
    class UnrollPlan:
        # @dataclass over an explicit __init__: the class's own __init__ is what runs
        def __init__(self):
            self.lengths = [1, 2, 4]
            self.width = 64


    def swap_halves(t, tiles: PairTiles):
        pypto.set_vec_tile_shapes(*tiles.flat)
        rows, cols = t.shape
        left = pypto.view(t, [rows, cols // 2], [0, 0])
        right = pypto.view(t, [rows, cols // 2], [0, cols // 2])
        pypto.set_vec_tile_shapes(*tiles.split)
        return pypto.concat([right * (-1.0), left], -1)
"""

KERNEL = """
    import torch

    import pypto
    from tiling_helpers import ColumnTiling, NormSettings, PairTiles, UnrollPlan, swap_halves


    def make_rope_norm(tiling: ColumnTiling):
        @pypto.frontend.jit
        def rope_norm(
            x: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
            out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
            settings: NormSettings,
        ):
            n, d = x.shape
            plan = UnrollPlan()
            local = ColumnTiling(d // 16, d)  # built in the kernel from the call's (static) shapes
            for r0, length in pypto.loop_unroll(0, n, 1, name="ROWS", idx_name="r0", unroll_list=plan.lengths):
                pypto.set_vec_tile_shapes(length, ColumnTiling.halve(plan.width) * 2)
                rows = pypto.cast(pypto.view(x, [length, d], [r0, 0]), pypto.DT_FP32)
                pypto.set_vec_tile_shapes(min(length, tiling.row_tile), local.col_tile(1))
                square = pypto.mul(rows, rows)
                mean = pypto.sum(square, -1, keepdim=True)
                pypto.set_vec_tile_shapes(length, tiling.widest())
                normed = pypto.div(rows, pypto.sqrt(mean * (1.0 / d) + settings.eps))
                tiles = PairTiles([length, tiling.col_tile()], [min(length, local.row_tile), d])
                turned = swap_halves(normed, tiles)
                pypto.set_vec_tile_shapes(length, d)
                mixed = pypto.add(pypto.mul(normed, settings.scales[0]), pypto.mul(turned, settings.total))
                pypto.assemble(pypto.cast(mixed, pypto.DT_BF16), [r0, 0], out)

        return rope_norm


    def golden(x, settings):
        v = x.float()
        normed = v / torch.sqrt((v * v).mean(-1, keepdim=True) + settings.eps)
        half = v.shape[-1] // 2
        turned = torch.cat([-normed[:, half:], normed[:, :half]], -1)
        return (normed * settings.scales[0] + turned * settings.total).to(torch.bfloat16)


    def run(rows=7, d=64):
        kernel = make_rope_norm(ColumnTiling(rows, d))
        settings = NormSettings(eps=1e-6)
        x = torch.randn(rows, d).to(torch.bfloat16)
        out = torch.zeros(rows, d, dtype=torch.bfloat16)
        kernel(x, out, settings)
        return out, golden(x, settings)
"""


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def kernel_file(tmp_path, monkeypatch):
    write(tmp_path / "tiling_helpers.py", TILING)
    path = write(tmp_path / "rope_norm_kernel.py", KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield path
    dropin.uninstall()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rows", [7, 12])
def test_tiles_from_build_time_objects_and_call_shapes(kernel_file, backend, rows):
    dropin.install(backend)
    module = load(kernel_file, f"rope_norm_kernel_{backend}_{rows}")
    got, want = module.run(rows=rows)
    torch.testing.assert_close(got.float(), want.float(), rtol=2e-2, atol=2e-2)


def test_the_evaluator_reads_objects_as_python(tmp_path):
    """The values themselves, read statically (no kernel run): what Python computes."""
    from pypto_ast.frontend.scope import ModuleScope
    from pypto_ast.frontend.values import Instance
    from pypto_ast.source import SourceFile

    path = write(tmp_path / "tiling_helpers.py", TILING + """
    CT = ColumnTiling(12, 96)
    FACTS = (CT.rows, CT.cols, CT.lane, CT.row_tile, CT.col_tile(), CT.col_tile(parts=3), ColumnTiling.halve(10),
             CT.widest(), isinstance(CT, BaseTiling), hasattr(CT, "cols"), getattr(CT, "depth", -1))
    NS = NormSettings(scales=[3.0, 4.0])
    OTHER = NormSettings()
    PLAN = UnrollPlan()
    PT = PairTiles([1, 2], split=[3, 4])
    """)
    scope = ModuleScope(SourceFile.parse(path.read_text(), str(path))).run()
    assert scope.lookup("FACTS") == (12, 96, 16, 8, 48, 32, 5, 64, True, True, -1)
    ns, other = scope.lookup("NS"), scope.lookup("OTHER")
    assert isinstance(ns, Instance) and ns.fields == {"eps": 1e-5, "scales": [3.0, 4.0], "total": 12.0}
    assert other.fields["scales"] == [0.5, 2.0] and other.fields["scales"] is not ns.fields["scales"]
    assert scope.lookup("PLAN").fields == {"lengths": [1, 2, 4], "width": 64}
    assert scope.lookup("PT").fields == {"flat": [1, 2], "split": [3, 4]}
