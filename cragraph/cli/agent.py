"""`cragraph ask` (questions through the CRAG graph), `cragraph recommend` (the strategy it would pick) and
`cragraph serve` (the LangGraph dev server)."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import re
import shutil
import socket
import sys
import typing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OFFLINE_SERVER_ENV = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "HF_HUB_OFFLINE": "1",
}


def register(commands: argparse._SubParsersAction) -> None:
    from cragraph.cli.options import DEFAULT_INDEX, ContextDefaults, add_backend_options

    ask = commands.add_parser("ask", help="answer a question from the index (CRAG graph), with citations",
                              formatter_class=ContextDefaults)
    ask.add_argument("question", nargs="*",
                     help="one or more questions; - reads more from stdin, one per line, each answered as it "
                          "arrives by the same process (models load once; empty lines are skipped, EOF ends)")
    ask.add_argument(
        "--file",
        type=Path,
        default=None,
        help="also answer the questions in this file (one per line; # starts a comment)",
    )
    ask.add_argument("--index", default=None, help=f"bundle folder (default: {DEFAULT_INDEX.replace('%', '%%')})")
    add_backend_options(ask)
    ask.add_argument(
        "--thread",
        default=None,
        metavar="ID",
        help="keep the conversation under this thread id in a checkpoint store, so a later `ask --thread ID` "
             "can ask a follow-up and an interrupted run can be resumed (store: $CRAGRAPH_CHECKPOINT, a SQLite "
             "file or a postgresql:// URL; default: threads.sqlite in the user data folder)",
    )
    ask.add_argument(
        "--resume",
        action="store_true",
        help="with --thread ID and no question: continue the thread's interrupted run (killed, crashed) from its "
             "last checkpoint, with the settings it started with (options given here override them)",
    )
    ask.add_argument("--trace", action="store_true", help="print the per-node trace table")
    ask.add_argument("--json", action="store_true",
                     help="print each question's whole output as one JSON object per line (JSON Lines)")
    ask.add_argument(
        "--web",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="web search on ambiguous/incorrect grades (needs TAVILY_API_KEY)",
    )
    ask.add_argument("--chat-model", default=None, help="chat model for LLM stages: embedded or provider:model")
    ask.add_argument(
        "--llm-answer",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="write the answer with the chat model instead of extracting it",
    )
    ask.add_argument("--evaluator", default=None,
                     help="relevance evaluator: embedded, cosine, t5:MODEL, cross-encoder:MODEL, llm:PROVIDER:MODEL")
    ask.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="metadata filter, as for `cragraph search`; repeatable",
    )
    ask.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="any Context field, e.g. --set answer_threshold=0.3 --set multihop=always; repeatable "
             "(stage internals are the operator configuration: cragraph config)",
    )
    ask.set_defaults(run=run_ask)

    recommend = commands.add_parser(
        "recommend",
        help="the retrieval strategy strategy=auto would pick for a question, with alternatives (retrieves nothing)",
    )
    recommend.add_argument("question", nargs="+", help="one or more questions")
    recommend.add_argument("--index", default=DEFAULT_INDEX, help="bundle folder (default: %(default)s)")
    recommend.add_argument("--json", action="store_true", help="print the recommendation as JSON")
    recommend.set_defaults(run=run_recommend)

    serve = commands.add_parser("serve", help="start the LangGraph dev server (API + Studio) on 127.0.0.1")
    serve.add_argument("--port", type=int, default=2024,
                       help="port on 127.0.0.1 (default: %(default)s); a taken port is refused, not moved")
    serve.add_argument("--index", default=None, help="bundle folder the server answers from (CRAGRAPH_INDEX)")
    add_backend_options(serve)
    serve.add_argument("--reload", action="store_true", help="reload on code changes")
    serve.set_defaults(run=run_serve)


def build_context(args: argparse.Namespace) -> Any:
    from cragraph.cli.options import CONTEXT_OPTIONS, DEFAULT_INDEX, index_location
    from rag.config import reload
    from rag.context import Context

    reload()  # the operator configuration, read when the command starts: a mistake is refused before any question

    values: dict[str, Any] = {"index": args.index or DEFAULT_INDEX}
    backend, location = index_location(getattr(args, "backend", None), getattr(args, "uri", None), args.index)
    if backend == "milvus":
        values.update(index_backend=backend, index_uri=location)
    for option, field in CONTEXT_OPTIONS.items():
        value = getattr(args, option)
        if value is not None and value != "":
            values[field] = value
    values.update(set_values(args.set))
    return Context(**values)


def set_values(items: list[str]) -> dict[str, Any]:
    """`--set FIELD=VALUE` items as typed Context values; a bad one raises, naming what was expected."""
    from dataclasses import fields

    from rag.context import Context, parse_setting
    from rag.policy import unknown_fields
    from rag.settings import kind_text

    hints = typing.get_type_hints(Context)
    known = {f.name for f in fields(Context)}
    values: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep:
            raise ValueError(f"bad --set {item!r}: expected FIELD=VALUE, e.g. --set answer_threshold=0.3")
        if name not in known:
            raise ValueError(f"bad --set {item!r}: {unknown_fields([name])}")
        try:
            values[name] = parse_setting(raw, hints[name], name)
        except ValueError as error:
            raise ValueError(f"bad --set {item!r}: {name} expects {kind_text(hints[name])} ({error})") from None
    return values


def run_ask(args: argparse.Namespace) -> int:
    from cragraph.cli.leave import end_quickly
    from cragraph.cli.options import parse_filters

    from_stdin = STDIN in args.question
    questions = [question for question in args.question if question != STDIN]
    if args.resume:
        if not args.thread:
            raise ValueError("--resume continues a thread's interrupted run: name it with --thread ID")
        if questions or from_stdin or args.file is not None:
            raise ValueError("--resume continues the thread's interrupted run and takes no question; "
                             "to ask a new one on the thread, drop --resume")
        return resume_thread(args)
    if args.file is not None:
        lines = args.file.read_text(encoding="utf-8").splitlines()
        questions += [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not questions and not from_stdin:
        raise ValueError("no question given: pass a question, --file FILE, or - to read questions from stdin")
    _warm(args)
    end_quickly()  # an ask writes nothing its process must close (cragraph/cli/leave.py)
    context = build_context(args)
    _require_index(context)
    filters = parse_filters(args.filter)
    many = len(questions) > 1 or from_stdin
    stream = itertools.chain(questions, stdin_questions(sys.stdin)) if from_stdin else questions
    with _agent(args) as (agent, config):
        for number, question in enumerate(stream):
            if many and not args.json:  # JSON Lines: one object per question, nothing between
                print(("\n" if number else "") + f"## {question}\n")
            request: dict[str, Any] = {"question": question}
            if filters:
                request["filters"] = filters
            if config and number == 0:
                _note_unfinished(agent, config)
            result = agent.invoke(request, config, context=context)
            if _paused(result, args.thread):
                continue
            print_result({"question": question, **result} if args.json else result, args)
            sys.stdout.flush()  # a reader at the other end of a pipe gets each answer as it is made
    return 0


def _warm(args: argparse.Namespace) -> None:
    """Open the run's models on a second thread while this one imports the graph (cragraph/cli/warm.py)."""
    from cragraph.cli.options import index_location
    from cragraph.cli.warm import warm_in_background

    try:
        backend, location = index_location(getattr(args, "backend", None), getattr(args, "uri", None), args.index)
    except ValueError:  # build_context says what is wrong with the options
        return
    if backend == "bundle" and Path(location).is_dir():
        warm_in_background(location)


