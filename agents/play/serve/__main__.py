"""python -m sorry_env.agents.play.serve: the same as sorry-serve."""

import sys

from . import main

if __name__ == "__main__":  # the search workers are spawned: they import this module as __mp_main__
    sys.exit(main())
