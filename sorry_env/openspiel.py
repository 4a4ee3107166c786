"""Sorry! as an OpenSpiel game: ``import sorry_env.openspiel`` registers ``python_sorry``.

::

    import pyspiel
    import sorry_env.openspiel  # registers the game

    game = pyspiel.load_game("python_sorry", {"players": 4, "rules": DEFAULT_PRESET})

Parameters: ``players`` (2, 3 or 4; the env's default seats), ``rules`` (a preset name,
``sorry_env.PRESETS``), ``max_turns`` (cards played before the game is a draw; default
:data:`sorry_env.board.rules.DEFAULT_MAX_TURNS`), ``reward`` (``"win"``: +1 to the winner's side,
-1 to the others; ``"points"``: the rules' end-of-game points, play-for-points presets only).

Every random event is a chance node with its probabilities, in the order the game has them:
the first player (uniform over the seats, outcome = the player id), then each card drawn
(outcome = the card index of :data:`sorry_env.board.rules.CARD_NAMES`, probability = its share of
the draw pile; an empty pile is the discards about to be reshuffled). With hands (play for
points) the initial deal is one chance node per card, seat by seat, and a player's
replacement card is a chance node right after the move. Player ids 0..n-1 are the seats in
play in seat order (2 players: seats 0 and 2). Player actions and their ids are the env's
(:mod:`sorry_env.board.engine`, docs/action-space.md).

The game type is imperfect information (one registration covers every preset; ISMCTS needs
that type): without hands no decision depends on anything hidden (every draw is a chance
node), with hands the other players' hands are private. ``observation_tensor(p)`` is the
env's observation of player p (:mod:`sorry_env.board.observation`, 1184 floats), which already
counts other hands as unseen; ``information_state_tensor(p)`` is the same vector and
``information_state_string(p)`` the engine's own view (:func:`sorry_env.board.engine.own_view`)
of player p: histories that leave p the same view share one information state (the view is
Markov: it holds everything public plus p's hand, not the order of past moves).
``resample_from_infostate(p, sampler)`` re-deals what p cannot see.

A game reaching ``max_turns`` cards is terminal with every return 0 (the env's truncation).
``max_game_length`` counts decisions: ``max_turns`` times the decisions one card can take
(7 for a split seven under the Hasbro 2003 team rules, 2 with Fire and Ice's fire decision).
"""

from __future__ import annotations

import json

import numpy as np
import pyspiel

from .board import engine as E
from .board import game as G
from .board.observation import OBS_SIZE, observe
from .board.rules import CARD_NAMES, DEFAULT_MAX_TURNS, DEFAULT_PRESET, N_CARDS, PRESETS, get_rules
from .board.scoring import max_points, scores
from .board.state_io import state_from_dict
from .checks import check_state, excerpt

SHORT_NAME = "python_sorry"
# OpenSpiel keeps max_game_length (max_turns times the decisions of one card, up to 7) in a
# 32-bit int: 2**31 cards was a RuntimeError. A million cards is far beyond any game.
MAX_TURNS = 1_000_000
DEFAULTS = {"players": 4, "rules": DEFAULT_PRESET, "max_turns": DEFAULT_MAX_TURNS, "reward": "win"}


def _game_type(utility=pyspiel.GameType.Utility.GENERAL_SUM, short_name: str = SHORT_NAME) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=short_name,
        long_name="Sorry! (sorry_env)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=4,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=dict(DEFAULTS),
    )


def _decisions_per_card(rules) -> int:
    """Most decisions one card can take: a Hasbro 2003 team seven is split into parts of at
    least one step each; Fire and Ice adds the fire decision before the draw."""
    if rules.teams == "hasbro2003":
        return 7
    return 2 if rules.fire_ice else 1


