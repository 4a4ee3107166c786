"""Rule configurations: one dataclass, named presets, and the flat array the engine reads.

Every rule option is a field of :class:`Rules`; the compiled engine reads the same options
from ``Rules.array()`` so that there is one implementation of the game, not one per variant.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

# Cards played before a game is called a draw (truncated): the env's default, the search
# agents' playout horizon and the tournaments' default all read this one number.
DEFAULT_MAX_TURNS = 2000
# The rules every game, env, tournament and command plays unless told otherwise.
DEFAULT_PRESET = "hasbro2003"

# Card indices used everywhere (engine, observation, state dicts).
CARD_NAMES = ("1", "2", "3", "4", "5", "7", "8", "10", "11", "12", "SORRY")
N_CARDS = len(CARD_NAMES)
CARD_INDEX = {name: i for i, name in enumerate(CARD_NAMES)}
C1, C2, C3, C4, C5, C7, C8, C10, C11, C12, CSORRY = range(N_CARDS)

# Packs, as counts per card index.
PACK_2003 = (5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4)  # 45 cards: five 1s (Hasbro 2003)
PACK_1958 = (4,) * N_CARDS  # 44 cards: four of each (Parker 1958, without the optional extra 1)
PACK_1996 = (5,) * N_CARDS  # 55 cards: five of each (Waddingtons 1996)
MAX_PACK = 5 * N_CARDS

# Team rule sets (partnerships: seats 0+2 against 1+3).
TEAMS = {"none": 0, "parker1958": 1, "hasbro2003": 2}
TEAMS_NONE, TEAMS_PARKER1958, TEAMS_HASBRO2003 = 0, 1, 2

# End-of-game point systems (see sorry_env.board.scoring).
SCORING = ("none", "hasbro2003", "parker1939")

# Layout of the rules array handed to the compiled engine.
R_PAWNS = 0  # pawns per player
R_TWO_DRAWS_AGAIN = 1
R_START_CARDS = 2  # bit c set: card c may start a pawn
R_SORRY_FORWARD = 3  # 0, or the forward distance a Sorry! may be used for instead (2013: 4)
R_FAST_PLAY = 4
R_TEAMS = 5  # TEAMS_NONE, TEAMS_PARKER1958 or TEAMS_HASBRO2003
R_HAND_SIZE = 6  # 0: draw a card each turn; 5: play for points with hands
R_PACK = 7  # N_CARDS counts
R_PACK_SIZE = R_PACK + N_CARDS
R_FIRE_ICE = R_PACK_SIZE + 1  # 1: the 2013 Fire and Ice power-ups (docs/rules.md)
N_RULES = R_FIRE_ICE + 1


def _short(value, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}..."


def _is_integer(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _checked_pack(pack) -> tuple[int, ...]:
    """A Rules' pack as a tuple of ints: 0..5 copies of each card, not all zero."""
    if (
        isinstance(pack, (str, bytes))
        or not hasattr(pack, "__len__")
        or len(pack) != N_CARDS
        or not all(_is_integer(c) and 0 <= c <= 5 for c in pack)
    ):
        raise ValueError(f"pack must give 0..5 copies (integers) of each of {CARD_NAMES}, got {_short(pack)}")
    if sum(int(c) for c in pack) == 0:
        raise ValueError("pack is empty")
    return tuple(int(c) for c in pack)


def _checked_start_cards(starts) -> tuple[str, ...]:
    """A Rules' start cards as a tuple: card names (not Sorry!), at least one, none twice."""
    if isinstance(starts, (str, bytes)) or not isinstance(starts, (tuple, list)) or not starts:
        raise ValueError(f"start_cards must be a non-empty tuple of card names, got {_short(starts)}")
    unknown = [c for c in starts if not isinstance(c, str) or c not in CARD_INDEX or c == "SORRY"]
    if unknown:
        raise ValueError(f"start_cards: {_short(unknown)} cannot start a pawn; choose from {CARD_NAMES[:-1]}")
    if len(set(starts)) != len(starts):
        raise ValueError(f"start_cards lists a card twice: {tuple(starts)}")
    return tuple(starts)


