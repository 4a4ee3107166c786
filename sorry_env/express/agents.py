"""Sorry! Express's own agents (named by its ``GameType.agents_module``; the agents of every
registered game, ``random``, ``greedy`` and policy files, are in ``sorry_env.agents``):
``heuristic``, ``expectimax`` and ``montecarlo``, reached by the board game's spec names
through ``sorry_env.agents.make_agent(spec, game="express")``, and :func:`evaluation`, the
position ranking of the generic ``greedy``. All of them search with the compiled Express
engine (:mod:`sorry_env.express.engine`) on the :class:`sorry_env.agent.GameTurn`'s state,
whose dice generator is re-drawn, so no search can read the next rolls.

Greedy's ranking (:func:`evaluation`)
-------------------------------------
``greedy`` tries every legal action (one die at a time, so dice resolved earlier in the turn
count) and keeps the first, in action order, whose result ranks highest by, in this order: a
win of its own (a loss to another player's win ranks last), its home section count, its
largest holding of one colour (a Slide can make that its home section), its number of pawns,
and last the largest opponent home section (smaller is better).

Position score (:func:`seat_value`, :func:`seat_score`)
--------------------------------------------------------
Each seat's *value* is a hand-written estimate of how close it is to four pawns in its home
section:

- ``HOME_VALUE[h]`` for its home-section count ``h`` (convex: the fourth pawn wins);
- its best *Slide holding*: the largest number ``a`` of pawns of one colour it owns (not its
  base's) that a Slide could make its home section (with 2 or 3 players a colour no base
  has; with 4 players any colour, by a swap), worth ``slide * HOME_VALUE[a]`` when ``a > h``
  (a Slide shows on about a third of the rolls);
- ``supply`` for each pawn of its base's colour that it can still take (in the Start base or
  in another player's waiting area), since those are what its colour dice and Wilds bring;
- ``held`` for each pawn of its waiting area whose colour is another player's base colour
  (exposed to that player's colour dice and Wilds, but one that player cannot take from
  the Start base; measured, its sign hardly matters: docs/express.md);
- minus ``sorry`` for each home-section pawn beyond the first (another player's Sorry!
  takes one);
- ``pawns`` for each pawn it owns (greedy's tie-break, and denial).

The weights (``WEIGHTS``: slide, supply, held, sorry, pawns) sit on a flat optimum
(``experiments/agent_weights.py --game express``): only a large Slide weight changes the play much,
for the worse.

A seat's *score* is its value minus the largest value among the other players, so taking
a pawn from the leader counts twice. A won game is ``+WIN`` for the winner and ``-WIN`` for
the others.

Agents
------
- ``heuristic``: plays the legal die choice whose resulting position scores best (one die
  at a time; a Slide that hands another player the win scores ``-WIN``).
- ``expectimax:depth=2,model_others=1``: depth-limited expectimax over whole turns. Depth 1
  searches every order and choice of this turn's dice left (max over the mover's choices)
  and scores the end of the turn. Each further level takes the expectation over the next
  player's roll: the distinct multisets of three faces (:data:`ROLLS`, 76 of them, each
  with its chance from the 216 ordered outcomes), then that player's turn. With
  ``model_others=1`` the other players play their turn the heuristic's way (one die at a
  time) instead of being searched (much cheaper). Every node carries one score per seat
  (max-n), so each player maximizes its own score.
- ``montecarlo:iterations=200,rollout_plies=0,epsilon=0.1``: flat Monte Carlo. In each of
  about ``iterations`` sampled worlds (a seed for the dice) every root choice is played out
  with the same dice (common random numbers) by an epsilon-greedy heuristic player for
  every seat (``epsilon=1``: uniformly random play), for ``rollout_plies`` dice (0: to the
  end of the game), and scores 1 for a win, 0 for a loss, else the heuristic score read as
  a chance of winning. The choice with the best mean wins.
"""

import numpy as np
from numba import njit

from ..agent import Agent, ChoosingAgent, GameTurn
from . import engine as E
from .express_game import roll_outcomes
from .game import DEFAULT_MAX_TURNS, GAME_TYPE

