"""Every script in examples/ runs to completion (in a temporary directory)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_example_runs(tmp_path, script):
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip(), "an example prints what it did"
    assert "Traceback" not in proc.stderr


def test_the_examples_are_there():
    assert {p.name for p in EXAMPLES.glob("*.py")} >= {"zarr_stream_and_read.py", "precomputed_volume.py",
                                                          "hdf5_dataset.py"}
