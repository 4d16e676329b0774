"""`python -m warpweave` and the `warpweave` command (the console script calls `run`).

The command's modules take a second or two to load; a Ctrl-C in that time is answered as at any
other moment (one line, exit status 3), not with a traceback from whatever module was loading;
so is one while `main` parses the arguments and loads the command's modules.  Only a Ctrl-C in
the interpreter's own start (its `site` imports, the first tenth of a second or so, before any
warpweave code runs) is answered by Python itself.
Once the command has answered, the process leaves at once (exit handlers run, output flushed):
the interpreter's teardown - freeing numpy, pandas and OR-Tools, which the CP-SAT backend loads -
takes 0.2-0.4 s more on a loaded machine, a third of the second a Ctrl-C may take to end a run.
"""

import atexit
import contextlib
import os
import sys
from typing import NoReturn


def run() -> NoReturn:
    try:
        from warpweave.cli import main
        code = main()  # a Ctrl-C while it parses and loads the command's modules lands here
    except KeyboardInterrupt:
        print("warpweave: interrupted", file=sys.stderr)
        code = 3
    atexit._run_exitfuncs()  # what a normal exit would run before the teardown
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing to say
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