def _check_params(params: dict) -> dict:
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"{SHORT_NAME}: unknown parameter(s) {unknown}; parameters: {sorted(DEFAULTS)}")
    p = {**DEFAULTS, **params}
    players, rules, max_turns, reward = p["players"], p["rules"], p["max_turns"], p["reward"]
    if not isinstance(players, int) or players not in (2, 3, 4):  # (True and False are 1 and 0: refused)
        raise ValueError(f"{SHORT_NAME}: players must be 2, 3 or 4, got {players!r}")
    if not isinstance(rules, str) or rules not in PRESETS:
        raise ValueError(f"{SHORT_NAME}: rules must be a preset name {sorted(PRESETS)}, got {rules!r}")
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or not 1 <= max_turns <= MAX_TURNS:
        raise ValueError(
            f"{SHORT_NAME}: max_turns must be a positive integer at most {MAX_TURNS:,}, got {excerpt(max_turns)}"
        )
    if reward not in ("win", "points"):
        raise ValueError(f"{SHORT_NAME}: reward must be 'win' or 'points', got {reward!r}")
    if reward == "points" and get_rules(rules).scoring == "none":
        raise ValueError(f"{SHORT_NAME}: reward='points' needs a play-for-points preset; {rules!r} has no scoring")
    G.seats_for(players, None, rules)  # team rules need 4 players: refused here with the reason
    return p


def _cards_in_hands(s: np.ndarray) -> np.ndarray:
    """Cards of each kind (index of CARD_NAMES) in the players' hands of engine state `s`."""
    return s[E.HANDS : E.HANDS + 4 * N_CARDS].reshape(4, N_CARDS).sum(axis=0)


class IllegalActionError(pyspiel.SpielError, ValueError):
    """An action that does not apply to the state: a ``pyspiel.SpielError``, as OpenSpiel's C++
    games raise (RLlib's ``OpenSpielEnv`` catches that one), and a ``ValueError`` as well."""


class _Setup:
    """One game's fixed settings. States find theirs by key in _SETUPS: OpenSpiel clones a
    Python state with copy.deepcopy, which would copy a reference to the game as well."""

    def __init__(self, rules, seats, max_turns, reward):
        self.rules = rules
        self.rules_array = G.rules_array(rules)
        self.seats = seats
        self.max_turns = max_turns
        self.reward = reward
        self.active = np.zeros(4, dtype=np.int64)
        self.active[list(seats)] = 1
        self.key = f"{rules.name}/{seats}/{max_turns}/{reward}"
        # Computed once per game, not per state (OpenSpiel makes a state per clone, and pyspiel
        # clones the state at every observation_tensor call): the player id of each seat, the
        # pack, scratch space for the legal actions, and the initial engine state.
        self.player_of_seat = {seat: player for player, seat in enumerate(seats)}
        self.pack = [int(c) for c in rules.pack]
        self.hands = bool(rules.hand_size)
        self.action_buffer = E.action_buffer(self.rules_array)
        self.initial = self._initial_state()

    def _initial_state(self) -> np.ndarray:
        """The engine state before the first chance node: init_state lays out the pawns and the
        pack; its first player, draw and deal are undone (here they are chance nodes). Its
        draws took DECK[0:DRAW_POS] off the pile."""
        s = np.zeros(E.STATE_SIZE, dtype=np.int64)
        E.init_state(s, self.rules_array, self.active, 0)
        if s[E.CARD] >= 0:
            s[E.REMAIN + s[E.CARD]] += 1
            s[E.CARD] = -1
        s[E.REMAIN : E.REMAIN + N_CARDS] += _cards_in_hands(s)
        s[E.HANDS : E.HANDS + 4 * N_CARDS] = 0
        s[E.DRAW_POS] = 0
        s.setflags(write=False)
        return s


_SETUPS: dict[str, _Setup] = {}


