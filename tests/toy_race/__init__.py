"""A toy third game, registered only in the tests: what adding a game takes (this folder and
one ``register_game`` line; CONTRIBUTING.md, "Adding a game"). Its ``agents.py`` gives the
generic greedy agent its evaluation; random play, policy files, tournaments and the PPO
trainer need nothing of it.

Race: 2 to 4 players each have a counter at 0; a die showing 1 to 3 is rolled for the player
to move, who advances by the roll (action 0) or by exactly 1 (action 1). The first to reach
GOAL wins. The generator is a 32-bit LCG kept in the state, so a game is one int64 array."""

from __future__ import annotations

from typing import Any

import numpy as np

from sorry_env.board.game import check_seed
from sorry_env.games import Game, GameType, check_first_seat, register_game

GOAL = 12
N_PLAYERS, TO_MOVE, WINNER, TURN, RNG, ROLL, POS = range(7)
STATE_SIZE = POS + 4
FACES = (1, 2, 3)


def _roll(state: np.ndarray) -> None:
    state[RNG] = (state[RNG] * 1664525 + 1013904223) & 0xFFFFFFFF
    state[ROLL] = FACES[(int(state[RNG]) >> 16) % len(FACES)]


def _end_turn(state: np.ndarray) -> None:
    state[TURN] += 1
    state[TO_MOVE] = (state[TO_MOVE] + 1) % state[N_PLAYERS]
    state[ROLL] = 0


