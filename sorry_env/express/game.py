"""Sorry! Express as plain Python functions: create a state, list legal actions, apply one to
a copy, name things. Agents, tournaments and tests use these; the PettingZoo env is a thin
adapter over the same compiled functions in :mod:`sorry_env.express.engine`.

No function mutates its input state unless its name says ``_inplace``.

Example::

    from sorry_env.express import game
    s = game.new_state(num_players=3, seed=7)
    moves = game.legal_actions(s)
    s2 = game.step(s, moves[0])        # the next roll comes from the state's generator
    game.describe_action(s, moves[0])  # 'Red die: take a Red pawn from the Start base'
"""

import numpy as np

from ..board.game import check_seed
from ..board.render import COLOUR_NAMES
from ..checks import is_integer
from ..games import GameType, PolicyFile, check_first_seat
from . import engine as E

# The turn limit of the Express env and tournaments: turns (rolls), not dice. Random play
# lasts 9.5 (2 players) to 19.6 (4 players) turns on average (docs/express.md), so 500 only
# stops a game that stalls.
DEFAULT_MAX_TURNS = 500
FACE_NAMES = COLOUR_NAMES + ("Wild", "Slide", "Sorry!")
PLAYER_COUNTS = (2, 3, 4)
VARIANT = "standard"  # Express has one rule set

# The env version, by the rule of docs/versioning.md: the N of ``sorry_env/express-vN``. It goes
# up whenever the game's behaviour or a layout (observation, actions, state array) changes;
# policy files record the layout name (GAME_TYPE.layout_name) and are refused under another.
ENV_VERSION = 0

# Every fact of the game, once: what the registry (sorry_env.games), the env, agents,
# tournaments and policy files read (registered by sorry_env.express.express_game).
GAME_TYPE = GameType(
    id="express",
    long_name="Sorry! Express",
    version=ENV_VERSION,
    env_id=f"sorry_env/express-v{ENV_VERSION}",
    env_name=f"sorry_express_v{ENV_VERSION}",
    env_entry_point="sorry_env.express.env:env",
    player_counts=PLAYER_COUNTS,
    seat_names=tuple(f"player_{seat}" for seat in range(max(PLAYER_COUNTS))),
    seat_colours=COLOUR_NAMES,  # seat k's home base starts as colour k
    num_actions=E.N_ACTIONS,
    observation_size=E.OBS_SIZE,
    max_turns=DEFAULT_MAX_TURNS,
    policy_format="sorry_express_policy",
    variants=(VARIANT,),
    turn_unit="rolls",
    agents_module="sorry_env.express.agents",
    # training.game_ppo's 2-player policy (docs/express.md has its command).
    policy_files=(PolicyFile("express-2p", VARIANT, 2, "express-2p.safetensors"),),
)


def new_state(num_players=4, seed=0, first=None) -> np.ndarray:
    """A new game: every pawn in the Start base, seat k's base of colour k, the first roll
    made. `first` is the seat to move first (default: drawn from `seed`, a non-negative
    integer used modulo 2**32)."""
    n = GAME_TYPE.check_players(num_players)
    check_seed(seed)
    first = check_first_seat(first, tuple(range(n)))
    state = np.zeros(E.STATE_SIZE, dtype=np.int64)
    E.init_state(state, n, -1 if first is None else first, int(seed) & 0xFFFFFFFF)
    return state


def _require_running(state):
    if state[E.WINNER] >= 0:
        raise ValueError(f"the game is over (seat {int(state[E.WINNER])} won)")


def legal_mask(state) -> np.ndarray:
    _require_running(state)
    mask = np.zeros(E.N_ACTIONS, dtype=np.int8)
    E.legal_mask(state, mask)
    return mask


def legal_actions(state) -> np.ndarray:
    """Legal action indices, ascending."""
    _require_running(state)
    buf = np.empty(E.N_ACTIONS, dtype=np.int64)
    return buf[: E.legal_actions(state, buf)].copy()


def check_action(state, action) -> int:
    """`action` as an int if legal, else a ValueError naming it and the legal actions."""
    in_range = is_integer(action) and 0 <= action < E.N_ACTIONS
    if in_range and legal_mask(state)[action]:
        return int(action)  # the common case, without listing the legal actions
    legal = legal_actions(state).tolist()
    if not in_range:
        raise ValueError(f"action must be an integer in 0..{E.N_ACTIONS - 1}, got {action!r}; legal: {legal}")
    raise ValueError(
        f"action {action} ({describe_action(state, action)}) is illegal with dice {dice(state)}; legal: {legal}"
    )


def step(state, action) -> np.ndarray:
    """A copy of `state` after the legal `action` (and, if that ends the turn, the next roll)."""
    s = state.copy()
    step_inplace(s, action)
    return s


def step_inplace(state, action) -> None:
    E.step(state, check_action(state, action))


