"""``[tool.pypto-lint]``: finding it, validating it, layering flags over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto_ast.config import ConfigError, Overrides, find_config, load_options, resolve
from pypto_ast.settings import DEFAULT_EXCLUDE


def pyproject(folder: Path, body: str, section: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pyproject.toml"
    path.write_text(("[tool.pypto-lint]\n" if section else "") + body)
    return path


def test_all_keys(tmp_path):
    path = pyproject(tmp_path, """
select = ["PTO0"]
ignore = ["pto007"]
extend-select = ["PTO013"]
exclude = ["gen"]
extend-exclude = ["old_*"]
unsafe-fixes = true
cond-path-threshold = 8
subgraph-budget = 100
[tool.pypto-lint.per-file-ignores]
"test_*.py" = ["PTO001"]
""")
    s = resolve(["."], cwd=tmp_path).settings
    assert resolve(["."], cwd=tmp_path).config_file == path
    assert s.select == ("PTO0",) and s.ignore == ("PTO007",) and s.extend_select == ("PTO013",)
    assert s.exclude == ("gen",) and s.extend_exclude == ("old_*",)
    assert s.unsafe_fixes is True and s.cond_path_threshold == 8 and s.subgraph_budget == 100
    assert s.per_file_ignores == (("test_*.py", ("PTO001",)),)


def test_defaults_without_config(tmp_path):
    r = resolve(["."], cwd=tmp_path)
    assert r.config_file is None and r.root == tmp_path
    assert r.settings.exclude == DEFAULT_EXCLUDE


def test_nearest_with_section_wins(tmp_path):
    outer = pyproject(tmp_path, 'select = ["PTO001"]\n')
    pyproject(tmp_path / "pkg", "[project]\nname = 'x'\n", section=False)  # no section: keep looking
    inner = pyproject(tmp_path / "pkg" / "sub", 'select = ["PTO002"]\n')
    assert find_config(tmp_path / "pkg") == outer
    assert find_config(tmp_path / "pkg" / "sub" / "deeper") == inner


def test_search_starts_at_common_parent_of_paths(tmp_path):
    pyproject(tmp_path / "proj", 'select = ["PTO003"]\n')
    (tmp_path / "proj" / "a").mkdir()
    (tmp_path / "proj" / "b.py").write_text("")
    r = resolve(["proj/a", "proj/b.py"], cwd=tmp_path)
    assert r.settings.select == ("PTO003",)
    assert r.root == tmp_path / "proj"


def test_stdin_filename_locates_config(tmp_path):
    pyproject(tmp_path / "proj", 'select = ["PTO004"]\n')
    r = resolve(["-"], cwd=tmp_path, stdin_filename="proj/k.py")
    assert r.settings.select == ("PTO004",)


def test_explicit_config_overrides_search(tmp_path):
    pyproject(tmp_path, 'select = ["PTO001"]\n')
    other = tmp_path / "lint.toml"
    other.write_text('select = ["PTO005"]\n')  # a standalone file holds the keys at top level
    assert resolve(["."], config_path=other, cwd=tmp_path).settings.select == ("PTO005",)
    with pytest.raises(ConfigError, match="missing.toml: config file not found"):
        resolve(["."], config_path="missing.toml", cwd=tmp_path)


@pytest.mark.parametrize(
    "body, message",
    [
        ("selec = ['PTO001']\n", "unknown key 'selec'"),
        ("select = 'PTO001'\n", "key 'select'.*list of rule codes"),
        ("select = ['E501']\n", "'E501' is not a rule code"),
        ("unsafe-fixes = 'yes'\n", "key 'unsafe-fixes'.*true or false"),
        ("subgraph-budget = 0\n", "key 'subgraph-budget'.*positive integer"),
        ("cond-path-threshold = true\n", "key 'cond-path-threshold'"),
        ("per-file-ignores = ['x']\n", "key 'per-file-ignores'"),
        ("[tool.pypto-lint.per-file-ignores]\n'a.py' = 'PTO001'\n", "'a.py'"),
        ("select = [\n", "invalid TOML"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path, body, message):
    path = pyproject(tmp_path, body)
    with pytest.raises(ConfigError, match=message) as info:
        load_options(path)
    assert str(path) in str(info.value)


def test_flags_layer_over_file(tmp_path):
    pyproject(tmp_path, """
