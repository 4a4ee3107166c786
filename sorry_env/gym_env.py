"""Sorry! as a single-agent Gymnasium env: you play one seat, agents play the others.

=====================  ==========================================================
Import                 ``gymnasium.make("sorry_env/Sorry-v1", ...)`` after ``import sorry_env``
                       (opponents as agent specs), or ``from sorry_env.gym_env import
                       SorryGymEnv`` (opponents as agents or functions)
Observation space      ``Dict(observation=Box(0, 1, (1184,), float32),
                       action_mask=Box(0, 1, (n_actions,), int8))``: the PettingZoo env's,
                       from the same encoder (:func:`sorry_env.board.observation.observe`)
Action space           ``Discrete(n_actions)``: 142 for the default rules (see ``sorry_env.board.env``)
Legal actions          ``obs["action_mask"]``, or ``env.action_masks()`` (bool; sb3-contrib)
Reward                 the learner's own: +1 win / -1 loss at the end (``reward="win"``), or its
                       end-of-game points (``reward="points"``); 0 before, 0 on truncation
=====================  ==========================================================

Arguments
---------
``SorryGymEnv(num_players=2, opponents=None, rules=DEFAULT_PRESET, seat=None,
max_turns=2000, reward="win", illegal_action="lose", opponent_sampler=None,
render_mode=None, make_opponent=None)``

- ``opponents``: one entry per other seat in turn order after the learner's, or one entry
  for all of them. An entry is an :class:`sorry_env.agent.Agent` object or a function from
  the observation dict of the seat to move to an action. Agent specs (text: ``"heuristic"``,
  ``"mcts:iterations=200"``, a policy file, ...) are the agents package's: make the env with
  ``gymnasium.make("sorry_env/Sorry-v1", opponents=[...])`` or
  :func:`sorry_env.agents.gym_factory.make_gym_env` (same arguments as here, plus
  ``torch_threads``), which pass ``make_opponent``; without it a spec is a TypeError.
  Every opponent is checked against the game here, before any episode.
- ``make_opponent``: a function turning one opponent entry into an Agent (it is given every
  entry, Agent objects and functions too); text entries it made are reused across episodes.
- ``seat``: the learner's seat (one of the seats in play: 0 and 2 for two players), or
  ``None`` for a random seat each episode.
- ``illegal_action``: ``"lose"`` (default, as PettingZoo's TerminateIllegalWrapper): an
  illegal or out-of-range action ends the episode with reward -1 and
  ``info["illegal_action"]``; ``"raise"``: ValueError naming the legal actions.
- ``render_mode``: ``None``, ``"ansi"``, ``"rgb_array"`` (a ``uint8[640, 640, 3]`` picture) or
  ``"human"`` (a pygame window, redrawn after every reset and step): the PettingZoo env's
  pictures of the board after the last move (:mod:`sorry_env.board.board_render`).
- ``opponent_sampler``: a function ``(np_random, n) -> n opponents`` called at every reset
  instead of the fixed ``opponents`` (self-play pools: :class:`sorry_env.training.opponents.OpponentPool`).

Episodes
--------
``reset`` deals a new game (the seed fixes the pack, the first player, the learner's seat
when random and every opponent's play), then plays the opponents until the learner holds a
card. The ``k``-th reset without a seed after ``reset(seed=s)`` deals the game
``raw_env().reset(seed=s + k * 2**32)`` deals (the batched envs' episode seeds,
:mod:`sorry_env.vector`). ``step`` plays the learner's action, then the opponents, until the
learner must act again or the game ends. Every move is played through the board game's
PettingZoo env (:class:`sorry_env.board.env.raw_env`, the same arguments' checks, rewards, end of
game and pictures); this env is the learner's view of it. Options: ``{"state": STATE_DICT}``
(:mod:`sorry_env.board.state_io`), ``{"seat": s}`` (this episode's learner seat). ``info`` from
``reset``: ``learner_seat`` and ``opponents`` (their names, in turn order after the
learner); at the end: ``learner_won``, ``learner_seat``, ``opponents`` and, with scoring
rules, ``score``.

Accessors
---------
``learner_seat``; ``public_state()`` (the engine state with the hidden parts zeroed);
``own_view()`` (what the learner may know of it, with hands also the other hands hidden:
what a policy network adds to its input, :class:`PolicyInputWrapper`); ``turn()`` (the
learner's :class:`sorry_env.agent.Turn`, for scripted teachers); ``state_dict()``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from .agent import Agent, CallableAgent, Turn, agent_label, checked_action, one_per_seat
from .board import game
from .board.board_render import RENDER_MODES
from .board.env import raw_env
from .board.policy_input import INPUT_SIZE, STATE_SIZE, own_view, public_state
from .board.rules import DEFAULT_MAX_TURNS, DEFAULT_PRESET
from .games import seats_after
from .gym_space import ENV_ID, game_tag, observation_space  # noqa: F401 (also reached as gym_env.X)

ILLEGAL_REWARD = -1.0


class SorryGymEnv(gymnasium.Env):
    metadata: ClassVar[dict] = {"render_modes": list(RENDER_MODES), "render_fps": 2}  # type: ignore[misc]

    def __init__(
        self,
        num_players: int = 2,
        opponents: Sequence | Agent | Callable | None = None,
        rules=DEFAULT_PRESET,
        seat: int | None = None,
        max_turns: int | None = DEFAULT_MAX_TURNS,
        reward: str = "win",
        illegal_action: str = "lose",
        opponent_sampler: Callable | None = None,
        render_mode=None,
        make_opponent: Callable[[object], Agent] | None = None,
    ):
        # Every move is played through the board game's AEC env (its rewards, end of game, masks
        # and pictures); this env is one seat's view of it, the other seats played by agents.
        self._aec = raw_env(num_players, None, rules, max_turns, render_mode, reward)
        self._aec.render_mode = None  # its renderer follows every move; pictures only when this env asks
        self._renderer = self._aec._renderer
        self.rules, self.seats, self.max_turns = self._aec.rules, self._aec.seats, self._aec.max_turns
        self.num_players = len(self.seats)
        if seat is not None and seat not in self.seats:
            raise ValueError(
                f"seat must be None (random each episode) or one of the seats in play {self.seats}, got {seat!r}"
            )
        if illegal_action not in ("lose", "raise"):
            raise ValueError(f"illegal_action must be 'lose' or 'raise', got {illegal_action!r}")
        self.seat = seat
        self.reward_kind = reward
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        if make_opponent is not None and not callable(make_opponent):
            raise TypeError(
                f"make_opponent must be a function from an opponent entry to an Agent, got {make_opponent!r}"
            )
        self.make_opponent = make_opponent
        if opponents is None and opponent_sampler is None:
            raise TypeError(
                "opponents: give a list of agents (Agent objects or functions of the observation dict) or one "
                "agent, or an opponent_sampler; got None (for agent specs such as 'heuristic' make the env with "
                "gymnasium.make('sorry_env/Sorry-v1', opponents=[...]))"
            )
        self.n_actions = self._aec.n_actions
        self.observation_space = observation_space(self.rules, self.num_players)
        self.action_space = spaces.Discrete(self.n_actions)
        self.opponent_sampler = opponent_sampler
        self._made: dict[str, Agent] = {}  # text entry -> agent made by this env (specs drawn again reuse it)
        self._fixed = (
            None if opponent_sampler is not None else self._resolve(opponents, self.num_players - 1, fresh=True)
        )
        self.learner_seat = -1
        self._learner = ""  # the learner's agent name in the AEC env
        self.opponents: dict[int, tuple[str, Agent]] = {}  # seat -> (label, agent) this episode
        self._episode = -1
        self._seed_base: int | None = None  # the last reset's seed, and episodes since (see reset)
        self._seed_episode = 0
        self._over = True

    # -- opponents ----------------------------------------------------------------------
    def _resolve(self, opponents, n: int, fresh: bool) -> list[tuple[str, Agent]]:
        """(label, agent) for n opponent seats from a list (or one entry for all); every
        agent is checked against this game. `fresh`: a spec listed for several seats makes
        one agent per seat (else agents made from specs are reused across episodes)."""
        if isinstance(opponents, (str, Agent)) or callable(opponents):
            opponents = [opponents]
        if not isinstance(opponents, (list, tuple)):
            raise TypeError(
                f"opponents: give a list of agents (Agent objects or functions) or one agent, got {opponents!r}"
            )
        opponents = one_per_seat(list(opponents), n, f"opponents for {self.num_players} players")
        resolved = []
        for k, entry in enumerate(opponents):
            try:  # an entry that makes no agent, or one that cannot play this game
                if isinstance(entry, str) and not fresh and entry in self._made:
                    agent = self._made[entry]
                else:
                    agent = self._agent_of(entry)
                    if isinstance(entry, str):
                        self._made[entry] = agent
                agent.check_game(self.rules, self.num_players)
            except (TypeError, ValueError) as error:
                raise ValueError(f"opponent {k + 1} ({agent_label(entry)}): {error}") from None
            resolved.append((agent_label(entry), agent))
        return resolved

    def _agent_of(self, entry) -> Agent:
        """The Agent an opponent entry stands for (make_opponent's, when given)."""
        if self.make_opponent is not None:
            agent = self.make_opponent(entry)
            if not isinstance(agent, Agent):
                raise TypeError(f"make_opponent returned {agent!r}, not an Agent")
            return agent
        if isinstance(entry, Agent):
            return entry
        if isinstance(entry, str):
            raise TypeError(
                f"{entry!r} is an agent spec; sorry_env.gym_env.SorryGymEnv takes Agent objects or functions. "
                "Make the env with gymnasium.make('sorry_env/Sorry-v1', opponents=[...]) or "
                "sorry_env.agents.gym_factory.make_gym_env to use specs"
            )
        if callable(entry) and not isinstance(entry, type):
            return CallableAgent(entry)
        raise TypeError(f"an opponent is an Agent or a function from the observation dict to an action; got {entry!r}")

    # -- gymnasium API ------------------------------------------------------------------
    def reset(self, *, seed=None, options=None):
        if seed is not None:
            game.check_seed(seed)
        super().reset(seed=seed)
        options = options or {}
        if seed is not None:
            self._seed_base, self._seed_episode = int(seed), 0
        elif self._seed_base is None:  # never seeded: np_random drew its own seed above
            self._seed_base, self._seed_episode = int(self.np_random.integers(2**32)), 0
        else:
            self._seed_episode += 1
        # Episode k after reset(seed=s) deals as raw_env.reset(seed=s + k * 2**32) and as game s's
        # episode k in the batched envs (sorry_env.vector.episode_seed), so make_vec's modes agree.
        state_option = {"state": options["state"]} if "state" in options else None
        self._aec.reset(seed=self._seed_base + self._seed_episode * 2**32, options=state_option)
        seat = options.get("seat", self.seat)
        if seat is None:
            seat = self.seats[int(self.np_random.integers(len(self.seats)))]
        if seat not in self.seats:
            raise ValueError(f"seat must be one of the seats in play {self.seats}, got {seat!r}")
        others = seats_after(self.seats, seat)
        if self.opponent_sampler is not None:
            lineup = self._resolve(self.opponent_sampler(self.np_random, len(others)), len(others), fresh=False)
        else:
            lineup = self._fixed
        self.learner_seat = int(seat)
        self._learner = self._aec.possible_agents[self.seats.index(seat)]
        self.opponents = dict(zip(others, lineup))
        for _, agent in lineup:
            agent.reset(int(self.np_random.integers(2**31)))
        self._episode += 1
        self._over = False
        self._play_opponents()
        if self._finished():
            raise ValueError("the game ended before the learner's first move")
        if self.render_mode == "human":
            self.render()
        # Who sits where, known from the deal on (a random seat is the learner's to know).
        return self._observe(), {"learner_seat": self.learner_seat, "opponents": [label for label, _ in lineup]}

    def step(self, action):
        if self._aec._state is None:
            raise RuntimeError("call reset() before step()")
        if self._over:
            raise RuntimeError("the episode is over; call reset() for a new one")
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            action = action.item()  # what vector envs and sb3's predict hand over
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise TypeError(f"an action is an integer index into Discrete({self.n_actions}), got {action!r}")
        mask = self._aec._mask
        if not (0 <= action < self.n_actions and mask[action]):
            legal = np.flatnonzero(mask).tolist()
            if self.illegal_action == "raise":
                raise ValueError(f"illegal learner action {action} at seat {self.learner_seat}; legal: {legal}")
            self._over = True
            info = {**self._end_info(False), "illegal_action": True}
            return self._observe(), ILLEGAL_REWARD, True, False, info
        self._aec.step(int(action))
        self._play_opponents()
        terminated = self._aec.terminations[self._learner]  # every agent's flags are set together
        truncated = self._aec.truncations[self._learner]
        reward, info = 0.0, {}
        if terminated or truncated:
            self._over = True
            winner = game.winner(self._aec._game())
            info = self._end_info(winner is not None and game.same_side(self.rules, self.learner_seat, winner))
            reward = self._aec.rewards[self._learner]
        if self.render_mode == "human":
            self.render()
        return self._observe(), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now, as bools (all False once the episode is over)."""
        return self._aec._mask.astype(bool) & (not self._over)

    def render(self):
        """The board after the last move (the PettingZoo env's pictures: :mod:`sorry_env.board.board_render`)."""
        return self._aec.render()

    def close(self):
        self._aec.close()

    # -- accessors ----------------------------------------------------------------------
    @property
    def state(self) -> np.ndarray | None:
        """The engine state array of the game in play (None before the first reset)."""
        return self._aec._state

    def public_state(self) -> np.ndarray:
        """The engine state without its hidden parts (draw-pile order, generator): the extra
        input of the trained policies (:mod:`sorry_env.board.policy_input`)."""
        out = np.empty(STATE_SIZE, dtype=np.int64)
        public_state(self._aec._game(), out)
        return out

    def own_view(self) -> np.ndarray:
        """What the learner may know of the engine state (:func:`sorry_env.board.engine.own_view`:
        the public state, with hands also the other hands hidden): the extra input of the
        trained policies (:mod:`sorry_env.board.policy_input`)."""
        out = np.empty(STATE_SIZE, dtype=np.int64)
        own_view(self._aec._game(), self._aec._rules_array, self.learner_seat, out)
        return out

    def turn(self, rng: np.random.Generator | None = None) -> Turn:
        """The learner's Turn (what a scripted agent in its seat would be shown)."""
        if self._over:
            raise RuntimeError("the episode is over: the learner has no turn")
        return Turn.from_state(
            self._aec._game(), self.rules, rng if rng is not None else self.np_random, np.flatnonzero(self._aec._mask)
        )

    def state_dict(self) -> dict:
        """The current position as a JSON-able state dict (see sorry_env.board.state_io)."""
        return self._aec.state_dict()

    # -- internals ----------------------------------------------------------------------
    def _finished(self) -> bool:
        return self._aec.terminations[self._learner] or self._aec.truncations[self._learner]

    def _end_info(self, won: bool) -> dict:
        info = {
            "learner_won": bool(won),
            "learner_seat": self.learner_seat,
            "opponents": [label for label, _ in self.opponents.values()],
        }
        score = self._aec.infos[self._learner].get("score")
        if score is not None:
            info["score"] = int(score)
        return info

    def _play_opponents(self) -> None:
        """Opponents move until the learner holds a card, the game ends or is truncated."""
        aec = self._aec
        while not self._finished() and aec.agent_selection != self._learner:
            state, seat = aec._game(), aec._agent_seat[aec.agent_selection]
            legal = np.flatnonzero(aec._mask)
            label, agent = self.opponents[seat]
            action = checked_action(
                agent.act(Turn.from_state(state, self.rules, self.np_random, legal)),
                legal,
                f"opponent {label!r} (seat {seat})",
                f"in episode {self._episode} at turn {int(aec.game.turn(state))}",
            )
            aec.step(action)

    def _observe(self) -> dict:
        obs = self._aec.observe(self._learner)
        if self._over:
            obs["action_mask"][:] = 0
        return obs


class PolicyInputWrapper(gymnasium.ObservationWrapper):
    """Observations as the trained policies' input vectors (:mod:`sorry_env.board.policy_input`): the
    env's observation followed by :meth:`SorryGymEnv.own_view`. What the self-play
    trainer learns from; ``action_masks()`` passes through."""

    def __init__(self, env: gymnasium.Env):
        if not isinstance(env.unwrapped, SorryGymEnv):
            raise TypeError(f"PolicyInputWrapper wraps a SorryGymEnv (or a wrapper of one), got {env!r}")
        super().__init__(env)
        self.core: SorryGymEnv = env.unwrapped
        self.observation_space = spaces.Box(-1.0, np.inf, (INPUT_SIZE,), dtype=np.float32)

    def observation(self, observation: dict) -> np.ndarray:
        return np.concatenate((observation["observation"], self.core.own_view().astype(np.float32)))

    def action_masks(self) -> np.ndarray:
        return self.core.action_masks()
