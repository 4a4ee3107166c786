"""End-of-game points for the play-for-points variants.

- ``hasbro2003`` (Hasbro 2003 sheet, "Play for points"): every player scores 5 per pawn Home.
  The winner also scores 5 per opponent pawn not Home, plus ONE bonus: 100 if no opponent
  pawn reached Home, else 50 if no opponent has more than one Home, else 25 if no opponent
  has more than two Home. (The sheet lists the three bonuses; we read them as the highest
  that applies, as the 1939 rules state explicitly for theirs.)
- ``parker1939`` (the 1939 point-scoring variant, as the Wikipedia text gives it): every
  player scores 1 per man Home; the winner also scores 1 for every man the opponents got
  Home, plus a bonus of 24 if no opponent has a man Home, else 16 if none has more than one,
  else 8 if none has more than two.
"""

from . import engine as E
from .geometry import HOME, N_SEATS
from .rules import get_rules

_SYSTEMS = {
    # per pawn Home, winner per opponent pawn (not Home / Home), bonuses for max opponent Home 0/1/2
    "hasbro2003": (5, 5, "not_home", (100, 50, 25)),
    "parker1939": (1, 1, "home", (24, 16, 8)),
}


def scores(state, rules) -> dict:
    """{seat: points} of a finished game under the rules' scoring system."""
    r = get_rules(rules)
    if r.scoring not in _SYSTEMS:
        raise ValueError(f"rules {r.name!r} have no scoring system (scoring={r.scoring!r})")
    winner = int(state[E.WINNER])
    if winner < 0:
        raise ValueError("the game is not over")
    per_home, per_opponent_pawn, counted, bonuses = _SYSTEMS[r.scoring]
    ppp = r.pawns_per_player
    seats = [s for s in range(N_SEATS) if state[E.ACTIVE + s]]
    home = {s: sum(int(state[E.PAWNS + s * E.MAX_SLOTS + i] == HOME) for i in range(ppp)) for s in seats}
    points = {s: per_home * home[s] for s in seats}
    opponents = [s for s in seats if s != winner]
    counted_pawns = sum((ppp - home[s]) if counted == "not_home" else home[s] for s in opponents)
    points[winner] += per_opponent_pawn * counted_pawns
    most_home = max(home[s] for s in opponents)
    if most_home <= 2:
        points[winner] += bonuses[most_home]
    return points


def max_points(rules, num_players: int) -> int:
    """The most points one player can score in a game of `num_players` (every own pawn Home,
    every opponent pawn counted, the highest bonus): an upper bound for the rules' scoring."""
    r = get_rules(rules)
    if r.scoring not in _SYSTEMS:
        raise ValueError(f"rules {r.name!r} have no scoring system (scoring={r.scoring!r})")
    per_home, per_opponent_pawn, _, bonuses = _SYSTEMS[r.scoring]
    ppp = r.pawns_per_player
    return per_home * ppp + per_opponent_pawn * ppp * (num_players - 1) + max(bonuses)
