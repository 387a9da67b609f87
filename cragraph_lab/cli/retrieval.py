"""`python -m cragraph_lab eval retrieval`: R@k, AllGold@5, MRR and latency per retrieval mode over benchmark sets
(cragraph_lab/retrieval.py), and `--ablate` (cragraph_lab/ablation.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_eval_retrieval(targets: Any) -> argparse.ArgumentParser:
    """Add `retrieval` to the `eval` subparsers."""
    retrieval = targets.add_parser("retrieval", help="R@k, AllGold@5, MRR and latency per retrieval mode")
    retrieval.add_argument("--dataset", required=True, action="append",
                           help="folder with questions.jsonl and corpus.jsonl (repeatable)")
    retrieval.add_argument("--ablate", default="",
                           help="comma-separated techniques to flip against the defaults, in one run: "
                                "entities, multi_query, prf, query_class_alpha, query2doc, hyde, metadata_boost "
                                "(replaces --modes)")
    retrieval.add_argument("--chat-model", default="", help="chat model for query2doc / hyde (default: embedded)")
    retrieval.add_argument("--modes", default="bm25,dense,hybrid",
                           help="comma-separated: bm25, dense, hybrid, hybrid-rrf|score|dynamic, multihop, "
                                "multihop-nograph, graph, router (default: %(default)s)")
    retrieval.add_argument("--embedder", default="e5-small")
    retrieval.add_argument("--limit", type=int, default=None, help="first N questions only")
    retrieval.add_argument("--out", type=Path, default=None, help="JSON report path")
    retrieval.add_argument("--index-root", type=Path, default=None,
                           help="where dataset indexes are kept (default: the user cache folder)")
    retrieval.add_argument("--backend", default="bundle",
                           help="comma-separated index backends to compare in one run, each mode on each: bundle, "
                                "milvus (our tokenizer's terms in Milvus' BM25), milvus-analyzer (Milvus' standard "
                                "analyzer over the raw text) (default: %(default)s)")
    retrieval.add_argument("--uri", default=None, metavar="URI",
                           help="Milvus for the milvus backends: a server (http://host:19530) or a Milvus Lite "
                                "file (default: one Lite file per dataset under --index-root)")
    retrieval.set_defaults(run=_eval_retrieval)
    return retrieval


def _eval_retrieval(args: argparse.Namespace) -> int:
    if args.ablate:
        from cragraph_lab.ablation import run_ablations

        ablate = [m.strip() for m in args.ablate.split(",") if m.strip()]
        run_ablations(args.dataset, ablate, embedder=args.embedder, limit=args.limit, out=args.out,
                      index_root=args.index_root, chat_model=args.chat_model)
        return 0
    from cragraph_lab.retrieval import run_retrieval_eval

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    backends = [b.strip() for b in args.backend.split(",") if b.strip()]
    for dataset in args.dataset:
        out = args.out if len(args.dataset) == 1 or args.out is None else \
            args.out.with_name(f"{args.out.stem}-{Path(dataset).name}{args.out.suffix}")
        run_retrieval_eval(dataset, modes, embedder=args.embedder, limit=args.limit, out=out,
                           index_root=args.index_root, backends=backends, uri=args.uri)
    return 0