class SorryGame(pyspiel.Game):
    """``python_sorry``: see the module docstring."""

    def __init__(self, params: dict | None = None):
        p = _check_params(dict(params or {}))
        rules = get_rules(p["rules"])
        seats = G.seats_for(p["players"], None, rules)
        n = len(seats)
        if p["reward"] == "points":
            utility, low, high, total = pyspiel.GameType.Utility.GENERAL_SUM, 0.0, float(max_points(rules, n)), None
        elif n == 2 or rules.teams != "none":  # one side's +1 is the other's -1, a draw is 0 for all
            utility, low, high, total = pyspiel.GameType.Utility.ZERO_SUM, -1.0, 1.0, 0.0
        else:
            utility, low, high, total = pyspiel.GameType.Utility.GENERAL_SUM, -1.0, 1.0, None
        info = pyspiel.GameInfo(
            num_distinct_actions=G.num_actions(rules),
            max_chance_outcomes=max(N_CARDS, 4),
            num_players=n,
            min_utility=low,
            max_utility=high,
            utility_sum=total,
            max_game_length=p["max_turns"] * _decisions_per_card(rules),
        )
        # pybind11: attributes set before the base class's __init__ are lost.
        super().__init__(_game_type(utility), info, p)
        self.setup = _Setup(rules, seats, p["max_turns"], p["reward"])
        _SETUPS.setdefault(self.setup.key, self.setup)
        # What get_type() gives Python callers: the short name carries the parameters unless they
        # are the defaults (see get_type).
        self._type = _game_type(utility, SHORT_NAME if p == DEFAULTS else str(self))

    def get_type(self) -> pyspiel.GameType:
        """The game's type. Its ``short_name`` is this game's string with its parameters when they
        are not the defaults (``python_sorry(max_turns=2000,players=2,reward=win,rules=hasbro2003)``,
        which ``pyspiel.load_game`` takes), so a tool that re-loads a game from its type alone
        gets this game back: Shimmy's ``OpenSpielCompatibilityV0(env=game)`` calls
        ``load_game(game.get_type().short_name)`` at every reset, which with the registered name
        gave the default 4 players. C++ code (serialization) still sees ``python_sorry``."""
        return self._type

    def new_initial_state(self, position: str | dict | None = None) -> SorryState:
        """The start of a game; or, given a position in the project's JSON form (the dict of
        :func:`sorry_env.board.state_io.state_to_dict`, or its JSON text), a state there with no
        history, as :meth:`state_from_engine` makes. This is the way to store and restore a
        position: ``pyspiel.serialize_game_and_state`` writes a pickle for Python games, and
        ``pyspiel.deserialize_game_and_state`` unpickles it (docs/integrations.md)."""
        if position is None:
            return SorryState(self)
        data = position
        if isinstance(position, str):
            try:
                data = json.loads(position)
            except (ValueError, RecursionError):
                raise ValueError(
                    f"{SHORT_NAME}: a position is the JSON of sorry_env.board.state_io.state_to_dict"
                ) from None
        if not isinstance(data, dict):
            raise ValueError(f"{SHORT_NAME}: a position is a state_io.state_to_dict dict, got {excerpt(data)}")
        state = state_from_dict(data, self.setup.rules, seed=0)
        if not self.setup.hands and data.get("card") is None and state[E.CARD] >= 0:
            # "card": null means "not drawn yet": here that is a chance node, so the card the
            # dict form draws to make a decision goes back on the pile.
            state[E.REMAIN + state[E.CARD]] += 1
            state[E.CARD] = -1
            state[E.DRAW_POS] -= 1
        return self.state_from_engine(state)

    def state_from_engine(self, state: np.ndarray) -> SorryState:
        """A game state at the engine state `state` (a decision node or a card draw), with no
        history: for search from a position (the bots in agents.openspiel_bots). Its history
        is empty, so it cannot be serialized."""
        check_state(np.asarray(state), self.setup.rules_array)
        if G.seats(state) != self.setup.seats:
            raise ValueError(f"the state's seats {G.seats(state)} differ from this game's {self.setup.seats}")
        s = SorryState(self)
        s._state = np.array(state, dtype=np.int64)
        s._first_player_pending = False
        return s

    def make_py_observer(self, iig_obs_type=None, params=None) -> SorryObserver:
        if params:
            raise ValueError(f"{SHORT_NAME}: observation parameters are not supported, got {params}")
        if iig_obs_type is not None and iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            raise ValueError(f"{SHORT_NAME}: only single-player observations (the env's) are provided")
        return SorryObserver(self)