select = ["PTO001"]
ignore = ["PTO002"]
extend-select = ["PTO003"]
exclude = ["gen"]
extend-exclude = ["x"]
unsafe-fixes = true
""")
    flags = Overrides(
        select=("PTO004",), extend_select=("PTO005",), ignore=("PTO006",),
        exclude=("other",), extend_exclude=("y",), unsafe_fixes=False,
    )
    s = resolve(["."], flags, cwd=tmp_path).settings
    assert s.select == ("PTO004",)  # replaced
    assert s.extend_select == ("PTO003", "PTO005")  # added
    assert s.ignore == ("PTO002", "PTO006")  # added
    assert s.exclude == ("other",) and s.extend_exclude == ("x", "y")
    assert s.unsafe_fixes is False


def test_per_file_ignore_globs_anchor_at_config_dir(tmp_path):
    pyproject(tmp_path, """
[tool.pypto-lint.per-file-ignores]
"tests/*.py" = ["PTO001"]
"conftest.py" = ["PTO002"]
""")
    (tmp_path / "tests").mkdir()
    inner = resolve(["."], cwd=tmp_path / "tests").settings
    assert dict(inner.per_file_ignores) == {"*.py": ("PTO001",), "conftest.py": ("PTO002",)}
    assert inner.enabled("PTO001", "k.py") is False
    top = resolve(["."], cwd=tmp_path).settings
    assert top.enabled("PTO001", "tests/k.py") is False and top.enabled("PTO001", "k.py") is True


# -- through the CLI -------------------------------------------------------------------------
@pytest.fixture
def project(tmp_path, monkeypatch, toys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("x = BAD\ny = UGLY\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text("x = BAD\ny = UGLY\n")
    return tmp_path


def lines(run):
    return sorted(run.stdout.splitlines())


def test_cli_reads_select_and_ignore(cli, project):
    pyproject(project, 'select = ["PTO9"]\nignore = ["PTO901"]\n')
    assert lines(cli("--output-format", "concise")) == [
        "a.py:2:5: PTO903 `UGLY` found", "tests/t.py:2:5: PTO903 `UGLY` found",
    ]


def test_cli_select_flag_overrides_file(cli, project):
    pyproject(project, 'select = ["PTO903"]\n')
    assert lines(cli("--output-format", "concise", "--select", "PTO901", "a.py")) == [
        "a.py:1:5: PTO901 `BAD` found",
    ]


def test_cli_per_file_ignores(cli, project):
    pyproject(project, '[tool.pypto-lint.per-file-ignores]\n"tests/*" = ["PTO901"]\n')
    assert lines(cli("--output-format", "concise")) == [
        "a.py:1:5: PTO901 `BAD` found", "a.py:2:5: PTO903 `UGLY` found", "tests/t.py:2:5: PTO903 `UGLY` found",
    ]
    # the same glob still applies when run from inside tests/
    inner = cli("--output-format", "concise", "t.py", cwd=project / "tests")
    assert lines(inner) == ["t.py:2:5: PTO903 `UGLY` found"]


def test_cli_bad_key_exits_2(cli, project):
    path = pyproject(project, "colour = true\n")
    run = cli("a.py")
    assert run.exit_code == 2
    assert str(path) in run.stderr and "'colour'" in run.stderr


def test_cli_config_flag(cli, project):
    cfg = project / "strict.toml"
    cfg.write_text('select = ["PTO903"]\n')
    assert lines(cli("--output-format", "concise", "--config", str(cfg), "a.py")) == ["a.py:2:5: PTO903 `UGLY` found"]
    assert cli("--config", "nope.toml", "a.py").exit_code == 2
