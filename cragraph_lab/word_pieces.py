"""e5-small's word pieces through sentencepiece (models/piece_tokenizer.py) against the same tokenizer.json
through `tokenizers`, the library it replaced at query time: `python -m cragraph_lab bench word-pieces`.

Every string field of every corpus and question file of the shared benchmark data (up to `per_file` texts a
file) is encoded both ways; reported per file: texts, texts whose ids differ, texts whose ids agree but offsets
differ, and the seconds each library took (one thread, one text at a time).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from cragraph_lab.training_data import default_data_root


def texts_of(path: Path, limit: int) -> list[str]:
    found: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            found += [value for value in row.values() if isinstance(value, str) and len(value) > 3]
            if len(found) >= limit:
                break
    return found[:limit]


def compare(per_file: int = 4000, data_root: Path | None = None) -> dict[str, Any]:
    from tokenizers import Tokenizer

    from models.e5_rebuild import ensure_rebuilt_e5_small
    from models.piece_tokenizer import piece_tokenizer

    folder = ensure_rebuilt_e5_small()
    reference, pieces = Tokenizer.from_file(str(folder / "tokenizer.json")), piece_tokenizer(folder)
    root = data_root or default_data_root()
    rows = []
    for path in sorted(root.rglob("*.jsonl")):
        texts = texts_of(path, per_file)
        started = time.perf_counter()
        theirs = [reference.encode(text, add_special_tokens=False) for text in texts]
        their_s = time.perf_counter() - started
        started = time.perf_counter()
        ours = [pieces.encode(text) for text in texts]
        our_s = time.perf_counter() - started
        ids = sum(list(t.ids) != o.ids for t, o in zip(theirs, ours, strict=True))
        offsets = sum(list(t.ids) == o.ids and [tuple(x) for x in t.offsets] != o.offsets
                      for t, o in zip(theirs, ours, strict=True))
        rows.append({"file": str(path.relative_to(root)), "texts": len(texts), "ids_differ": ids,
                     "offsets_differ": offsets, "tokenizers_s": round(their_s, 3), "pieces_s": round(our_s, 3)})
    return {"per_file": per_file, "rows": rows}


def markdown(result: dict[str, Any]) -> str:
    rows = result["rows"]
    lines = ["| file | texts | ids differ | offsets differ | tokenizers s | sentencepiece s |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r['file']} | {r['texts']:,} | {r['ids_differ']} | {r['offsets_differ']} | {r['tokenizers_s']:.2f} "
              f"| {r['pieces_s']:.2f} |" for r in rows]
    total = {key: sum(r[key] for r in rows) for key in ("texts", "ids_differ", "offsets_differ")}
    lines.append(f"| all | {total['texts']:,} | {total['ids_differ']} | {total['offsets_differ']} | "
                 f"{sum(r['tokenizers_s'] for r in rows):.2f} | {sum(r['pieces_s'] for r in rows):.2f} |")
    return "\n".join(lines)