class RaceGame(Game):
    game_type = GameType(
        id="toy_race",
        long_name="Race (toy)",
        version=0,
        env_id="sorry_env/toy-race-v0",
        player_counts=(2, 3, 4),
        seat_names=("player_0", "player_1", "player_2", "player_3"),
        seat_colours=("Red", "Blue", "Yellow", "Green"),
        num_actions=2,
        observation_size=4 + 4 + 3,
        max_turns=100,
        policy_format="toy_race_policy",
        variants=("standard",),
        agents_module="toy_race.agents",  # the evaluation greedy ranks by (the toy has no agents of its own)
    )

    def parse_variant(self, variant: Any) -> str:
        if variant != "standard":
            raise ValueError(f"Race has one variant, 'standard'; got {variant!r}")
        return variant

    @property
    def variant_name(self) -> str:
        return "standard"

    def variant_to_json(self) -> dict:
        return {"name": "standard"}

    @classmethod
    def from_json(cls, data: Any, where: str = "rules") -> RaceGame:
        if data != {"name": "standard"}:
            raise ValueError(f"{where}: Race rules must be {{'name': 'standard'}}, got {data!r}")
        return cls()

    @property
    def num_actions(self) -> int:
        return 2

    def new_state(self, num_players: int, seed: int = 0, first: int | None = None) -> np.ndarray:
        n = self.game_type.check_players(num_players)
        check_seed(seed)
        state = np.zeros(STATE_SIZE, dtype=np.int64)
        state[N_PLAYERS], state[WINNER], state[RNG] = n, -1, int(seed) & 0xFFFFFFFF
        state[TO_MOVE] = check_first_seat(first, tuple(range(n))) or 0
        _roll(state)
        return state

    def _require_decision(self, state: np.ndarray) -> None:
        if state[WINNER] >= 0:
            raise ValueError("the game is over")
        if state[ROLL] == 0:
            raise ValueError("this is a chance node: roll first")

    def legal_actions(self, state: np.ndarray) -> np.ndarray:
        self._require_decision(state)
        return np.array([0, 1] if state[ROLL] != 1 else [0], dtype=np.int64)

    def after_move(self, state: np.ndarray, action: int) -> np.ndarray:
        if action not in self.legal_actions(state):
            raise ValueError(f"action {action!r} is illegal; legal: {self.legal_actions(state).tolist()}")
        s = state.copy()
        me = int(s[TO_MOVE])
        s[POS + me] = min(GOAL, s[POS + me] + (s[ROLL] if action == 0 else 1))
        if s[POS + me] == GOAL:
            s[WINNER], s[ROLL] = me, 0
        else:
            _end_turn(s)
        return s

    def apply(self, state: np.ndarray, action: int) -> np.ndarray:
        s = self.after_move(state, action)
        if s[WINNER] < 0:
            _roll(s)
        return s

    def is_chance_node(self, state: np.ndarray) -> bool:
        return bool(state[WINNER] < 0 and state[ROLL] == 0)

    def chance_outcomes(self, state: np.ndarray) -> list[tuple[str, float]]:
        if not self.is_chance_node(state):
            raise ValueError("not a chance node")
        return [(str(f), 1 / len(FACES)) for f in FACES]

    def apply_chance(self, state: np.ndarray, outcome: str) -> np.ndarray:
        if not self.is_chance_node(state):
            raise ValueError("not a chance node")
        if outcome not in [str(f) for f in FACES]:
            raise ValueError(f"a roll is one of {[str(f) for f in FACES]}, got {outcome!r}")
        s = state.copy()
        s[ROLL] = int(outcome)
        return s

    def winner(self, state: np.ndarray) -> int | None:
        return int(state[WINNER]) if state[WINNER] >= 0 else None

    def to_move(self, state: np.ndarray) -> int:
        return int(state[TO_MOVE])

    def seats(self, state: np.ndarray) -> tuple[int, ...]:
        return tuple(range(int(state[N_PLAYERS])))

    def turn(self, state: np.ndarray) -> int:
        return int(state[TURN])

    def observation(self, state: np.ndarray, seat: int) -> np.ndarray:
        n = int(state[N_PLAYERS])
        out = np.zeros(self.observation_size, dtype=np.float32)
        for k in range(n):  # the viewer first, then the others in turn order
            out[k] = state[POS + (seat + k) % n] / GOAL
            out[4 + k] = 1.0
        if state[ROLL] and state[TO_MOVE] == seat:
            out[8 + int(state[ROLL]) - 1] = 1.0
        return out

    def public_view(self, state: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        view = state.copy()
        view[RNG] = int(rng.integers(0, 2**32))
        return view

    def describe_action(self, state: np.ndarray, action: int) -> str:
        return f"advance {int(state[ROLL])}" if action == 0 else "advance 1"

    def render_text(self, state: np.ndarray, viewer: int | None = None) -> str:
        n = int(state[N_PLAYERS])
        counters = "  ".join(f"player_{k} at {int(state[POS + k])}/{GOAL}" for k in range(n))
        if state[WINNER] >= 0:
            return f"{counters}\nplayer_{int(state[WINNER])} won"
        return f"{counters}\nturn {int(state[TURN])}: player_{int(state[TO_MOVE])} rolled {int(state[ROLL])}"

    def state_to_dict(self, state: np.ndarray) -> dict:
        n = int(state[N_PLAYERS])
        return {
            "to_move": int(state[TO_MOVE]),
            "turn": int(state[TURN]),
            "positions": [int(p) for p in state[POS : POS + n]],
            "roll": int(state[ROLL]),
        }

    def state_from_dict(self, data: Any, seed: int = 0) -> np.ndarray:
        check_seed(seed)
        if not isinstance(data, dict) or set(data) != {"to_move", "turn", "positions", "roll"}:
            raise ValueError(f"a Race state is an object with to_move, turn, positions and roll, got {data!r}"[:200])
        positions = data["positions"]
        if not isinstance(positions, list) or len(positions) not in self.game_type.player_counts:
            raise ValueError(f"positions must list 2 to 4 counters, got {positions!r}")
        for value, what, top in [(data["to_move"], "to_move", len(positions) - 1), (data["turn"], "turn", 10**9)]:
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
                raise ValueError(f"{what} must be an integer 0..{top}, got {value!r}")
        if any(isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < GOAL for p in positions):
            raise ValueError(f"positions must be integers 0..{GOAL - 1} (a running game), got {positions!r}")
        if data["roll"] not in FACES:
            raise ValueError(f"roll must be one of {FACES}, got {data['roll']!r}")
        state = self.new_state(len(positions), seed)
        state[TO_MOVE], state[TURN], state[ROLL] = data["to_move"], data["turn"], data["roll"]
        state[POS : POS + len(positions)] = positions
        return state

    def make_env(self, num_players: int, **kwargs: Any) -> Any:
        from sorry_env.game_env import GameEnv

        return GameEnv(self, num_players, **kwargs)

    @classmethod
    def of_env(cls, raw_env: Any) -> RaceGame | None:
        from sorry_env.game_env import GameEnv

        return raw_env.game if isinstance(raw_env, GameEnv) and isinstance(raw_env.game, cls) else None


register_game(RaceGame)  # the one registry line (a built-in game names its module in games.GAME_MODULES)
