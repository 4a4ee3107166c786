"""python -m sorry_env.agents.play: the same as sorry-play."""

import sys

from .terminal import main

sys.exit(main())