class SorryState(pyspiel.State):
    """A position: the engine state array plus the chance events still owed (first player,
    cards to deal into hands)."""

    def __init__(self, game: SorryGame):
        super().__init__(game)
        self._key = game.setup.key
        self._state = game.setup.initial.copy()
        self._first_player_pending = True
        self._deal_to: list[int] = []  # seats owed a card for their hand, in order

    @property
    def _game(self) -> _Setup:
        return _SETUPS[self._key]

    # -- OpenSpiel API --------------------------------------------------------------------
    # pyspiel calls these several times per move: they read the engine state with .item()
    # (a Python int, no numpy scalar) and the game's settings once.
    def current_player(self) -> int:
        game, s = self._game, self._state
        if s.item(E.WINNER) >= 0 or s.item(E.TURN) >= game.max_turns:
            return pyspiel.PlayerId.TERMINAL
        if self._first_player_pending or self._deal_to:
            return pyspiel.PlayerId.CHANCE
        if not game.hands and s.item(E.CARD) < 0 and s.item(E.FIRE_PENDING) == 0:
            return pyspiel.PlayerId.CHANCE
        return game.player_of_seat[s.item(E.TO_MOVE)]

    def is_terminal(self) -> bool:
        s = self._state
        return s.item(E.WINNER) >= 0 or s.item(E.TURN) >= self._game.max_turns

    def _is_chance(self) -> bool:
        if self._first_player_pending or self._deal_to:
            return True
        s = self._state
        return not self._game.hands and s.item(E.CARD) < 0 and s.item(E.FIRE_PENDING) == 0

    def _legal_actions(self, player: int) -> list[int]:
        game = self._game
        buf = game.action_buffer  # scratch space shared by the game's states: read out at once
        n = E.legal_actions(self._state, game.rules_array, buf)
        return np.sort(buf[:n]).tolist()

    def _pile_counts(self) -> list[int]:
        """Cards of each kind the next draw comes from: the draw pile, or when it is empty the
        discards about to be reshuffled (the pack less the cards in hands)."""
        s = self._state
        counts = s[E.REMAIN : E.REMAIN + N_CARDS].tolist()
        if sum(counts) == 0:
            held = _cards_in_hands(s).tolist()
            counts = [in_pack - in_hands for in_pack, in_hands in zip(self._game.pack, held)]
        return counts

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._first_player_pending:
            n = len(self._game.seats)
            return [(p, 1.0 / n) for p in range(n)]
        counts = self._pile_counts()
        total = float(sum(counts))
        return [(c, count / total) for c, count in enumerate(counts) if count > 0]

    def _apply_action(self, action: int) -> None:
        s, game = self._state, self._game
        action = int(action)
        if self.is_terminal():
            raise IllegalActionError("the game is over: no action applies")
        if self._is_chance():
            possible = len(game.seats) if self._first_player_pending else N_CARDS
            if not (0 <= action < possible and (self._first_player_pending or self._pile_counts()[action] > 0)):
                raise IllegalActionError(
                    f"chance outcome {action} is impossible here; outcomes: {self.chance_outcomes()}"
                )
            if self._first_player_pending:
                s[E.TO_MOVE] = game.seats[action]
                self._first_player_pending = False
                if game.rules.hand_size:
                    self._deal_to = [seat for seat in game.seats for _ in range(game.rules.hand_size)]
                return
            E.deal(s, game.rules_array, action)  # reshuffles an empty pile first, as a real draw does
            if self._deal_to:  # the card goes into a hand instead of being played
                s[E.CARD] = -1
                s[E.HANDS + self._deal_to.pop(0) * N_CARDS + action] += 1
            return
        n = E.legal_actions(s, game.rules_array, game.action_buffer)
        if action not in game.action_buffer[:n].tolist():
            raise IllegalActionError(f"action {action} is illegal here; legal: {self._legal_actions(0)}")
        if game.rules.hand_size:
            mover = int(s[E.TO_MOVE])
            E.play_before_draw(s, game.rules_array, action)  # the replacement card is a chance node
            if s[E.WINNER] < 0 and s[E.SEVEN_LEFT] == 0 and not self.is_terminal():
                self._deal_to = [mover]
        else:
            E.play(s, game.rules_array, action)

    def observation_tensor(self, player: int | None = None) -> list[float]:
        """The env's observation of `player` (default: the player to move), as pyspiel's
        ``observation_tensor`` gives it (the observer's tensor as a list), computed here:
        pyspiel's own path clones the whole state at every call."""
        game = self._game
        if player is None:
            player = self.current_player()
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)) or not 0 <= player < len(game.seats):
            raise pyspiel.SpielError(f"observation_tensor: player must be 0..{len(game.seats) - 1}, got {player!r}")
        out = np.empty(OBS_SIZE, dtype=np.float32)
        observe(self._state, game.rules_array, game.seats[player], out)
        return out.tolist()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            outcomes = len(self._game.seats) if self._first_player_pending else N_CARDS
            if not 0 <= action < outcomes:  # OpenSpiel's own games report this as a SpielError too
                raise pyspiel.SpielError(f"{SHORT_NAME}: {action} is not a chance outcome here (0..{outcomes - 1})")
            if self._first_player_pending:
                return f"first player: seat {self._game.seats[action]}"
            if self._deal_to:
                return f"deal a {CARD_NAMES[action]} to seat {self._deal_to[0]}"
            return f"draw {CARD_NAMES[action]}"
        try:
            return f"{action}: {G.describe_action(self._state, self._game.rules, action)}"
        except ValueError:  # asked about a position that has no card to describe it with
            return f"action {action}"

    def returns(self) -> list[float]:
        s, game = self._state, self._game
        winner = int(s[E.WINNER])
        if winner < 0:  # running, or a draw at the turn limit
            return [0.0] * len(game.seats)
        if game.reward == "points":
            points = scores(s, game.rules)
            return [float(points[seat]) for seat in game.seats]
        return [1.0 if G.same_side(game.rules, seat, winner) else -1.0 for seat in game.seats]

    def resample_from_infostate(self, player_id: int, probability_sampler) -> SorryState:
        """A state `player_id` cannot tell from this one: with hands the other hands and the
        draw pile re-dealt (:func:`sorry_env.board.engine.determinize`); without hands, a copy."""
        clone = self.clone()
        if self._game.rules.hand_size:
            seed = int(probability_sampler() * 2**32) & 0xFFFFFFFF
            E.determinize(clone._state, self._game.rules_array, self._game.seats[player_id], seed)
        return clone

    @property
    def engine_state(self) -> np.ndarray:
        """A copy of the engine state array (sorry_env.board.game functions read it)."""
        return self._state.copy()

    def __str__(self) -> str:
        s = self._state
        pawns = " ".join(
            f"{seat}:" + ",".join(str(int(c)) for c in s[E.PAWNS + 4 * seat : E.PAWNS + 4 * seat + 4])
            for seat in self._game.seats
        )
        card = CARD_NAMES[s[E.CARD]] if s[E.CARD] >= 0 else "-"
        return f"turn {int(s[E.TURN])} to_move {int(s[E.TO_MOVE])} card {card} pawns {pawns}"


class SorryObserver:
    """The env's observation of one player (OpenSpiel's PyObserver interface)."""

    def __init__(self, game: SorryGame):
        self._game = game.setup
        self.tensor = np.zeros(OBS_SIZE, np.float32)
        self.dict = {"observation": self.tensor}
        self._view = np.zeros(E.STATE_SIZE, dtype=np.int64)

    def set_from(self, state: SorryState, player: int) -> None:
        observe(state._state, self._game.rules_array, self._game.seats[player], self.tensor)

    def string_from(self, state: SorryState, player: int) -> str:
        E.own_view(state._state, self._game.rules_array, self._game.seats[player], self._view)
        # Chance events still owed are public (who gets a card, not which).
        owed = "first-player" if state._first_player_pending else ",".join(map(str, state._deal_to))
        return f"p{player} owed[{owed}] " + " ".join(map(str, self._view.tolist()))


pyspiel.register_game(_game_type(), SorryGame)
