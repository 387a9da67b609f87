"""Hypothesis profiles for the fuzz suite and the tally it prints (issue 14).

Two profiles, chosen by CRAGRAPH_FUZZ_PROFILE:
  ci    (default, part of `make test` / .ci/run): derandomized, so every run tries the same few hundred cases;
  long  (`make fuzz`): random seeds and FUZZ_SCALE (default 10) times the cases of each target.
A crash is any exception a target does not document (each test names the errors it accepts); data lost is a
good document beside bad ones that did not come out of the loader or the index. The tally goes to the terminal
and, when CRAGRAPH_FUZZ_REPORT names a file, to that file as JSON.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("CRAGRAPH_FUZZ_PROFILE", "ci")
SCALE = int(os.environ.get("FUZZ_SCALE", "10")) if PROFILE == "long" else 1

_QUIET = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
    HealthCheck.function_scoped_fixture,
]
settings.register_profile(
    "ci", derandomize=True, database=None, deadline=None, suppress_health_check=_QUIET, print_blob=True
)
settings.register_profile(
    "long", derandomize=False, database=None, deadline=None, suppress_health_check=_QUIET, print_blob=True
)
settings.load_profile(PROFILE)

TALLY: dict[str, Counter[str]] = {}


def examples(count: int) -> int:
    """Cases for one target under the active profile."""
    return count * SCALE


def tally(target: str, **counts: int) -> None:
    """Add to a target's counts: cases=1 per case tried, plus e.g. refused=1, documents=3, lost=0."""
    TALLY.setdefault(target, Counter()).update(counts)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.failed and "tests/fuzz" in report.nodeid.replace("\\", "/"):
        TALLY.setdefault("_crashes", Counter())[report.nodeid.split("::")[-1]] += 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not TALLY:
        return
    crashes = TALLY.get("_crashes", Counter())
    rows = {target: dict(counts) for target, counts in sorted(TALLY.items()) if target != "_crashes"}
    total = sum(counts.get("cases", 0) for counts in rows.values())
    lost = sum(counts.get("lost", 0) for counts in rows.values())
    terminalreporter.write_sep(
        "-", f"fuzz ({PROFILE} profile): {total} cases, {sum(crashes.values())} crashing targets, {lost} documents lost"
    )
    for target, counts in rows.items():
        terminalreporter.write_line(f"  {target}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for name in crashes:
        terminalreporter.write_line(f"  CRASH in {name}")
    out = os.environ.get("CRAGRAPH_FUZZ_REPORT")
    if out:
        Path(out).write_text(
            json.dumps(
                {
                    "profile": PROFILE,
                    "cases": total,
                    "crashing_targets": dict(crashes),
                    "documents_lost": lost,
                    "targets": rows,
                },
                indent=2,
            ),
            encoding="utf-8",
        )
