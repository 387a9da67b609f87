"""The character classes of the scripts written without spaces between words, declared once.

Why one module: the tokenizer, the rules, the metrics and the Chinese script folding all ask "is this a Chinese
character?"; each copy of the class drifted (some left out extension A or the compatibility block).
"""

from __future__ import annotations

import re

HAN_CLASS = (
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # CJK compatibility ideographs
)
CJK_CLASS = HAN_CLASS + "\u3040-\u30ff" + "\uac00-\ud7af"  # and kana, hangul syllables
HAN = re.compile(f"[{HAN_CLASS}]")
"""One Chinese character."""
HAN_RUN = re.compile(f"[{HAN_CLASS}]+")
CJK = re.compile(f"[{CJK_CLASS}]")
"""One character of a script written without spaces (Han, kana, hangul)."""
