"""The `cragraph` command line: index, search, ask, serve, eval folder. The lab's commands (bench, eval retrieval /
qa, training) are not the product's: each says to run `python -m cragraph_lab ...` from a source checkout."""

from __future__ import annotations

import argparse
import difflib
import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cragraph.cli.agent import register as register_agent_commands
from cragraph.cli.config import register as register_config_commands
from cragraph.cli.folder import add_eval_folder
from cragraph.cli.options import DEFAULT_INDEX, add_backend_options, index_location, parse_filters
from cragraph.cli.plan import register as register_plan_commands

if TYPE_CHECKING:
    from collections.abc import Callable

    from stores.backend import Index
    from stores.bundle import IngestReport

EXAMPLES = """examples:
  cragraph index notes/ papers/ --index .cragraph/index   index folders of .md .txt .html .jsonl files
  cragraph search "solar panels" -k 5                     ranked chunks with every score
  cragraph ask "Who founded Helix Robotics?" --trace      an answer with citations and the per-node trace
  cragraph ask "q1" "q2" --json                           one JSON object per question (JSON Lines)
  cragraph ask - --json < questions.txt                   questions from stdin, one per line, each answered as
                                                          it arrives; the models load once (Ctrl-C to stop)
  cragraph ask "q" --set multihop=always                  any Context field for this run
  cragraph config                                         the operator configuration, each value with its source
  cragraph serve --index .cragraph/index                  the LangGraph server and Studio on 127.0.0.1:2024
  cragraph ask --help                                     every option of a command
"""


def main(argv: list[str] | None = None) -> int:
    return run_command(_parser(), argv)


def entry() -> None:
    """The process's entry (the `cragraph` script, `python -m cragraph`): main, then the end cragraph/cli/leave.py
    chooses."""
    from cragraph.cli.leave import leave

    leave(main())


