"""The verifier: a cross-encoder that reads a question (or a question and a proposed answer) against a passage
and says whether the passage states the answer, states another one, or does not say.

Why: "is the answer stated here?" was decided by surface features of bi-encoder vectors and by rules over the
reader's span. CRAG's evaluator is a cross-encoder fine-tuned on whether a passage answers the question, and
SQuAD 2.0 readers learn the no-answer case from unanswerable examples; this is that judgement, trained with hard
negatives (other windows of the gold page, its nearest distractors, a bridge question's first-hop page) and false
answers (another span the reader finds in the same window).

It shares the reader's frozen int8 bottom and the reader's first top layers (no extra memory for them) and owns
its last layers and a three-way classifier on the first token: STATED (the window states this answer, or with no
answer given, the answer to the question), CONTRADICTED (it states another answer to the question), ABSENT (it
does not say). A passage longer than one window is read in consecutive windows, never cut to its start; a
passage's verdict is its most decided window. Chinese is folded to simplified characters, as the reader reads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from rag.reader.encoder import Layer, attention_bias, torch_spans
from rag.reader.inputs import encode
from rag.reader.types import Passage
from rag.reader.weights_folder import read_folder
from stores.chinese_script import simplified
from stores.text import sentence_spans

if TYPE_CHECKING:
    from rag.reader.reader import Reader

DEFAULT_WEIGHTS = Path(__file__).resolve().parent / "verifier_weights"
WEIGHTS_FILE = "verifier.npz"
CONFIG_FILE = "verifier.json"
TRAINING_COMMAND = "python -m cragraph_lab bench verifier-training"
VERDICTS = ("stated", "contradicted", "absent")
OPEN, CLOSE = "<<", ">>"  # around the proposed answer in the window
_REQUIRED = ("shared_layers", "own_layers", "window_tokens", "max_len")


class VerifierWeightsError(RuntimeError):
    """The verifier's weights are missing or unreadable: names the file and how to rebuild them."""

    def __init__(self, path: object, why: str) -> None:
        super().__init__(f"verifier weights {path}: {why}. Rebuild them with `{TRAINING_COMMAND} --out <folder>` "
                         "and copy verifier.npz and verifier.json into cragraph_lab/verifier_weights/")
        self.path = path


@dataclass(frozen=True)
class Verdict:
    """Probabilities of the three verdicts for one passage (its most decided window) and that window's text."""

    stated: float
    contradicted: float
    absent: float
    window: str = ""

    @property
    def says(self) -> float:
        """The passage speaks to the question at all (states this answer or another)."""
        return self.stated + self.contradicted


class VerifierHead(nn.Module):
    """The verifier's own top layers and its classifier over the first token's state."""

    def __init__(self, layers: list[Layer], hidden: int = 384) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.classifier = nn.Linear(hidden, len(VERDICTS))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        bias = attention_bias(mask)
        for layer in self.layers:
            x = layer(x, bias)
        return self.classifier(x[:, 0])


