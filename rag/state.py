"""Typed graph state: what goes in, what comes out, and everything the nodes pass along in between.

Every value is JSON-able (hits and passages are plain dicts), so any checkpointer can store the state.
Lists that several nodes or loop rounds add to use reducers; everything else is replaced by its writer.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict  # pydantic builds JSON schemas (Studio's form) only from this one before 3.12

from evaluators.base import Grade
from prompts.languages import abstention
from stores.chinese_script import script_language

TRACE_LIMIT = 120  # trace records a run keeps: 30 re-retrieval rounds, the rest summarized in one record
NOTE_LIMIT = 500  # characters of a trace note (a note quotes the query, which a caller controls)


# Marks a run's first trace record: a thread's checkpoint keeps `trace` and `debug` between runs, and their
# reducers only add, so without it a second question's output would carry the first run's records too.
RUN_START = "run_start"


def abstained(language: str, question: str = "") -> dict[str, Any]:
    """The state update of an abstention, in the question's language and script (the answer step's and a
    reviewer's)."""
    return {
        "answer": abstention(script_language(language, question)),
        "citations": [],
        "evidence": [],
        "abstained": True,
        "confidence": None,
        "margin": None,
        "withheld": None,
        "items": [],
        "language": language,
    }


def new_run(update: dict[str, Any], state: Mapping[str, Any]) -> dict[str, Any]:
    """`update` (the first node's) with its first trace record marked RUN_START, and `debug` restarted when
    the thread has one: the reducers then drop the thread's earlier runs. A run whose conversation step already
    opened the trace (a record marked with this run's `run_mark`, see nodes/conversation.py) is left as it is."""
    mark = state.get("run_mark")
    if mark and any(record.get(RUN_START) == mark for record in state.get("trace") or []):
        return update
    first, *rest = update["trace"]
    update["trace"] = [{**first, RUN_START: True}, *rest]
    if state.get("debug"):
        update["debug"] = {**update.get("debug", {}), RUN_START: True}
    return update


