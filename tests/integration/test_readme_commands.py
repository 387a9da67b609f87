"""The README's "Your own documents" commands run as written (issue 58), with the sample corpus as the reader's
folder: `~/notes` is a copy of samples/corpus, `~/notes.idx` an index beside it, `docs/changed.md`,
`docs/old.md` and `questions.txt` files in the directory the commands run in. The first `ask` example answers right
on that index."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
CLI = [sys.executable, "-m", "cragraph"]


def section_commands(title: str) -> list[str]:
    """The shell lines of the first ```bash block under the README's `## title`, comments cut off."""
    text = README.read_text(encoding="utf-8")
    section = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, f"no bash block under '## {title}'"
    lines = [line.split("  #", 1)[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith(("#", ". "))]


def test_the_commands_are_the_ones_this_test_knows() -> None:
    verbs = [shlex.split(line)[:2] for line in section_commands("Your own documents")]
    assert verbs == [["cragraph", "index"], ["cragraph", "ask"], ["cragraph", "ask"], ["cragraph", "index"],
                     ["cragraph", "index"]], "the README's commands changed: update this test with them"


@pytest.mark.integration
def test_the_readme_commands_run_on_the_sample_corpus_and_the_first_ask_answers(tmp_path: Path) -> None:
    home = tmp_path / "home"
    notes = home / "notes"
    shutil.copytree(ROOT / "samples" / "corpus", notes)
    (home / "docs").mkdir()  # the files the README re-adds and deletes, beside the folder, as a user's own
    (home / "docs" / "changed.md").write_text("# Changed\n\nA note that changed.\n", encoding="utf-8")
    (home / "docs" / "old.md").write_text("# Old\n\nA note to delete.\n", encoding="utf-8")
    (home / "questions.txt").write_text("Who was the first director of the institute where Lev Landau headed the "
                                         "theoretical department?\n", encoding="utf-8")
    env = {**os.environ, "HOME": str(home), "CRAGRAPH_CACHE_DIR": os.environ.get(
        "CRAGRAPH_CACHE_DIR", str(Path.home() / ".cache" / "cragraph"))}
    outputs = []
    for line in section_commands("Your own documents"):
        argv = shlex.split(line.replace("~/", f"{home}/"))
        stdin = None
        if "<" in argv:  # `... < questions.txt`: the shell's redirection
            at = argv.index("<")
            stdin, argv = (home / argv[at + 1]).read_text(encoding="utf-8"), argv[:at]
        done = subprocess.run([*CLI, *argv[1:]], cwd=home, env=env, input=stdin, capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, f"{line}\n{done.stderr[-2000:]}"
        outputs.append(done.stdout)
    first_ask = outputs[1]
    assert "Kapitsa" in first_ask.split("\n\n", 1)[0], first_ask  # answered, not withheld
    assert "Kapitsa" in outputs[2] and outputs[2].lstrip().startswith("{")  # --json, one line per question
