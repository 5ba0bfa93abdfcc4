"""The README's Python example runs as written: the ```python block under "## Python", run by a
fresh python3 in a scratch directory laid out like the repository root (build/models is the
generated model suite), so the plan.html it writes lands there."""

import os
import re
import subprocess
import sys

import onepool
from conftest import MODELS


def readme_python_block(root):
    text = (root / "README.md").read_text()
    section = text.index("## Python\n")
    match = re.compile(r"```python\n(.*?)```", re.S).search(text, section)
    assert match, "README.md: no ```python block under ## Python"
    return match.group(1)


def test_readme_python_example_runs_as_written(root, tmp_path):
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "models").symlink_to(MODELS)
    code = readme_python_block(root)
    assert 'onepool.Session("build/models/mlp.onnx"' in code
    # The README's PYTHONPATH=build/python, made absolute for the scratch directory.
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(onepool.__file__)))
    env = dict(os.environ, PYTHONPATH=package_dir)
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # The last line is the error the example provokes, as the comment beside it says.
    assert lines[-1] == "input 'x': expected dtype float32, got float64"
    assert "input 'x': expected dtype float32, got float64" in code
    html = (tmp_path / "plan.html").read_text()
    assert "<title>mlp" in html
