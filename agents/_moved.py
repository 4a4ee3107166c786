"""The one way an old import path of a module that moved under ``sorry_env`` stays working:
importing the old name warns once (a DeprecationWarning naming the new path) and gives the
moved module itself, so both names are one module object."""

import sys
import warnings
from types import ModuleType


def alias(old_name: str, moved: ModuleType) -> None:
    """Make module `old_name` (the caller's ``__name__``) the module `moved`."""
    warnings.warn(
        f"{old_name} moved to {moved.__name__}; import it from there",
        DeprecationWarning,
        stacklevel=3,  # the shim's importer, as the shim's own warnings.warn(stacklevel=2) did
    )
    sys.modules[old_name] = moved