SAMPLE_INDEX = Path(".cragraph") / "sample"  # where `make demo` indexes the bundled sample (the README's examples)


def _require_index(context: Any) -> None:
    """Refuse at once when the run's index is not there (a Milvus index is checked when the graph opens it)."""
    if context.index_backend == "bundle" and not Path(context.index).exists():
        raise FileNotFoundError(missing_index(context.index))


def missing_index(index: str | Path) -> str:
    """What to do about an index that is not there: build it; for the README's sample index, run `make demo`."""
    message = f"no index at {index}; build one with `cragraph index PATH --index {index}`"
    if Path(index).parts[-2:] == SAMPLE_INDEX.parts:
        message += " (the README's sample index: `make demo` in the project folder builds it)"
    return message


# The ask options a thread's checkpoints record (as JSON in their metadata), so `--resume` runs with them.
SETTINGS_KEY = "cragraph_ask"
_RECORDED = ("index", "backend", "uri", "web", "chat_model", "llm_answer", "evaluator", "set")


@contextlib.contextmanager
def _agent(args: argparse.Namespace) -> typing.Iterator[tuple[Any, dict[str, Any] | None]]:
    """(graph, run config): the module's graph without --thread; with it, the graph compiled with the checkpoint
    store's checkpointer and a config naming the thread and recording the run's ask options."""
    if not args.thread:
        from graph import graph

        yield graph, None
        return
    from cragraph.cli.checkpoints import open_checkpointer
    from cragraph.cli.options import DEFAULT_INDEX
    from graph.builder import compile_graph

    recorded = {name: getattr(args, name) for name in _RECORDED}
    recorded["index"] = str(Path(args.index or DEFAULT_INDEX).resolve())
    config = {"configurable": {"thread_id": args.thread}, "metadata": {SETTINGS_KEY: json.dumps(recorded)}}
    with open_checkpointer() as saver:
        yield compile_graph(checkpointer=saver), config