WIN = 1000.0
HOME_VALUE = np.array([0.0, 10.0, 22.0, 38.0, WIN])
HOME_VALUE.setflags(write=False)
# Weights of the position score (see the module docstring): slide, supply, held, sorry, pawns.
WEIGHTS = np.array([0.1, 0.5, 2.0, 0.5, 2.0])
WEIGHTS.setflags(write=False)
WEIGHT_NAMES = ("slide", "supply", "held", "sorry", "pawns")
# The values experiments/agent_weights.py tries for each weight (docs/express.md).
WEIGHT_TRIALS = {
    "slide": (0.0, 0.3, 1.0),
    "supply": (0.0, 1.5, 3.0),
    "held": (-2.0, 0.0, 1.0, 4.0),
    "sorry": (0.0, 1.5, 3.0),
    "pawns": (0.0, 1.0, 4.0),
}
SEED_RANGE = 1 << 31


def _distinct_rolls():
    """(faces per roll (K, 7) counts, chance of each): the distinct outcomes of one roll
    (:func:`sorry_env.express.express_game.roll_outcomes`, as arrays for compiled code)."""
    outcomes = roll_outcomes()
    rolls = np.array([faces for _, faces, _ in outcomes], dtype=np.int64)
    chances = np.array([chance for _, _, chance in outcomes])
    rolls.setflags(write=False)
    chances.setflags(write=False)
    return rolls, chances


ROLLS, ROLL_CHANCES = _distinct_rolls()


# ---- position score -----------------------------------------------------------------------
@njit(cache=True)
def seat_value(state, w, seat):
    """The hand-written value of `seat`'s position (module docstring), ignoring any win."""
    n = state[E.N_PLAYERS]
    base = state[E.BASES + seat]
    own = E.OWNED + seat * E.N_COLOURS
    h = state[own + base]
    value = HOME_VALUE[h]
    best_alt = 0
    for c in range(E.N_COLOURS):
        if c != base and state[own + c] > best_alt and (n == E.N_COLOURS or not E.colour_in_use(state, c)):
            best_alt = state[own + c]
    if best_alt > h:
        value += w[0] * HOME_VALUE[min(best_alt, 3)]
    supply = E.start_count(state, base)
    for other in range(n):
        if other != seat:
            supply += E.waiting_count(state, other, base)
    value += w[1] * supply
    for other in range(n):
        if other != seat:
            wanted = state[E.BASES + other]
            value += w[2] * state[own + wanted]
    if h > 1:
        value -= w[3] * (h - 1)
    pawns = 0
    for c in range(E.N_COLOURS):
        pawns += state[own + c]
    value += w[4] * pawns
    return value


@njit(cache=True)
def seat_scores(state, w, scores):
    """scores[seat] := each seat's score: ±WIN once the game is won, else its value minus the
    best other player's value (seats not in play: 0)."""
    n = state[E.N_PLAYERS]
    scores[:] = 0.0
    if state[E.WINNER] >= 0:
        for seat in range(n):
            scores[seat] = WIN if seat == state[E.WINNER] else -WIN
        return
    values = np.empty(n)
    for seat in range(n):
        values[seat] = seat_value(state, w, seat)
    for seat in range(n):
        best_other = -np.inf
        for other in range(n):
            if other != seat and values[other] > best_other:
                best_other = values[other]
        scores[seat] = values[seat] - best_other


@njit(cache=True)
def seat_score(state, w, seat):
    scores = np.empty(4)
    seat_scores(state, w, scores)
    return scores[seat]


@njit(cache=True)
def win_chance(score):
    """A score read as a chance of winning (a logistic squash; ±WIN gives 1 or 0)."""
    return 1.0 / (1.0 + np.exp(-score / 15.0))


@njit(cache=True)
def after_die_into(child, state, action):
    """child := state after resolving one die, with the win checked but the turn not ended
    (the dice left stay; they may all be useless)."""
    child[:] = state
    E.apply_die(child, action)
    E.check_win(child)


@njit(cache=True)
def heuristic_choice(state, w, legal, n):
    """The legal action (of legal[:n]) whose resulting position scores best for the mover;
    the first one on ties."""
    me = state[E.TO_MOVE]
    child = np.empty_like(state)
    best_action = legal[0]
    best = -np.inf
    for k in range(n):
        after_die_into(child, state, legal[k])
        score = seat_score(child, w, me)
        if score > best:
            best = score
            best_action = legal[k]
    return best_action


