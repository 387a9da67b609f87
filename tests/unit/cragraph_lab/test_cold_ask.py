"""cragraph_lab/cold_ask.py: one warm-up per checkout, then alternating runs, medians and stderr per checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from cragraph_lab import cold_ask


def test_checkouts_alternate_after_a_warm_up_each(monkeypatch, tmp_path):
    calls: list[str] = []
    seconds = {"a": iter([9.0, 3.0, 4.0, 5.0]), "b": iter([9.0, 1.0, 2.0, 6.0])}

    def fake(checkout: Path, index: Path, question: str) -> tuple[float, str, str, float]:
        calls.append(checkout.name)
        err = "" if checkout.name == "b" else "Loading weights"
        return next(seconds[checkout.name]), "Marie Curie [1]\n", err, 900.0 if checkout.name == "a" else 700.0

    monkeypatch.setattr(cold_ask, "ask_once", fake)
    result = cold_ask.measure([tmp_path / "a", tmp_path / "b"], tmp_path / "idx", runs=3, report=lambda _: None)
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b"]
    a, b = result["checkouts"][str(tmp_path / "a")], result["checkouts"][str(tmp_path / "b")]
    assert (a["seconds"], a["median"], b["median"]) == ([3.0, 4.0, 5.0], 4.0, 2.0)
    assert a["stderr"] == "Loading weights" and b["stderr"] == ""
    assert (a["median_peak_mb"], b["median_peak_mb"]) == (900.0, 700.0)
    table = cold_ask.markdown(result)
    assert "| 4.00 | 900 | 3.00, 4.00, 5.00 | Loading weights |" in table and "(empty)" in table


def test_one_run_reports_its_own_peak_memory(tmp_path):
    """A real child process: its answer, and its own peak RSS (a child that holds 200 MB reports at least that)."""
    checkout = tmp_path / "fake"
    (checkout / "cragraph").mkdir(parents=True)
    (checkout / "cragraph" / "__main__.py").write_text(
        "import sys\nblock = bytearray(200 * 1024 * 1024)\nprint('answer for', sys.argv[2])\n")
    took, out, err, peak = cold_ask.ask_once(checkout, tmp_path / "idx", "Q?")
    assert out.strip() == "answer for Q?" and err == "" and took > 0 and peak >= 200


def test_a_folder_that_is_no_checkout_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a cragraph checkout"):
        cold_ask.resolve([str(tmp_path)])
    with pytest.raises(ValueError, match="at least 1"):
        cold_ask.measure([tmp_path], tmp_path, runs=0)
