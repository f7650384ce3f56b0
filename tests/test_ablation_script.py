"""benchmarks/ablation_gpu.py: its CPU smoke mode runs, gates every cell and writes its files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]


def test_cpu_smoke(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, str(ROOT / "benchmarks" / "ablation_gpu.py"), "--cpu-smoke", "--out", str(tmp_path)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=55)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads((tmp_path / "ablation.json").read_text())
    rows = data["rows"]
    # 3 requests x 3 logits x (fp32 + bf16) x 9 variants x 2 modes
    assert len(rows) == 3 * 3 * 2 * 9 * 2
    assert all(r["status"] == "ok" and r["gate"] == "pass" and r["us"] > 0 for r in rows)
    assert {r["variant"] for r in rows} >= {"base", "trunc_off", "p1", "p3", "p15", "trunc_off_p1"}
    assert {r["mode"] for r in rows} == {"select", "mask"}
    assert data["meta"]["backend"] == "numpy"
    md = (tmp_path / "ablation.md").read_text()
    assert "| top-k 50 | zipf | 2 | fp32 |" in md and "trunc on vs off" in md
