import os
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))  # tests/kernelgen.py

settings.register_profile("quick", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# the linter's no-crash fuzz test (tests/analysis/test_hostile_input.py) takes its own counts:
# a few dozen hostile programs by default, 100 000 with HYPOTHESIS_PROFILE=long
_FUZZ_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("fuzz-quick", max_examples=25, deadline=None, suppress_health_check=_FUZZ_HEALTH)
settings.register_profile("fuzz-long", max_examples=100_000, deadline=None, suppress_health_check=_FUZZ_HEALTH)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))


def pytest_configure(config):
    """The suite's build cache lives in pytest's cache directory (``.pytest_cache/d/``), never in
    the user's ``~/.cache/pypto-ast``: shared by every test, worker and CLI subprocess of a run,
    kept between runs (a warm run reuses it), emptied by ``pytest --cache-clear``."""
    cache = getattr(config, "cache", None)
    if cache is not None:
        build_cache = cache.mkdir("pypto-ast-build")
    else:  # -p no:cacheprovider
        build_cache = Path(tempfile.gettempdir()) / f"pypto-ast-test-build-{os.getuid()}"
    os.environ["PYPTO_AST_CACHE_DIR"] = str(build_cache)
    from pypto_ast import knobs

    knobs.reload()
