"""Count the product's Python tokens, the measure issue 38's budget is written in.

The product is every ``.py`` file under the repository root outside tests/, benchmarks/,
experiments/, examples/, docs/, results/, build output and dot-folders (symlinks are not followed, so the
package's links to agents/ and training/ count once). Comments, blank lines, indentation
tokens and string statements (docstrings) are not counted: fewer tokens must come from less
code, not from shorter prose.

    python benchmarks/product_tokens.py            # the total
    python benchmarks/product_tokens.py --files 30 # and the 30 largest files
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = {"tests", "benchmarks", "experiments", "examples", "docs", "results", "build", "dist"}
SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def file_tokens(path: Path) -> int:
    """Tokens of one file, docstrings and other string statements left out."""
    count = 0
    statement_start = True  # the next token begins a statement
    pending_strings = 0  # string tokens seen since the statement began
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type in SKIPPED:
            if token.type == tokenize.NEWLINE:
                statement_start, pending_strings = True, 0
            continue
        if token.type == tokenize.STRING and (statement_start or pending_strings):
            pending_strings += 1  # maybe a string statement: counted only if more follows
            statement_start = False
            continue
        count += 1 + pending_strings
        pending_strings, statement_start = 0, token.type == tokenize.OP and token.string == ";"
    return count


def product_files(root: Path = ROOT) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d != "__pycache__"
            and not (here == root and d in OUTSIDE)
            and not (here / d).is_symlink()
        )
        found += [here / name for name in sorted(files) if name.endswith(".py") and not (here / name).is_symlink()]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=0, help="also list the N files with the most tokens")
    args = parser.parse_args(argv)
    counts = {path.relative_to(ROOT): file_tokens(path) for path in product_files()}
    for path, count in sorted(counts.items(), key=lambda item: -item[1])[: args.files]:
        print(f"{count:7,d}  {path}")
    print(f"{sum(counts.values()):,d} tokens in {len(counts)} files (issue 38's budget: 145,419)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
