"""`python -m cragraph_lab web-standin`: a Tavily-compatible search server over a corpus of its own,
on a loopback address.

Point the agent at it with CRAGRAPH_WEB__BASE_URL=URL (or TAVILY_BASE_URL) and any TAVILY_API_KEY (the one given
with --api-key when there is one): the web branch then searches this corpus offline, through tavily-python.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(commands: argparse._SubParsersAction) -> None:
    standin = commands.add_parser(
        "web-standin",
        help="serve a corpus as a Tavily-compatible search API on 127.0.0.1 (the web branch's offline stand-in)",
    )
    standin.add_argument("--corpus", type=Path, required=True,
                         help="JSONL of {id, title, text, url?} records, or a dataset folder holding corpus.jsonl")
    standin.add_argument("--port", type=int, default=0, help="port to listen on (default 0: a free one, printed)")
    standin.add_argument("--host", default="127.0.0.1",
                         help="loopback address to listen on: 127.0.0.0/8, ::1 or localhost (default: %(default)s)")
    standin.add_argument("--api-key", default=None,
                         help="require this key (Authorization: Bearer KEY, as tavily-python sends it); "
                              "default: accept any")
    standin.set_defaults(run=run_web_standin)


def run_web_standin(args: argparse.Namespace) -> int:
    from cragraph_lab.web_standin import WebStandin, is_loopback_host

    if not is_loopback_host(args.host):
        raise ValueError(f"--host {args.host!r} is not a loopback address: the web stand-in only listens on "
                         "127.0.0.0/8, ::1 or localhost")
    try:
        server = WebStandin(args.corpus, host=args.host, port=args.port, api_key=args.api_key)
    except OSError as error:
        if isinstance(error, FileNotFoundError):
            raise
        raise ValueError(f"cannot listen on {args.host}:{args.port} ({error.strerror or error})") from error
    key_note = "the key given with --api-key" if args.api_key else "any key"
    print(f"web stand-in: {len(server.records)} passages at {server.url} (POST /search, {key_note}); "
          "Ctrl-C stops", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("web stand-in stopped", file=sys.stderr)
    return 0