# ---- expectimax ---------------------------------------------------------------------------
@njit(cache=True)
def node_scores(state, w, turns_left, root, model_others, scores):
    """scores[seat] := each seat's expected score at `state`, searching `turns_left` more
    turn ends; returns the move the mover makes at a decision node (the first best for it),
    -1 elsewhere. `state` is a decision node (dice left, at least one playable), a finished
    game, or a chance node: the mover's turn just ended (no dice left; the next seat rolls).
    One self-recursive function: numba's cache cannot reload mutually recursive ones."""
    if state[E.WINNER] >= 0:
        seat_scores(state, w, scores)
        return -1
    scores[:] = 0.0
    child = np.empty_like(state)
    sub = np.empty(4)
    if state[E.DICE : E.DICE + E.N_FACES].sum() == 0:  # chance node: the next player's roll
        if turns_left == 0 or state[E.TURN] + 1 >= DEFAULT_MAX_TURNS:
            seat_scores(state, w, scores)
            return -1
        for r in range(ROLLS.shape[0]):
            child[:] = state
            # a roll with no useful die: that turn is over at once
            playable = E.pass_turn_rolled(child, ROLLS[r])
            node_scores(child, w, turns_left if playable else turns_left - 1, root, model_others, sub)
            scores += ROLL_CHANCES[r] * sub
        return -1
    me = state[E.TO_MOVE]
    legal = np.empty(E.N_ACTIONS, dtype=np.int64)
    n = E.legal_actions(state, legal)
    best = -np.inf
    chosen = -1
    for k in range(n):
        if model_others and me != root:
            action = heuristic_choice(state, w, legal, n)
        else:
            action = legal[k]
        child[:] = state
        E.apply_die(child, action)
        # a won game is scored at once, whatever turns are left
        node_scores(child, w, turns_left - 1 if E.end_move(child) else turns_left, root, model_others, sub)
        if sub[me] > best:
            best = sub[me]
            scores[:] = sub
            chosen = action
        if model_others and me != root:
            break
    return chosen


@njit(cache=True)
def expectimax_choice(state, w, legal, n, depth, model_others):
    """The legal action (of legal[:n], the decision's legal actions) with the best expected
    score for the mover after a `depth`-turn search (:func:`node_scores` of the decision); the
    first one on ties, and a winning one at once."""
    me = state[E.TO_MOVE]
    child = np.empty_like(state)
    for k in range(n):  # a win now: nothing later is worth more (or as sure)
        after_die_into(child, state, legal[k])
        if child[E.WINNER] == me:
            return legal[k]
    return node_scores(state, w, depth, me, model_others, np.empty(4))


# ---- Monte Carlo --------------------------------------------------------------------------
@njit(cache=True)
def rollout_value(world, w, me, plies, epsilon, buf):
    """Play out `world` (in place; the engine rolls from its generator) for `plies` dice (0:
    to the end) with an epsilon-greedy heuristic player; 1 for `me`'s win, 0 for a loss, else
    the heuristic score as a chance of winning."""
    done = 0
    while world[E.WINNER] < 0 and world[E.TURN] < DEFAULT_MAX_TURNS and (plies == 0 or done < plies):
        n = E.legal_actions(world, buf)
        if n == 1:
            action = buf[0]
        elif E.randint(world, 1 << 20) < epsilon * (1 << 20):
            action = buf[E.randint(world, n)]
        else:
            action = heuristic_choice(world, w, buf, n)
        E.step(world, action)
        done += 1
    if world[E.WINNER] >= 0:
        return 1.0 if world[E.WINNER] == me else 0.0
    return win_chance(seat_score(world, w, me))


