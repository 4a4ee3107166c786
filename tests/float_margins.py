"""When comparing the moves of two float computations is sound on every CPU.

Two code paths of the same network (a batch and one row, torch and numba, sb3's module and
the loaded policy) add the same products in other orders, and the BLAS kernel the CPU gets
(OpenBLAS's Haswell, Zen or SkylakeX; MKL's AVX2 or AVX-512; torch's ATEN_CPU_CAPABILITY)
picks the order. Their scores then differ by float32 rounding: a few ulps of the largest
partial sums, measured at most 2.4e-7 on logits below 2 in magnitude (tests/test_azsearch.py's
value network, 1502 afterstates, every kernel this machine has). A move is the same on every
CPU where the best score beats the second by more than twice that noise, or where they are
equal (two moves to the same position: one input row, one score, in any path; the lowest
action wins, argmax's rule, in the search and the network agent alike). Tests compare moves
there, and check that such positions are most of what they look at (issue 36).
"""

import numpy as np

# A bound on the rounding gap between two float32 code paths of one network's score: 400
# times the largest measured, and below any difference in scores that means anything.
TOLERANCE = 1e-4


def top_two_gap(scores) -> float:
    """The best finite score minus the second best (inf with fewer than two finite scores)."""
    finite = np.sort(np.asarray(scores, dtype=np.float64)[np.isfinite(scores)])
    return float(finite[-1] - finite[-2]) if len(finite) >= 2 else float("inf")


def near_tie(gap: float) -> bool:
    """True for a top-two gap float rounding could open, close or reverse: not zero (an exact
    tie is two moves to one position, decided by the lowest action) and within twice the bound."""
    return 0.0 < gap <= 2 * TOLERANCE


def decisive(scores) -> bool:
    """True where the best move does not depend on float rounding (not a near tie)."""
    return not near_tie(top_two_gap(scores))
