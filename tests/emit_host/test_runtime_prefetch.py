"""The host runtime's prefetch of the next GM -> UB load (runtime/internal.h, NoteGmLoad and
PrefetchAhead; docs/design.md §26): which lines it predicts, and that it stays inside the GM
tensor.  Only a hint (the loads copy every byte themselves), so the kernels' results cannot show
it; a program built against the runtime reads the per-block stream state directly."""

from __future__ import annotations

import ctypes

from pypto_ast.emit.build import load_library
from pypto_ast.emit.host_runtime import build_program

SOURCE = r"""
#include "runtime/internal.h"
using namespace AscendC::detail;

// 0 when every check holds, else the number of the first that failed.
extern "C" int prefetch_checks()
{
    static uint8_t gm[1 << 20], other[1 << 16];
    auto& b = pypto_host::detail::t_block;
    b = pypto_host::detail::BlockState{};
    const GmDesc g{gm, sizeof(gm) / 4, 0, 4, true}, h{other, sizeof(other) / 4, 0, 4, true};
    auto stream = [&](const uint8_t* base) -> const pypto_host::detail::BlockState::Stream* {
        for (const auto& s : b.streams) if (s.base == base) return &s;
        return nullptr;
    };
    // Two loads a stride apart: no stride confirmed yet, nothing to prefetch.
    NoteGmLoad(g, gm, 4096);
    NoteGmLoad(g, gm + 40960, 4096);
    if (b.pending != 0) return 1;
    // The third at the same stride: the next tile's bytes, as long as this load.
    NoteGmLoad(g, gm + 81920, 4096);
    const auto* s = stream(gm);
    if (!s || b.pending != 1 || s->next != gm + 122880 || s->end != gm + 122880 + 4096) return 2;
    // Another tensor has a stream of its own; its first loads predict nothing.
    NoteGmLoad(h, other, 1024);
    if (b.pending != 1 || !stream(other)) return 3;
    // Each vector op issues half the bytes it touches (plus a line): 4096 B take four ops.
    PrefetchAhead(1984);  // 1056 B
    if (s->next != gm + 122880 + 1056 || b.pending != 1) return 4;
    for (int i = 0; i < 3; ++i) PrefetchAhead(1984);
    if (s->next != s->end || b.pending != 0) return 5;
    // A load at another stride cancels the prediction and predicts nothing.
    NoteGmLoad(g, gm + 90000, 4096);
    if (b.pending != 0 || s->next != s->end) return 6;
    // Near the tensor's end the prediction stops at the registered end ...
    uint8_t* const end = gm + sizeof(gm);
    b = pypto_host::detail::BlockState{};
    NoteGmLoad(g, end - 16384, 8192);
    NoteGmLoad(g, end - 12288, 8192);
    NoteGmLoad(g, end - 8192, 8192);  // stride 4096: the next 8192 B from end - 4096, cut at the end
    s = stream(gm);
    if (b.pending != 1 || s->next != end - 4096 || s->end != end) return 7;
    // ... and a next load that would start at the end predicts nothing.
    NoteGmLoad(g, end - 4096, 4096);
    if (b.pending != 0 || s->next != s->end) return 8;
    // More tensors than streams: the newest take the slots of those with nothing pending.
    b = pypto_host::detail::BlockState{};
    static uint8_t t[6][4096];
    for (int k = 0; k < 6; ++k) NoteGmLoad(GmDesc{t[k], 1024, 0, 4, true}, t[k], 64);
    int tracked = 0;
    for (const auto& c : b.streams) tracked += c.base != nullptr;
    if (tracked != pypto_host::detail::BlockState::kStreams || b.pending != 0) return 11;
    if (!stream(t[4]) || !stream(t[5]) || stream(t[0]) || stream(t[1]) || !stream(t[2])) return 12;
    return 0;
}
"""


def test_next_load_is_predicted_from_the_stride_and_stays_in_the_tensor():
    lib = load_library(build_program({"prefetch.cpp": SOURCE}, extra_flags=("-Wall", "-Werror")))
    lib.prefetch_checks.restype = ctypes.c_int
    assert lib.prefetch_checks() == 0
