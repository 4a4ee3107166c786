"""The 32-bit random generator every compiled engine keeps in its state (the board game's, the
other registered games', and the compiled opponents' of sorry_env.vector_opponents): a linear congruential
step and an output hash, written once. The hash hides the weak low bits of the raw sequence."""

from numba import njit

LCG_MULTIPLIER = 1664525  # Numerical Recipes' 32-bit LCG
LCG_INCREMENT = 1013904223
MASK32 = 0xFFFFFFFF


@njit(cache=True)
def advance(word):
    """The generator's next state after `word`."""
    return (word * LCG_MULTIPLIER + LCG_INCREMENT) & MASK32


@njit(cache=True)
def mix(word):
    """The 32 output bits of a generator state (a murmur-style finaliser)."""
    z = word ^ (word >> 16)
    z = (z * 0x7FEB352D) & MASK32
    z ^= z >> 15
    z = (z * 0x846CA68B) & MASK32
    return z ^ (z >> 16)