@dataclasses.dataclass(frozen=True)
class Rules:
    """One complete rules configuration. Use a preset from :data:`PRESETS` or
    ``dataclasses.replace(preset, field=value)`` for a custom one."""

    name: str = DEFAULT_PRESET
    pawns_per_player: int = 4
    pack: tuple = PACK_2003
    two_draws_again: bool = True
    start_cards: tuple = ("1", "2")
    sorry_forward: int = 0
    fast_play: bool = False
    teams: str = "none"
    hand_size: int = 0
    scoring: str = "none"
    fire_ice: bool = False

    def __post_init__(self):
        # Checked when built, each mistake naming its field: a custom Rules reaches compiled
        # code, where a fractional count or a duplicate start card would silently mean something else.
        if not isinstance(self.name, str):
            raise ValueError(f"name must be text, got {type(self.name).__name__}")
        if not _is_integer(self.pawns_per_player) or self.pawns_per_player not in (3, 4):
            raise ValueError(f"pawns_per_player must be 3 or 4, got {self.pawns_per_player!r}")
        object.__setattr__(self, "pack", _checked_pack(self.pack))
        for field in ("two_draws_again", "fast_play", "fire_ice"):
            if not isinstance(getattr(self, field), bool):
                raise ValueError(f"{field} must be True or False, got {getattr(self, field)!r}")
        object.__setattr__(self, "start_cards", _checked_start_cards(self.start_cards))
        if not isinstance(self.teams, str) or self.teams not in TEAMS:
            raise ValueError(f"teams must be one of {sorted(TEAMS)}, got {_short(self.teams)}")
        if not _is_integer(self.hand_size) or self.hand_size not in (0, 5):
            raise ValueError(f"hand_size must be 0 (no hands) or 5 (play for points), got {self.hand_size!r}")
        if self.hand_size and sum(self.pack) <= 4 * self.hand_size:
            raise ValueError(
                f"hand_size {self.hand_size}: four hands need more than {4 * self.hand_size} cards, "
                f"the pack has {sum(self.pack)}"
            )
        if not isinstance(self.scoring, str) or self.scoring not in SCORING:
            raise ValueError(f"scoring must be one of {SCORING}, got {_short(self.scoring)}")
        if not _is_integer(self.sorry_forward) or self.sorry_forward not in (0, 4):
            raise ValueError(f"sorry_forward must be 0 (off) or 4, got {self.sorry_forward!r}")
        # Fire and Ice come with the 2013 edition, which has neither partnerships nor hands:
        # the token choices are defined for one player's own pawns and one card in play.
        if self.fire_ice and (self.teams != "none" or self.hand_size):
            raise ValueError("fire_ice needs teams='none' and hand_size=0 (the 2013 edition has neither)")

    def array(self) -> np.ndarray:
        a = np.zeros(N_RULES, dtype=np.int64)
        a[R_PAWNS] = self.pawns_per_player
        a[R_TWO_DRAWS_AGAIN] = int(self.two_draws_again)
        a[R_START_CARDS] = sum(1 << CARD_INDEX[c] for c in self.start_cards)
        a[R_SORRY_FORWARD] = self.sorry_forward
        a[R_FAST_PLAY] = int(self.fast_play)
        a[R_TEAMS] = TEAMS[self.teams]
        a[R_HAND_SIZE] = self.hand_size
        a[R_PACK : R_PACK + N_CARDS] = self.pack
        a[R_PACK_SIZE] = sum(self.pack)
        a[R_FIRE_ICE] = int(self.fire_ice)
        return a


NUMBER_CARDS = CARD_NAMES[:-1]

PRESETS = {
    "hasbro2003": Rules(),
    "hasbro2003_fast": Rules(name="hasbro2003_fast", fast_play=True),
    "hasbro2003_teams": Rules(name="hasbro2003_teams", teams="hasbro2003"),
    "parker1958": Rules(name="parker1958", pack=PACK_1958),
    "parker1958_teams": Rules(name="parker1958_teams", pack=PACK_1958, teams="parker1958"),
    "waddingtons1996": Rules(name="waddingtons1996", pack=PACK_1996),
    # Play for points: five-card hands, scored at the end (Hasbro 2003 sheet; the 1939
    # point-scoring variant from the Wikipedia text, with the original four-of-each pack).
    "hasbro2003_points": Rules(name="hasbro2003_points", hand_size=5, scoring="hasbro2003"),
    "parker1939_points": Rules(name="parker1939_points", pack=PACK_1958, hand_size=5, scoring="parker1939"),
    # 2013 edition: three pawns, any number card starts a pawn, a Sorry! may instead move a
    # pawn 4 forward, a 2 does not draw again (Wikipedia). Fire and Ice are left out.
    "hasbro2013": Rules(
        name="hasbro2013", pawns_per_player=3, start_cards=NUMBER_CARDS, sorry_forward=4, two_draws_again=False
    ),
    # ... with the Fire and Ice power-ups (issue 14; docs/rules.md, "Fire and Ice").
    "hasbro2013_fire_ice": Rules(
        name="hasbro2013_fire_ice",
        pawns_per_player=3,
        start_cards=NUMBER_CARDS,
        sorry_forward=4,
        two_draws_again=False,
        fire_ice=True,
    ),
}


def get_rules(rules) -> Rules:
    """A :class:`Rules` from a preset name or a Rules instance."""
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        if rules not in PRESETS:
            raise ValueError(f"unknown rules preset {rules!r}; presets: {sorted(PRESETS)}")
        return PRESETS[rules]
    raise TypeError(f"rules must be a preset name or a Rules, got {type(rules).__name__}")


# Fields a file written before they existed leaves out; their default is what that older code
# played (v0 policy files have no fire_ice: Fire and Ice did not exist).
FIELDS_ADDED_LATER = ("fire_ice",)


def rules_to_json(rules: Rules | str) -> dict:
    """The one JSON form of a rules configuration (what policy files and replays store):
    every field of :class:`Rules`, tuples as lists."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(get_rules(rules)).items()}


def rules_from_json(data: object, where: str = "rules") -> Rules:
    """The Rules of their JSON form, with one set of checks for every reader: an object with
    exactly the fields of :class:`Rules` (one of FIELDS_ADDED_LATER may be missing), each
    valid. ValueError naming `where` and the problem otherwise."""
    fields = [f.name for f in dataclasses.fields(Rules)]
    if not isinstance(data, dict):
        raise ValueError(f"{where}: 'rules' must be an object of the fields {fields}, got {_short(data, 200)}")
    missing = sorted(set(fields) - set(data) - set(FIELDS_ADDED_LATER))
    unknown = sorted(set(data) - set(fields), key=str)
    if missing or unknown:
        raise ValueError(
            f"{where}: 'rules' must have exactly the fields {fields} (older files may leave out "
            f"{list(FIELDS_ADDED_LATER)}); missing {missing}, unknown {_short(unknown, 200)}"
        )
    try:
        fields_given: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        return Rules(**fields_given)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: its rules are not valid ({str(error)[:200]})") from None