def _paused(result: dict[str, Any], thread: str | None) -> bool:
    """A run on a thread paused by human review (--set review=...): said on stderr; True when it paused."""
    interrupts = result.get("__interrupt__")
    if not interrupts:
        return False
    value = interrupts[0].value
    where = value.get("review") if isinstance(value, dict) else None
    print(f"the run on thread {thread!r} is paused for human review{f' ({where})' if where else ''}; continue it "
          "with Command(resume=...) in Python or on the server (docs/guide.md: Human review)", file=sys.stderr)
    return True


def unfinished_step(agent: Any, config: dict[str, Any]) -> tuple[str, ...]:
    """The nodes of the thread's last checkpointed step, () when its run finished (or it has none).

    Read as a record of the step, not the live view: `get_state` drops a node whose writes were stored before the
    process died, so a run killed between a node's writes and the next checkpoint would look finished. Resuming
    such a step reuses the stored writes; the node does not run again."""
    last = next(iter(agent.get_state_history(config, limit=1)), None)
    return tuple(last.next) if last is not None else ()


def _note_unfinished(agent: Any, config: dict[str, Any]) -> None:
    if pending := unfinished_step(agent, config):
        print(
            f"note: thread {config['configurable']['thread_id']!r} had an unfinished run (next: "
            f"{', '.join(pending)}); this question starts a new run instead of resuming it (--resume)",
            file=sys.stderr,
        )