def append_trace(left: list[dict[str, Any]] | None, right: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Reducer for `trace`: appends, but keeps at most TRACE_LIMIT records, so a long loop cannot grow the state
    (and a checkpointer's copy of it per step) without bound; the oldest records beyond the limit are dropped
    and counted in a first record {"node": "trace", "decision": "truncated", "counts": {"dropped": n}}.
    A record marked RUN_START in `right` drops everything before it (the thread's earlier runs)."""
    right = list(right or [])
    starts = [i for i, record in enumerate(right) if record.get(RUN_START)]
    if starts:
        left, right = [], right[starts[-1] :]
    records = [*(left or []), *right]
    if len(records) <= TRACE_LIMIT:
        return records
    dropped = 0
    if records and records[0].get("node") == "trace" and records[0].get("decision") == "truncated":
        dropped = int(records[0]["counts"]["dropped"])
        records = records[1:]
    keep = TRACE_LIMIT - 1
    dropped += len(records) - keep
    marker = {
        "node": "trace",
        "decision": "truncated",
        "counts": {"dropped": dropped},
        "top_scores": [],
        "duration_ms": 0.0,
        "note": f"{dropped} older trace records dropped (TRACE_LIMIT {TRACE_LIMIT})",
    }
    return [marker, *records[-keep:]]


def merge_dicts(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer for `debug`: later stages add their keys beside earlier ones; RUN_START in `right` drops the thread's
    earlier runs' keys."""
    right = dict(right or {})
    if right.pop(RUN_START, False):
        left = {}
    return {**(left or {}), **right}


class InputState(TypedDict):
    """What a caller gives: the question and, optionally, metadata filters (e.g. {"language": "ru"}) and
    `recommend_only` (return the retrieval strategy recommendation and its alternatives, retrieving nothing).
    A chat client gives `messages` instead (LangGraph's chat convention): the last user message is the question,
    resolved against the thread's earlier turns when it is a follow-up. Hence neither is required by the schema;
    a run with neither is refused by the first node."""

    question: NotRequired[str]
    filters: NotRequired[dict[str, Any] | None]
    recommend_only: NotRequired[bool]
    messages: NotRequired[Annotated[list[AnyMessage], add_messages]]


class Citation(TypedDict):
    """Answer citation [n]: an index chunk (id = chunk id) or a web page (id = url)."""

    n: int
    id: str
    title: str
    source: Literal["index", "web"]
    url: str | None
    doc_id: str | None
    page: NotRequired[int | None]  # the PDF page of the chunk; None for other files and the web
    section: NotRequired[str | None]  # the heading of the document's section the chunk lies in, if any


class Evidence(TypedDict):
    """A sentence of the context that supports the answer, with the citation number it belongs to."""

    n: int
    sentence: str
    score: float


class HighlightSentence(TypedDict):
    """An evidence sentence of a passage; start/end are character offsets into the passage's source text
    (the chunk text stored under passage_id, or the web page's content)."""

    text: str
    score: float
    start: int
    end: int


class Highlight(TypedDict):
    """The evidence sentences of one context passage; number is its 1-based position in the context."""

    passage_id: str
    number: int
    sentences: list[HighlightSentence]


class ListItem(TypedDict):
    """One item of a list answer and the citation [n] of the passage it was read from."""

    text: str
    n: int | None


class Withheld(TypedDict):
    """The best candidate answer when its probability of being right stayed under `answer_threshold`: the run
    abstains (a wrong answer costs more than none), but the user can still see what it would have said, from
    where, and how sure it was (`confidence`, the probability)."""

    answer: str
    citations: list[Citation]
    confidence: float | None
    margin: float | None
    reason: str


class OutputState(TypedDict, total=False):
    """What a run returns."""

    answer: str
    citations: list[Citation]
    evidence: list[Evidence]
    verdict: Grade  # the CRAG grade of the retrieved passages
    abstained: bool
    confidence: float | None  # the answer's probability of being right (the decision model's); None: an LLM answered
    margin: float | None  # the reader's span score over its no-answer score, one of the decision's signals
    withheld: Withheld | None  # set only when the best candidate's probability was under answer_threshold
    items: list[ListItem]  # a list answer's items, each with its citation number (`answer` holds them as text)
    language: str
    highlights: list[Highlight]
    # the retrieval strategy: name, tier, reason, confidence, alternatives, allowed techniques (nodes/strategy.py)
    strategy: dict[str, Any]
    trace: Annotated[list[dict[str, Any]], append_trace]
    debug: Annotated[dict[str, Any], merge_dicts]
    # the chat: the user's turns and an AIMessage per answer (its citations and evidence in additional_kwargs)
    messages: Annotated[list[AnyMessage], add_messages]


class Turn(TypedDict):
    """One answered turn of a thread: the standalone question asked and the answer given; `earlier`, the few
    turns before it as [question, answer] pairs (oldest first), which "what about X?" may need (followup.py)."""

    question: str
    answer: str
    abstained: bool
    earlier: NotRequired[list[list[str]]]


class State(InputState, OutputState, total=False):
    """The full state. Passages are dicts: {id, doc_id, title, text, url, source, score, scores, ...}."""

    route: Literal["single", "multihop"]
    analysis: dict[str, Any]  # the question analysed once (rag.retrieval.analysis.QueryAnalysis.as_dict())
    keywords: str
    variants: list[str]
    query: str
    hits: list[dict[str, Any]]
    candidates: list[dict[str, Any]]
    grades: list[float]
    knowledge: list[dict[str, Any]]
    web_knowledge: list[dict[str, Any]]
    web_status: str
    selected: list[dict[str, Any]]
    retrieval_round: int
    max_retrieval_rounds: int
    # the best-graded retrieval round so far: {round, strategy, best, candidates, grades, verdict} (nodes/grade.py)
    best_attempt: dict[str, Any]
    # written by the multi-hop subgraph (graph/multihop.py)
    facets: list[str]
    plan_dsl: str
    compiled_plan: dict[str, Any]
    evidence_hits: list[dict[str, Any]]
    decomposition_source: str
    multihop_answer: str | None
    hops: list[dict[str, Any]]  # the plan's sub-questions as asked, with their passages and answers (execute)
    # the conversation (nodes/conversation.py) and human review (nodes/review.py)
    asked_id: str  # id of the user message this run answers (a thread's later run sees it answered)
    run_mark: str  # this run's mark on the trace record that opened it (see new_run)
    last_turn: Turn  # the thread's previous turn, for a follow-up asked as {"question": ...}
    followup: dict[str, Any]  # {"asked", "standalone", "how"} when the question was rewritten as a follow-up


class MultihopInput(TypedDict):
    """What the planning subgraph takes."""

    question: str
    filters: NotRequired[dict[str, Any] | None]
    analysis: NotRequired[dict[str, Any]]  # the main graph's analysis of the question, when it made one


class MultihopOutput(TypedDict, total=False):
    """What the planning subgraph hands back to the main graph (see graph/multihop.py)."""

    knowledge: list[dict[str, Any]]
    candidates: list[dict[str, Any]]
    evidence_hits: list[dict[str, Any]]
    facets: list[str]
    plan_dsl: str
    compiled_plan: dict[str, Any]
    decomposition_source: str
    multihop_answer: str | None
    hops: list[dict[str, Any]]
    trace: Annotated[list[dict[str, Any]], append_trace]


class MultihopState(MultihopInput, MultihopOutput, total=False):
    """Everything the phases pass along; all JSON-able."""

    decomposition: dict[str, Any] | None  # Decomposition.model_dump(): the sub-questions DAG
    decomposition_reply: str  # the last candidate (or error), fed back to an LLM retry
    decompose_stage: int  # index into the fallback chain: the loop's budget
    plan_errors: list[str]
    plan_valid: bool
    plan: dict[str, Any]  # Plan.model_dump(): the parsed DSL
    step_results: list[dict[str, Any]]  # one record per executed step


class StageTimer:
    """Started when a node begins; `record` turns it into the node's trace entry."""

    def __init__(self, node: str):
        self.node = node
        self.started = time.perf_counter()

    def record(
        self,
        decision: str,
        counts: dict[str, int] | None = None,
        top_scores: Iterable[float] = (),
        note: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "node": self.node,
            "decision": decision,
            "counts": dict(counts or {}),
            "top_scores": [round(float(s), 4) for s in sorted(top_scores, reverse=True)[:3]],
            "duration_ms": round((time.perf_counter() - self.started) * 1000.0, 1),
        }
        if note:
            entry["note"] = note if len(note) <= NOTE_LIMIT else note[: NOTE_LIMIT - 3] + "..."
        entry.update(extra)
        return entry
