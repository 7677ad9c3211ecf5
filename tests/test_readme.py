"""Every Python snippet of README.md runs as written (issue 20: a snippet used an undefined
`run`). Each runs in a fresh interpreter in a scratch folder that has the repository's
examples/, as a reader would paste it (code from -c, so the process pool needs no __main__ guard)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SNIPPETS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_has_python_snippets():
    assert len(SNIPPETS) >= 2


@pytest.mark.timeout(300)
@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_readme_python_snippet_runs(tmp_path: Path, index: int):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "out").mkdir()
    r = subprocess.run([sys.executable, "-c", SNIPPETS[index]], cwd=tmp_path, capture_output=True, text=True, timeout=280)
    assert r.returncode == 0, f"README snippet {index} failed:\n{SNIPPETS[index]}\n{r.stderr[-3000:]}"