def resume_thread(args: argparse.Namespace) -> int:
    """`ask --thread ID --resume`: the thread's last checkpoint, if its run did not finish, continued with
    invoke(None): the steps already checkpointed are not run again. The run's recorded ask options are the
    defaults; options given now override them."""
    from cragraph.cli.checkpoints import checkpoint_spec, describe

    with _agent(args) as (agent, config):
        assert config is not None  # args.thread is set
        snapshot = agent.get_state(config)
        where = describe(checkpoint_spec())
        if snapshot.metadata is None:
            raise LookupError(f"no thread {args.thread!r} in checkpoint store {where}")
        pending = unfinished_step(agent, config)
        if not pending:
            raise ValueError(f"thread {args.thread!r} has no unfinished run to resume (its last run finished); "
                             "ask a new question with `cragraph ask QUESTION --thread ID`")
        if snapshot.interrupts:
            raise ValueError(f"the run on thread {args.thread!r} is paused for human review, not interrupted: "
                             "answer it with Command(resume=...) in Python or on the server "
                             "(docs/guide.md: Human review)")
        stored = json.loads(snapshot.metadata.get(SETTINGS_KEY) or "{}")
        merged = argparse.Namespace(**vars(args))
        for name in _RECORDED:
            if name == "set":  # later --set items win: the ones given now come last
                merged.set = [*stored.get("set", []), *args.set]
            elif getattr(args, name) is None and stored.get(name) is not None:
                setattr(merged, name, stored[name])
        context = build_context(merged)
        _require_index(context)
        config["metadata"][SETTINGS_KEY] = json.dumps({name: getattr(merged, name) for name in _RECORDED})
        print(f"resuming thread {args.thread!r} at {', '.join(pending)} (step "
              f"{snapshot.metadata.get('step')}) from {where}", file=sys.stderr)
        result = agent.invoke(None, config, context=context)
        if _paused(result, args.thread):
            return 0
        question = snapshot.values.get("question")
        print_result({"question": question, **result} if args.json else result, args)
    return 0


STDIN = "-"


def stdin_questions(stream: typing.TextIO) -> typing.Iterator[str]:
    """Questions from a stream, one per line, yielded as each line arrives (not after EOF); blank lines skipped."""
    for line in iter(stream.readline, ""):
        if line.strip():
            yield line.strip()


def run_recommend(args: argparse.Namespace) -> int:
    """Each question through the graph with recommend_only: the route node picks the strategy and the run ends."""
    from graph import graph
    from rag.context import Context

    if not Path(args.index).exists():
        raise FileNotFoundError(missing_index(args.index))
    context = Context(index=args.index, strategy="auto")
    for question in args.question:
        strategy = graph.invoke({"question": question, "recommend_only": True}, context=context)["strategy"]
        if args.json:
            print(json.dumps({"question": question, **strategy}, ensure_ascii=False))
            continue
        print(
            f"{question}\n  recommended: {strategy['name']} (confidence {strategy['confidence']:.2f}): "
            f"{strategy['reason']}"
        )
        for alternative in strategy["alternatives"]:
            print(f"  alternative: {alternative['name']} ({alternative['confidence']:.2f}): {alternative['reason']}")
    return 0


# What json.dumps(ensure_ascii=False) leaves raw but a terminal may obey: DEL, C1 controls, bidi and zero-width
# format characters (they occur only inside JSON strings, where a \\uXXXX escape is the same text).
_UNPRINTABLE = re.compile("[\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]")


def print_result(result: dict[str, Any], args: argparse.Namespace) -> None:
    """The result as JSON or as text for a terminal. Text from documents or the web can carry terminal escape
    sequences: JSON escapes every control and bidi character (`\\u001b`), the text form drops them."""
    from rag.retrieval.sanitize import without_controls as plain

    if args.json:  # one line: several results make JSON Lines
        print(_UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(result, ensure_ascii=False)))
        return
    print(plain(result["answer"]))
    _print_citations(result.get("citations") or [])
    withheld = result.get("withheld")
    if withheld:
        lower = math.floor(float(withheld.get("confidence") or 0.0) * 20) / 20
        print(f"\nNot sure enough ({plain(withheld['reason'])}): {plain(withheld['answer'])}. "
              f"`--set answer_threshold={lower:g}` shows answers this sure.")
        _print_citations(withheld["citations"])
    if result.get("evidence"):
        print("\nEvidence:")
        for item in result["evidence"]:
            print(f"  [{item['n']}] {' '.join(plain(item['sentence']).split())}  (score {item['score']:.2f})")
    print(f"\nCRAG verdict: {result.get('verdict', '-')}" + ("; abstained" if result.get("abstained") else ""))
    strategy = result.get("strategy") or {}
    if strategy.get("name", "manual") != "manual" or strategy.get("tier"):
        tier = f", tier {strategy['tier']}" if strategy.get("tier") else ""
        print(f"Retrieval strategy: {strategy['name']}{tier} ({strategy['reason']})")
    if args.trace:
        total = sum(entry.get("duration_ms", 0) for entry in result["trace"])
        print(f"\nTrace ({total / 1000:.2f} s):\n" + format_trace(result["trace"]))