@njit(cache=True)
def monte_carlo_choice(state, w, legal, n, seed, iterations, plies, epsilon):
    """The root choice (of legal[:n]) with the best mean playout result over the same sampled
    worlds, about `iterations` playouts in all; the first one on ties, and a winning one at once."""
    me = state[E.TO_MOVE]
    world = np.empty_like(state)
    for k in range(n):  # a win now: no playout can do better
        after_die_into(world, state, legal[k])
        if world[E.WINNER] == me:
            return legal[k]
    seeds = np.zeros(E.STATE_SIZE, dtype=np.int64)  # a generator for the worlds' seeds
    seeds[E.RNG] = seed & 0xFFFFFFFF
    totals = np.zeros(n)
    buf = np.empty(E.N_ACTIONS, dtype=np.int64)
    rounds = max(1, iterations // n)
    for _ in range(rounds):
        world_seed = E.randint(seeds, SEED_RANGE)
        for k in range(n):
            world[:] = state
            world[E.RNG] = world_seed
            E.step(world, legal[k])
            totals[k] += rollout_value(world, w, me, plies, epsilon, buf)
    return legal[np.argmax(totals)]


# ---- greedy's ranking -----------------------------------------------------------------------
# Lexicographic weights of the ranking: each term is at most 16, below the next weight.
GREEDY_WIN = 10**6


def evaluation(state: np.ndarray, seat: int) -> int:
    """How good `state` (after a move, before the next roll) is for `seat` by greedy's
    ranking (module docstring; higher is better): the generic ``greedy`` agent's evaluation."""
    w = int(state[E.WINNER])
    if w >= 0:
        return GREEDY_WIN if w == seat else -GREEDY_WIN
    own = state[E.OWNED + seat * E.N_COLOURS : E.OWNED + (seat + 1) * E.N_COLOURS]
    home = int(E.home_count(state, seat))
    rival = max(int(E.home_count(state, other)) for other in range(int(state[E.N_PLAYERS])) if other != seat)
    return home * 10_000 + int(own.max()) * 1_000 + int(own.sum()) * 10 - rival


# ---- agents -------------------------------------------------------------------------------
class SearchAgent(ChoosingAgent):
    """An Express agent that computes its choice (`choose`); a lone legal choice is played at
    once."""

    game_ids = (GAME_TYPE.id,)


class HeuristicAgent(SearchAgent):
    name = "heuristic"

    def __init__(self, seed: int | None = None):
        self.reset(seed)

    def choose(self, turn: GameTurn, legal: np.ndarray) -> int:
        return heuristic_choice(turn.state, WEIGHTS, legal, len(legal))


class ExpectimaxAgent(SearchAgent):
    name = "expectimax"

    def __init__(self, seed: int | None = None, depth: int = 2, model_others: int = 1):
        """depth: turns searched (1: this turn's dice left; each more: the next roll's
        expectation and that turn); model_others: 1 to let the other players play the
        heuristic's choices instead of searching theirs (0: search them too; much slower)."""
        if depth < 1 or model_others not in (0, 1):
            raise ValueError(
                f"expectimax needs depth >= 1 and model_others 0 or 1, got depth={depth!r}, "
                f"model_others={model_others!r}"
            )
        self.depth = int(depth)
        self.model_others = bool(model_others)
        self.reset(seed)

    def choose(self, turn: GameTurn, legal: np.ndarray) -> int:
        return expectimax_choice(turn.state, WEIGHTS, legal, len(legal), self.depth, self.model_others)


class MonteCarloAgent(SearchAgent):
    name = "montecarlo"

    def __init__(self, seed: int | None = None, iterations: int = 200, rollout_plies: int = 0, epsilon: float = 0.1):
        """iterations: playouts per decision (about); rollout_plies: dice per playout before
        the heuristic score takes over (0: play to the end); epsilon: chance of a uniformly
        random choice in a playout (1: random playouts)."""
        if iterations < 1 or rollout_plies < 0 or not 0 <= epsilon <= 1:
            raise ValueError(
                f"montecarlo needs iterations >= 1, rollout_plies >= 0 and 0 <= epsilon <= 1, got "
                f"iterations={iterations!r}, rollout_plies={rollout_plies!r}, epsilon={epsilon!r}"
            )
        self.iterations = int(iterations)
        self.rollout_plies = int(rollout_plies)
        self.epsilon = float(epsilon)
        self.reset(seed)

    def choose(self, turn: GameTurn, legal: np.ndarray) -> int:
        seed = int(self.rng.integers(0, SEED_RANGE))
        return monte_carlo_choice(
            turn.state, WEIGHTS, legal, len(legal), seed, self.iterations, self.rollout_plies, self.epsilon
        )


# The game's own agents by spec name (sorry_env.agents.make_agent(spec, game="express") adds
# the agents of every game: random, greedy over `evaluation`, policy files).
AGENTS: dict[str, type[Agent]] = {
    "heuristic": HeuristicAgent,
    "expectimax": ExpectimaxAgent,
    "montecarlo": MonteCarloAgent,
}
