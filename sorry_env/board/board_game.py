"""The board game Sorry! with its presets, registered as ``"sorry"`` in :mod:`sorry_env.games`:
its facts (:data:`GAME_TYPE`) and the registry's functional API over :mod:`sorry_env.board.game`."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..games import Game, GameType, PolicyFile, check_first_seat, register_game
from ..version import ENV_ID, ENV_NAME, ENV_VERSION
from . import engine as E
from . import game
from .geometry import N_SEATS
from .observation import OBS_SIZE
from .render import COLOUR_NAMES
from .rules import DEFAULT_MAX_TURNS, PRESETS, Rules, get_rules, rules_from_json, rules_to_json
from .state_io import state_from_dict, state_to_dict


def _policy(rules: str, players: int, file: str | None = None) -> PolicyFile:
    name = f"{rules}-{players}p"
    return PolicyFile(name, rules, players, file or f"{name}.safetensors")


GAME_TYPE = GameType(
    id="sorry",
    long_name="the board game Sorry!",
    version=ENV_VERSION,
    env_id=ENV_ID,
    env_name=ENV_NAME,
    env_entry_point="sorry_env.board.env:env",
    player_counts=tuple(sorted(game.DEFAULT_SEATS)),
    seat_names=tuple(f"player_{seat}" for seat in range(N_SEATS)),
    seat_colours=COLOUR_NAMES,
    num_actions=max(game.num_actions(rules) for rules in PRESETS.values()),
    observation_size=OBS_SIZE,
    max_turns=DEFAULT_MAX_TURNS,
    policy_format="sorry_policy",
    variants=tuple(PRESETS),
    turn_unit="cards played",
    # Its agents are the top-level agents package's (sorry_env.agents.AGENTS).
    agents_module="sorry_env.agents",
    variant_word="rules",
    policy_format_version=2,
    policy_kinds=("mlp", "afterstate"),
    policy_records_rules=True,
    can_draw=True,
    original_replay_format=True,
    batched_step=True,
    shipped_policies=True,
    # The two oldest files keep their names (sorry-2p, sorry-4p: README and configs point at them).
    policy_files=(
        _policy("hasbro2003", 2, "sorry-2p.safetensors"),
        _policy("hasbro2003", 3),
        _policy("hasbro2003", 4, "sorry-4p.safetensors"),
        _policy("hasbro2003_teams", 4),
        _policy("parker1958_teams", 4),
        _policy("hasbro2013", 2),
        _policy("hasbro2013", 4),
        _policy("hasbro2003_points", 2),
        _policy("hasbro2003_points", 4),
        _policy("hasbro2013_fire_ice", 2),
        # Learned from random weights by self-play alone (configs/tabula-rasa-2p.yaml): played
        # by its name; the game's default stays the stronger hasbro2003-2p.
        PolicyFile("tabula-rasa-2p", "hasbro2003", 2, "tabula-rasa-2p.safetensors", default=False),
    ),
)


@register_game
class SorryGame(Game):
    """Sorry! under one :class:`~sorry_env.board.rules.Rules` (a preset or a custom one)."""

    game_type = GAME_TYPE

    @functools.cached_property
    def _rules_array(self) -> np.ndarray:
        return game.rules_array(self.variant)

    @functools.cached_property
    def _extras_args(self) -> tuple:
        return game.extras_args(self.variant)

    def parse_variant(self, variant: Any) -> Rules:
        return get_rules(variant)

    @property
    def rules(self) -> Rules:
        return self.variant

    @property
    def variant_name(self) -> str:
        return self.variant.name

    def variant_to_json(self) -> dict:
        return rules_to_json(self.variant)

    @classmethod
    def from_json(cls, data: Any, where: str = "rules") -> SorryGame:
        return cls(rules_from_json(data, where))

    @property
    def num_actions(self) -> int:
        return game.num_actions(self.variant)

    def new_state(self, num_players: int, seed: int = 0, first: int | None = None) -> np.ndarray:
        state = game.new_state(self.variant, self.game_type.check_players(num_players), seed=seed)
        first = check_first_seat(first, self.seats(state))
        if first is not None:
            E.set_to_move(state, first)
        return state

    def new_state_in_seats(self, seats: tuple[int, ...], seed: int = 0, first: int | None = None) -> np.ndarray:
        state = game.new_state(self.variant, seats=seats, seed=seed)  # any seats the rules allow
        first = check_first_seat(first, self.seats(state))
        if first is not None:
            E.set_to_move(state, first)
        return state

    def legal_actions(self, state: np.ndarray) -> np.ndarray:
        return game.legal_actions(state, self.variant)

    def legal_actions_trusted(self, state: np.ndarray) -> np.ndarray:
        return game._legal_actions(state, self.variant)  # the state checks are not compiled for a tournament

    def check_action(self, state: np.ndarray, action: int) -> None:
        game.check_action(state, self.variant, action)

    def apply(self, state: np.ndarray, action: int) -> np.ndarray:
        return game.step(state, self.variant, action)

    def apply_trusted(self, state: np.ndarray, action: int) -> np.ndarray:
        E.step(state, self._rules_array, action, *self._extras_args)  # in place, without the legality check
        return state

    def after_move(self, state: np.ndarray, action: int) -> np.ndarray:
        return game.after_move(state, self.variant, action)

    def is_chance_node(self, state: np.ndarray) -> bool:
        return (
            not self.variant.hand_size
            and state[E.CARD] < 0
            and state[E.WINNER] < 0
            and not E.fire_decision_pending(state)
        )

    def chance_outcomes(self, state: np.ndarray) -> list[tuple[str, float]]:
        return game.chance_outcomes(state, self.variant)

    def apply_chance(self, state: np.ndarray, outcome: str) -> np.ndarray:
        return game.deal(state, self.variant, outcome)

    def winner(self, state: np.ndarray) -> int | None:
        return game.winner(state)

    def winning_seats(self, state: np.ndarray) -> tuple[int, ...]:
        winner = game.winner(state)
        return () if winner is None else tuple(s for s in game.seats(state) if game.same_side(self.variant, s, winner))

    def is_running(self, state: np.ndarray, max_turns: int) -> bool:
        return E.is_running(state, max_turns)

    def to_move(self, state: np.ndarray) -> int:
        return game.to_move(state)

    def seats(self, state: np.ndarray) -> tuple[int, ...]:
        return game.seats(state)

    def turn(self, state: np.ndarray) -> int:
        return int(state[E.TURN])

    def observation(self, state: np.ndarray, seat: int) -> np.ndarray:
        from .observation import observe

        out = np.empty(OBS_SIZE, dtype=np.float32)
        observe(state, game.rules_array(self.variant), int(seat), out)
        return out

    def public_view(self, state: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return game.public_view(state, self.variant, rng)

    @property
    def agent_rules(self) -> Rules:
        return self.variant  # the board game's agents check its Rules

    def policy_input(self, state: np.ndarray, seat: int) -> np.ndarray:
        # The observation followed by the seat's own view of the state (sorry_env.board.policy_input).
        from .policy_input import policy_input

        return policy_input(state, game.rules_array(self.variant), int(seat))

    def policy_layout(self) -> dict:
        from .policy_input import layout  # with the state's size: its networks read the state too

        return layout(self.variant)

    def describe_action(self, state: np.ndarray, action: int) -> str:
        return game.describe_action(state, self.variant, action)

    def recorded_move_facts(self, state: np.ndarray) -> dict:
        return {"card": game.card(state)}

    def final_scores(self, state: np.ndarray) -> dict[int, int] | None:
        from .scoring import scores

        return (
            scores(state, self.variant) if game.winner(state) is not None and self.variant.scoring != "none" else None
        )

    def render_text(self, state: np.ndarray, viewer: int | None = None) -> str:
        # The terminal game's board, pawns numbered by slot here (a play view follows a game
        # move by move and keeps their labels).
        return self.play_view(state, viewer).position(state)

    def state_to_dict(self, state: np.ndarray) -> dict:
        return state_to_dict(state, self.variant)

    def state_from_dict(self, data: Any, seed: int = 0) -> np.ndarray:
        return state_from_dict(data, self.variant, seed)

    def make_env(self, num_players: int, **kwargs: Any) -> Any:
        from .env import raw_env

        return raw_env(num_players=num_players, rules=self.variant, **kwargs)

    @classmethod
    def of_env(cls, raw_env: Any) -> SorryGame | None:
        from .env import raw_env as SorryEnv

        return cls(raw_env.rules) if isinstance(raw_env, SorryEnv) else None

    def play_view(self, state: np.ndarray, viewer: int | None) -> Any:
        from .board_view import BoardPlayView

        return BoardPlayView(self, state, viewer)