# ---- reading a state ----------------------------------------------------------------------
def num_players(state) -> int:
    return int(state[E.N_PLAYERS])


def to_move(state) -> int:
    return int(state[E.TO_MOVE])


def winner(state):
    """Winning seat, or None while the game runs."""
    w = int(state[E.WINNER])
    return w if w >= 0 else None


def turn(state) -> int:
    """Turns (rolls) finished so far."""
    return int(state[E.TURN])


def dice(state) -> list:
    """Face names of the dice left to resolve this turn (face order)."""
    return [FACE_NAMES[f] for f in range(E.N_FACES) for _ in range(int(state[E.DICE + f]))]


def base_colour(state, seat) -> str:
    return COLOUR_NAMES[int(state[E.BASES + seat])]


def owned(state) -> np.ndarray:
    """(players, 4) array: pawns of each colour each seat owns."""
    n = num_players(state)
    return state[E.OWNED : E.OWNED + 4 * E.N_COLOURS].reshape(4, E.N_COLOURS)[:n].copy()


def start_base(state) -> np.ndarray:
    """Pawns of each colour in the Start base."""
    return np.array([E.start_count(state, c) for c in range(E.N_COLOURS)], dtype=np.int64)


def home_count(state, seat) -> int:
    """Pawns in `seat`'s home section (owned pawns of its base's colour)."""
    return int(E.home_count(state, seat))


# ---- actions ------------------------------------------------------------------------------
def decode_action(action) -> tuple:
    """(kind, colour, k, b1, b2) of an action index. kind: "colour" (take a `colour` pawn;
    k = 0 the Start base, else opponent k's waiting area), "wild" (same fields), "sorry"
    (opponent k's home section), "recolour" (base b1 takes `colour`), "swap" (bases b1 and
    b2 swap colours). k, b1, b2 count places after the mover in turn order; unused: -1."""
    a = int(action)
    if not 0 <= a < E.N_ACTIONS:
        raise ValueError(f"action {a} is out of range 0..{E.N_ACTIONS - 1}")
    if a < E.WILD0:
        return ("colour", *divmod(a - E.COLOUR0, 4), -1, -1)
    if a < E.SORRY0:
        return ("wild", *divmod(a - E.WILD0, 4), -1, -1)
    if a < E.RECOLOUR0:
        return "sorry", -1, a - E.SORRY0 + 1, -1, -1
    if a < E.SWAP0:
        b, c = divmod(a - E.RECOLOUR0, E.N_COLOURS)
        return "recolour", c, -1, b, -1
    b1, b2 = (int(x) for x in E.SWAP_PAIRS[a - E.SWAP0])
    return "swap", -1, -1, b1, b2


def describe_action(state, action) -> str:
    """Words for an action index in this state (for logs and errors)."""
    move_kind, colour, k, b1, b2 = decode_action(action)
    n = num_players(state)
    me = to_move(state)

    beyond = max(k, b1, b2)
    if beyond >= n:
        return f"{move_kind} action naming the player {beyond} places after the mover; there are only {n} players"

    def player(place):
        return f"player_{(me + place) % n}"

    def base(place):
        owner = "own" if place == 0 else f"{player(place)}'s"
        return f"{owner} base ({base_colour(state, (me + place) % n)})"

    if move_kind in ("colour", "wild"):
        die = f"{COLOUR_NAMES[colour]} die" if move_kind == "colour" else "Wild"
        source = "the Start base" if k == 0 else f"{player(k)}'s waiting area"
        return f"{die}: take a {COLOUR_NAMES[colour]} pawn from {source}"
    if move_kind == "sorry":
        return f"Sorry!: take a {base_colour(state, (me + k) % n)} pawn from {player(k)}'s home section"
    if move_kind == "recolour":
        return f"Slide: {base(b1)} becomes {COLOUR_NAMES[colour]}"
    return f"Slide: swap the colours of {base(b1)} and {base(b2)}"


def render_text(state) -> str:
    """The position as text (the env's ``render()``)."""
    n = num_players(state)
    own = owned(state)
    w = winner(state)
    if w is None:
        head = f"turn {turn(state)}: player_{to_move(state)} to move, dice left: {', '.join(dice(state))}"
    else:
        head = f"turn {turn(state)}: player_{w} won"
    start = start_base(state)
    lines = [head, "Start base: " + "  ".join(f"{COLOUR_NAMES[c]} {start[c]}" for c in range(E.N_COLOURS))]
    for seat in range(n):
        home = int(state[E.BASES + seat])
        waiting = (
            ", ".join(f"{COLOUR_NAMES[c]} {own[seat, c]}" for c in range(E.N_COLOURS) if c != home and own[seat, c])
            or "empty"
        )
        lines.append(
            f"player_{seat}: {COLOUR_NAMES[home]} base, home section {own[seat, home]}/4, waiting area: {waiting}"
        )
    return "\n".join(lines)
