"""The host backend: the emitted Ascend C built with g++ against our CPU implementation of the API,
loaded with ctypes (``emit/host_backend.HostLaunch``)."""

from __future__ import annotations

from . import Prepared


def prepare(program, names, inputs, *, soc=None, source_path=None, progress=None) -> Prepared:
    from .. import pipeline
    from ..emit.host_backend import HostLaunch, HostRunError

    files = pipeline.emit(program, "ascendc", soc=soc, source_path=source_path)
    scalars = {p.name: inputs.get(p.name, p.value) for p in program.params if p.kind == "scalar"}
    try:
        launch = HostLaunch.build(program, files, names, scalars, progress=progress)
    except OSError:  # the cache entry was replaced under us (another process's always-compile): once more
        launch = HostLaunch.build(program, files, names, scalars, progress=progress)
    return Prepared("host", launch.launch, (HostRunError,), launch.layout, launch.library)