def padded(encoded: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids of several inputs as one batch (padded with XLM-R's <pad>, 1) and its attention mask."""
    n = max(len(e) for e in encoded)
    ids = torch.ones((len(encoded), n), dtype=torch.long)
    mask = torch.zeros((len(encoded), n), dtype=torch.long)
    for k, row in enumerate(encoded):
        ids[k, : len(row)] = torch.from_numpy(row)
        mask[k, : len(row)] = 1
    return ids, mask


def marked(window: str, answer: str) -> str | None:
    """The window with the proposed answer's first occurrence between markers, so the verifier reads that span in
    its place (appended after the question it was not told apart from another span); None when the window does not
    hold the answer. No answer: the window as it is."""
    words = answer.split()
    if not words:
        return window
    found = re.search(r"\s*".join(re.escape(w) for w in words), window, re.IGNORECASE)
    if found is None:
        return None
    return f"{window[:found.start()]}{OPEN}{found.group()}{CLOSE}{window[found.end():]}"


def windows(passage: Passage, language: str, budget: int, count_tokens: Any) -> list[str]:
    """The passage as consecutive windows of whole sentences under `budget` tokens, each opened by the title (a
    sentence longer than the budget is a window of its own, which the tokenizer then cuts)."""
    title = f"{passage.title}: " if passage.title else ""
    room = max(budget - count_tokens(title), 8)
    found: list[str] = []
    current: list[str] = []
    used = 0
    for start, end in sentence_spans(passage.text, language):
        sentence = passage.text[start:end].strip()
        if not sentence:
            continue
        cost = count_tokens(sentence)
        if current and used + cost > room:
            found.append(title + " ".join(current))
            current, used = [], 0
        current.append(sentence)
        used += cost
    if current:
        found.append(title + " ".join(current))
    return found or ([title.rstrip(": ")] if title else [])


class Verifier:
    """verify(question, passages, language, answer) -> one Verdict per passage. Thread-compatible."""

    def __init__(self, reader: Reader, head: VerifierHead, config: dict[str, Any]) -> None:
        self.reader = reader
        self.head = head.eval()
        self.config = config
        self.spans = torch_spans(reader)
        self.shared = list(self.spans.head.layers[: config["shared_layers"]])

    @classmethod
    def load(cls, reader: Reader, path: str | Path = DEFAULT_WEIGHTS) -> Verifier:
        folder = Path(path)
        config, arrays = read_folder(folder / CONFIG_FILE, folder / WEIGHTS_FILE, _REQUIRED, VerifierWeightsError)
        eps = float(config.get("layer_norm_eps", 1e-12))
        head = VerifierHead([Layer(eps=eps) for _ in range(config["own_layers"])])
        try:
            head.load_state_dict({k: torch.from_numpy(v.astype(np.float32)) for k, v in arrays.items()})
        except RuntimeError as error:
            raise VerifierWeightsError(folder / WEIGHTS_FILE, f"do not fit the verifier ({error})") from error
        if config["shared_layers"] > len(torch_spans(reader).head.layers):
            raise VerifierWeightsError(folder / CONFIG_FILE, "shares more layers than the reader has")
        return cls(reader, head, config)

    def states(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The hidden states the verifier's own layers start from (what training caches)."""
        with torch.inference_mode():
            x = self.spans.bottom(ids, mask)
            bias = attention_bias(mask)
            for layer in self.shared:
                x = layer(x, bias)
            return x

    def encode(self, said: str, window: str) -> np.ndarray:
        return encode(self.reader.tokenizer, simplified(said), simplified(window), self.config["max_len"]).input_ids

    def probabilities(self, pairs: list[tuple[str, str]], batch: int = 16) -> np.ndarray:
        """[len(pairs), 3] verdict probabilities of (question, window) pairs."""
        if not pairs:
            return np.zeros((0, len(VERDICTS)), dtype=np.float32)
        encoded = [self.encode(said, window) for said, window in pairs]
        out = np.zeros((len(pairs), len(VERDICTS)), dtype=np.float32)
        order = np.argsort([len(e) for e in encoded], kind="stable")
        for at in range(0, len(order), batch):
            idx = order[at:at + batch]
            ids, mask = padded([encoded[i] for i in idx])
            with torch.inference_mode():
                out[idx] = self.head(self.states(ids, mask), mask).softmax(-1).numpy()
        return out

    def verify(self, question: str, passages: list[Passage], language: str, answer: str = "") -> list[Verdict]:
        """Each passage's verdict on the question (with `answer`: on that answer)."""
        return self.verify_each([(question, answer, p) for p in passages], language)

    def verify_each(self, items: list[tuple[str, str, Passage]], language: str) -> list[Verdict]:
        """The verdict on each (question, answer or "", passage), from the passage's most decided window (the one
        least likely ABSENT) among those that hold the answer, all read in one batched pass; a passage that does
        not hold the proposed answer does not state it. A question of only whitespace is refused."""
        said = [" ".join(question.split()) for question, _, _ in items]
        if any(not s for s in said):
            raise ValueError("the verifier needs a question or a claim to check, got only whitespace")
        count = self.reader.count_tokens
        split: list[list[str]] = []
        for _, answer, passage in items:
            shown = (marked(w, answer) for w in windows(passage, language, self.config["window_tokens"], count))
            split.append([w for w in shown if w is not None])
        probabilities = self.probabilities([(s, w) for s, parts in zip(said, split, strict=True) for w in parts])
        verdicts, at = [], 0
        for parts in split:
            if not parts:
                verdicts.append(Verdict(0.0, 0.0, 1.0))
                continue
            own = probabilities[at:at + len(parts)]
            at += len(parts)
            best = int(own[:, 2].argmin())
            verdicts.append(Verdict(float(own[best, 0]), float(own[best, 1]), float(own[best, 2]), parts[best]))
        return verdicts


def load_verifier(reader: Reader, path: str | Path = "") -> Verifier:
    """The verifier for a weights folder ("" = the lab's weights) over `reader`'s encoder."""
    return Verifier.load(reader, Path(path).expanduser() if str(path) else DEFAULT_WEIGHTS)