def run_command(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> int:
    """Parse `argv` (default: the process's arguments) with `parser` and run the command it names; a mistake a user
    can mend prints one line. The lab's command line (`python -m cragraph_lab`) runs its own parser through this."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args, extra = parser.parse_known_args(argv)
    # argparse would blame the top-level command; the command given has the usage that helps. A lab placeholder
    # takes any arguments: it only says where the command lives.
    if extra and not getattr(args, "lab_only", False):
        _refuse_extra(parser, sys.argv[1:] if argv is None else argv, extra)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        return args.run(args) or 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (FileNotFoundError, ValueError, LookupError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except Exception as error:
        from rag.reader import ReaderWeightsError
        from stores.bundle import BundleError

        if isinstance(error, (BundleError, ReaderWeightsError)):  # each names its file and the way to rebuild it
            print(f"error: {error}", file=sys.stderr)
            return 1
        raise


def _refuse_extra(parser: argparse.ArgumentParser, argv: list[str], extra: list[str]) -> None:
    """Exit with the usage of the (sub)command the arguments name, and the closest option to a mistyped one."""
    for token in argv:
        commands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if commands and token in commands[0].choices:
            parser = commands[0].choices[token]
    options = [o for action in parser._actions for o in action.option_strings if o.startswith("--")]
    hints = []
    for item in extra:
        close = difflib.get_close_matches(item.partition("=")[0], options, n=1, cutoff=0.6)
        if item.startswith("-") and close:
            hints.append(f"{item} (did you mean {close[0]}?)")
        else:
            hints.append(item)
    parser.error(f"unrecognized arguments: {' '.join(hints)}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cragraph", description=__doc__, epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(title="commands")
    register_agent_commands(commands)
    register_plan_commands(commands)
    register_config_commands(commands)

    index = commands.add_parser("index", help="index files or folders (.jsonl .txt .md .html) into a bundle")
    index.add_argument("paths", nargs="*",
                       help="files or folders to add (re-adding a changed file updates it); none, on an existing "
                            "index: bring it up to date (an older bundle gets its entity field and graph)")
    index.add_argument("--index", default=DEFAULT_INDEX, help="bundle folder (default: %(default)s)")
    index.add_argument("--embedder", default=None,
                       help="embedding model for a new index: e5-small (default), minilm, a local folder or "
                            "a Hugging Face id")
    index.add_argument("--rebuild", action="store_true", help="build a fresh index instead of updating")
    index.add_argument("--ner-share", type=float, default=1.0, metavar="SHARE",
                       help="skeleton indexing for a new index: full NER only for this most central share of "
                            "chunks (0 < SHARE <= 1), keyword entity links for the rest (default: %(default)s)")
    index.add_argument("--delete", nargs="+", default=[], metavar="DOC_ID", help="document ids to remove")
    index.add_argument("--quiet", action="store_true", help="no progress bars")
    index.add_argument("--workers", type=_workers, default=None, metavar="N",
                       help="threads that embed chunks (default: the runtime's, one per core); "
                            "CRAGRAPH_EMBED_BACKEND=openvino|torch|onnx|onnx-int8 picks the runtime (default "
                            "openvino, torch where it cannot start)")
    add_backend_options(index)
    index.add_argument("--bm25-terms", choices=("cragraph", "milvus"), default="cragraph",
                       help="milvus backend, new index: what Milvus' BM25 function reads: our tokenizer's terms "
                            "(stems, CJK bigrams; the default) or the raw passage for Milvus' standard analyzer")
    index.add_argument("--follow-symlinks", action="store_true",
                       help="also index files that symbolic links point to outside the folders given "
                            "(default: such links are skipped and reported)")
    index.set_defaults(run=_index)

    diagram = commands.add_parser("diagram", help="the compiled graph as a Mermaid flowchart")
    diagram.add_argument("--write", type=Path, metavar="FILE",
                         help="refresh the drawing between the graph markers in FILE (README.md) instead of printing")
    diagram.set_defaults(run=_diagram)

    search = commands.add_parser("search", help="ranked chunks for a question, with every score")
    search.add_argument("question")
    search.add_argument("--index", default=DEFAULT_INDEX, help="bundle folder (default: %(default)s)")
    add_backend_options(search)
    search.add_argument("--mode", choices=("hybrid", "bm25", "dense"), default="hybrid",
                        help="hybrid: BM25 and dense fused (default); bm25: keywords only; dense: embeddings only")
    search.add_argument("-k", type=int, default=10, help="how many chunks to list (default: %(default)s)")
    search.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE",
                        help="metadata filter; KEY=VALUE for equality, KEY=PREFIX* for a prefix "
                             "(e.g. category=cs.*); repeatable")
    search.add_argument("--json", action="store_true", help="print JSON instead of a table")
    search.set_defaults(run=_search)

    evaluate = commands.add_parser("eval", help="answer a questions file over your own documents")
    targets = evaluate.add_subparsers(title="what to evaluate")
    add_eval_folder(targets)
    _lab_placeholders(commands, targets)
    return parser


LAB_HINT = "is a lab tool, not in the installed package: from a source checkout, after `make install`, run"


LAB_COMMANDS = {"bench": "speed, calibration and training measurements",
                "train-evaluator": "train the embedded relevance evaluator's head",
                "web-standin": "a local Tavily stand-in for benchmarks"}
LAB_EVAL_TARGETS = {"retrieval": "R@k per retrieval mode over benchmark sets",
                    "evaluator": "the relevance evaluators over benchmark sets",
                    "qa": "end-to-end QA over a benchmark set, with the peers",
                    "qa-suite": "every benchmark set, every mode and peer"}


def _lab_placeholders(commands: argparse._SubParsersAction, targets: argparse._SubParsersAction) -> None:
    """The lab's commands, which live in cragraph_lab/ (a source checkout, not the wheel) and run as
    `python -m cragraph_lab ...`: each takes any arguments and says so in one line."""
    for group, names, prefix in ((commands, LAB_COMMANDS, ""), (targets, LAB_EVAL_TARGETS, "eval ")):
        for name, what in names.items():
            placeholder = group.add_parser(name, help=f"{what} (lab: python -m cragraph_lab {prefix}{name})",
                                           add_help=False)
            placeholder.set_defaults(run=_lab_missing(f"{prefix}{name}"), lab_only=True)


def _lab_missing(command: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        print(f"error: `cragraph {command}` {LAB_HINT} `python -m cragraph_lab {command} ...`", file=sys.stderr)
        return 2

    return run


def _workers(text: str) -> int:
    """--workers N: a whole number of threads, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of threads, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (threads that embed chunks), got {value}")
    return value


def _use_workers(workers: int | None) -> None:
    """Embed with `workers` intra-op threads: ONNX Runtime reads CRAGRAPH_EMBED_THREADS when its session starts,
    torch takes set_num_threads. Threads, not processes: both runtimes already split a batch over threads, and each
    process would load its own copy of the model (about 1 GB with the ONNX graph)."""
    if workers is None:
        return
    from models.onnx_embedder import THREADS_ENV

    os.environ[THREADS_ENV] = str(workers)
    import torch

    torch.set_num_threads(workers)


def _index(args: argparse.Namespace) -> int:
    _use_workers(getattr(args, "workers", None))
    from stores.backend import index_exists
    from stores.bundle import writer_lock

    if not 0.0 < args.ner_share <= 1.0:
        raise ValueError(f"--ner-share must be in (0, 1], got {args.ner_share}")
    backend, location = index_location(getattr(args, "backend", None), getattr(args, "uri", None), args.index)
    if backend == "milvus":  # Milvus takes concurrent writes itself; no lock file beside a server's URI
        if not args.paths and not args.delete and not index_exists(backend, location):
            raise ValueError(f"no index at {location}: give files or folders to index")
        return _index_locked(args, backend, location)
    if not args.paths and not args.delete and not Path(location).exists():
        raise ValueError(f"no index at {location}: give files or folders to index")
    # One lock around the whole command: whether to build or update is decided by what is on disk, so a second
    # `cragraph index` waits here and then adds to the first one's index instead of building over it.
    with writer_lock(Path(location)):
        return _index_locked(args, backend, location)


def _add_then_delete(bundle: Index, paths: list[str] | None, delete: list[str] | None, progress: bool,
                     follow: bool) -> IngestReport:
    """`cragraph index` on an index that exists: add `paths` (none, and nothing to delete: bring the index up to
    date with its folders), then delete `delete`; one report of both."""
    if not paths and delete:
        return bundle.delete(delete)
    report = bundle.add(paths or None, progress=progress, follow_symlinks=follow)
    if delete:
        deleted = bundle.delete(delete)
        report.documents_deleted, report.chunks_deleted = deleted.documents_deleted, deleted.chunks_deleted
        report.skipped += deleted.skipped
    return report


def _index_locked(args: argparse.Namespace, backend: str, location: str) -> int:
    from stores.backend import build_index, index_exists, open_index
    from stores.bundle import IndexSettings

    progress = not args.quiet
    path = location
    follow = getattr(args, "follow_symlinks", False)
    if args.rebuild or not index_exists(backend, path):
        if not args.paths:
            raise ValueError(f"no index at {path} to delete from" if args.delete else
                             "--rebuild needs files or folders")
        settings = IndexSettings(embedder=args.embedder or IndexSettings.embedder, ner_share=args.ner_share)
        bundle, report = build_index(backend, path, args.paths, settings, progress=progress, follow_symlinks=follow,
                                     bm25_terms=getattr(args, "bm25_terms", "cragraph"))
    else:
        bundle = open_index(backend, path, embedder=args.embedder)
        report = _add_then_delete(bundle, args.paths, args.delete, progress, follow)
    for source, reason in report.skipped:
        print(f"skipped {source}: {reason}", file=sys.stderr)
    counts = bundle.manifest["counts"]
    print(f"{report.summary()}\nindex {path}: {counts['documents']} documents, {counts['chunks']} chunks, "
          f"embedder {bundle.settings.embedder}")
    return 0


def _diagram(args: argparse.Namespace) -> int:
    from graph.diagram import mermaid, redrawn

    if args.write is None:
        print(mermaid())
        return 0
    try:
        args.write.write_text(redrawn(args.write.read_text(encoding="utf-8")), encoding="utf-8")
    except (OSError, ValueError) as error:
        raise SystemExit(f"cragraph diagram: {error}") from error
    print(f"redrew the graph in {args.write}")
    return 0


def _search(args: argparse.Namespace) -> int:
    from rag.retrieval.retriever import HybridRetriever
    from stores.backend import open_index

    bundle = open_index(*index_location(getattr(args, "backend", None), getattr(args, "uri", None), args.index))
    hits = HybridRetriever(bundle).search(args.question, k=args.k, mode=args.mode,
                                          filters=parse_filters(args.filter))
    if args.json:
        print(json.dumps([h.to_dict() for h in hits], ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print("no results")
        return 0
    print("| # | chunk | score | bm25 | dense | title | text |\n|---|---|---|---|---|---|---|")
    for rank, hit in enumerate(hits, start=1):
        bm25 = hit.scores.get("bm25")
        dense = hit.scores.get("dense")
        text = " ".join(hit.chunk.text.split())
        print(f"| {rank} | {hit.chunk.id} | {hit.score:.4f} | {'' if bm25 is None else f'{bm25:.2f}'} | "
              f"{'' if dense is None else f'{dense:.3f}'} | {hit.chunk.title} | "
              f"{text[:100]}{'…' if len(text) > 100 else ''} |")
    return 0
