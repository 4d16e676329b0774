"""The `warpweave` command, a thin layer over the Python API (`warpweave.api`):

- `parser`: every command's arguments and options (shared options stated once, defaults from
  `warpweave.defaults`); it imports nothing heavy, so `warpweave --help` is fast;
- `commands`: one function per command: arguments in, an API call, the renderer's text (or the
  result's JSON with --json) out, the exit status returned;
- `render`: the readable text of each result.

Exit status: 0 success, 1 a negative answer (violations, no schedule), 2 bad input (one line
naming the file, key path and value), 3 a limit (a time limit, Ctrl-C) reached before the answer
was complete, 4 a bug (a solver's schedule failed verification: the IR saved to replay it).
"""

from __future__ import annotations

import sys

from warpweave.cli.parser import build_parser

EXIT_OK, EXIT_NO, EXIT_INPUT, EXIT_LIMIT = 0, 1, 2, 3
EXIT_BUG = 4  # a backend's schedule failed verification: a bug, its IR saved to replay
WHOLE_RUN_LIMIT = {"solve", "heuristic", "emit", "simulate", "draw"}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    # key=value kernel parameters may follow options (`build gemm --machine b200 k_steps=4`);
    # argparse leaves such late positionals over, so they are collected here.
    args, extra = parser.parse_known_args(argv)
    if extra:
        if hasattr(args, "params") and all("=" in x and not x.startswith("-") for x in extra):
            args.params = [*args.params, *extra]
        else:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_INPUT
    from warpweave import limits
    from warpweave.errors import InputError
    from warpweave.search import SearchBug
    # --time-limit bounds the whole command where it is the run's limit (loading the model,
    # the bounds, normalization, the search); crosscheck's is per run, bench's per case.
    seconds = getattr(args, "time_limit", None) if args.command in WHOLE_RUN_LIMIT else None
    try:
        from warpweave.cli.commands import COMMANDS, check_arguments
        check_arguments(args)
        with limits.within(seconds), limits.latch_interrupts():
            return COMMANDS[args.command](args)
    except InputError as exc:
        print(f"warpweave: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except SearchBug as exc:
        print(f"warpweave: bug: {exc}", file=sys.stderr)
        return EXIT_BUG
    except limits.TimeUp as exc:  # outside a search, which answers with what it has
        print(f"warpweave: {exc}", file=sys.stderr)
        return EXIT_LIMIT
    except KeyboardInterrupt:
        print("warpweave: interrupted", file=sys.stderr)
        return EXIT_LIMIT
    except BrokenPipeError:
        return EXIT_OK