def _print_citations(cited: list[dict[str, Any]]) -> None:
    from rag.retrieval.sanitize import without_controls as plain

    if cited:
        print("\nCitations:")
    for citation in cited:
        where = plain(citation["url"] or citation["id"])
        title = f" {plain(citation['title'])}" if citation["title"] else ""
        page = f", page {citation['page']}" if citation.get("page") else ""
        print(f"  [{citation['n']}]{title} ({where}{page})")


def server_command(port: int, reload: bool = False) -> list[str]:
    """The `langgraph dev` command line: local only, no browser, the project's langgraph.json."""
    executable = shutil.which("langgraph") or str(Path(sys.executable).with_name("langgraph"))
    command = [
        executable,
        "dev",
        "--no-browser",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--config",
        str(ROOT / "langgraph.json"),
    ]
    return command if reload else [*command, "--no-reload"]


def server_env(index: str | None = None, uri: str | None = None) -> dict[str, str]:
    """The server's environment: offline settings, and the index it answers from (a bundle folder, or a Milvus
    index when `uri` is given)."""
    env = {**os.environ, **OFFLINE_SERVER_ENV}
    if index:
        env["CRAGRAPH_INDEX"] = str(Path(index).resolve())
    if uri:
        env["CRAGRAPH_INDEX_BACKEND"] = "milvus"
        env["CRAGRAPH_INDEX_URI"] = str(Path(uri).resolve()) if uri.endswith(".db") else uri
    return env


def port_problem(port: int, host: str = "127.0.0.1") -> str | None:
    """Why `port` cannot be served on, with a free one to use instead; None when it is free. `langgraph dev`
    itself moves to another port when one is taken, which would make the URL and Studio link printed here wrong."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds: TIME_WAIT is free
        try:
            probe.bind((host, port))
        except OSError as error:
            reason = error.strerror or str(error)
        else:
            return None
    with socket.socket() as spare:
        spare.bind((host, 0))
        free = spare.getsockname()[1]
    return f"port {port} on {host} cannot be used ({reason}; another server?): pick another, e.g. --port {free}"


def run_serve(args: argparse.Namespace) -> int:
    command = server_command(args.port, args.reload)
    if not Path(command[0]).exists():
        raise FileNotFoundError("`langgraph` not found: pip install 'cragraph[server]' (langgraph-cli[inmem])")
    problem = port_problem(args.port)
    if problem:
        raise ValueError(problem)
    print(
        f"LangGraph dev server on http://127.0.0.1:{args.port} (Ctrl-C to stop); Studio: "
        f"https://smith.langchain.com/studio/?baseUrl=http://127.0.0.1:{args.port}",
        file=sys.stderr,
    )
    from cragraph.cli.child import run_child
    from cragraph.cli.options import index_location
    from rag.config import reload

    reload()  # refused here, naming the key, rather than in the server's log
    backend, location = index_location(args.backend, args.uri, args.index)
    return run_child(command, ROOT, server_env(args.index, location if backend == "milvus" else None))


def format_trace(trace: list[dict[str, Any]]) -> str:
    """The trace as a Markdown table (for `cragraph ask --trace` and the README)."""
    lines = ["| # | node | decision | counts | top scores | ms | note |", "|---|---|---|---|---|---|---|"]
    for i, entry in enumerate(trace, start=1):
        counts = ", ".join(f"{k}={v}" for k, v in entry.get("counts", {}).items())
        scores = ", ".join(f"{s:.2f}" for s in entry.get("top_scores", []))
        note = str(entry.get("note", "")).replace("|", "/")
        lines.append(
            f"| {i} | {entry['node']} | {entry['decision']} | {counts} | {scores} | "
            f"{entry.get('duration_ms', 0):.0f} | {note} |"
        )
    return "\n".join(lines)
