"""`python -m cragraph_lab.regex_literals`: hand-written regular expressions in the shipped packages.

Counted as calls of `re.compile / search / match / fullmatch / sub / subn / findall / finditer / split` whose
pattern is written in the call (a string, an f-string or a concatenation), per file, largest first. Word lists
read by rag.reader.grammar are not patterns and are not counted.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGES = ("cragraph", "rag", "models", "graph", "nodes", "stores", "evaluators", "prompts")
_CALLS = {"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"}


def literals(path: Path) -> int:
    count = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CALLS
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args
                and isinstance(node.args[0], (ast.Constant, ast.JoinedStr, ast.BinOp))):
            count += 1
    return count


def main(root: Path = Path(".")) -> int:
    counts = {str(p): n for package in PACKAGES for p in sorted((root / package).rglob("*.py")) if (n := literals(p))}
    for name, n in sorted(counts.items(), key=lambda item: -item[1]):
        print(f"{n:4d}  {name}")
    print(f"{sum(counts.values()):4d}  in all")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")))
