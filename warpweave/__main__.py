"""`python -m warpweave`: the `warpweave` command."""

import sys

from warpweave.cli import main

sys.exit(main())
