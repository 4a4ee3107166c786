"""python -m agents.serve: the same as sorry-serve."""

import sys

from . import main

sys.exit(main())
