"""Playing tournament games: the fair seating, the seeds of each game, and a lineup of agents
at one :class:`Table`, one process's share of the games, for any registered game over the
registry's API (:class:`sorry_env.games.Game`; what differs between games is declared by the
game: who shares a win, points, a compiled in-place step). The tournament rules:
:mod:`sorry_env.agents.arena`.

Fair seating over the game's seats: game ``g`` puts lineup entry ``i`` in seat
``seats[(i + g) % n]`` and lets seat ``seats[(g // n) % n]`` move first. Everything random in
game ``g`` (the game's chance, every agent's reset seed, the re-drawn hidden parts of the
agents' views) comes from ``numpy.random.SeedSequence([seed, g])``. A game still running after
``max_turns`` of the game's turns (``GameType.turn_unit``) is a draw."""

from __future__ import annotations

import copy

import numpy as np

import sorry_env.agents as agents  # mypy: see pyproject [tool.mypy]
from sorry_env import games
from sorry_env.agent import agent_turn, checked_action
from sorry_env.board.rules import Rules

from ..catalog import policy_game
from .stats import agent_labels


# ---- schedule and seeds ---------------------------------------------------------------------
def seating(game_index: int, seats: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """(seat of each lineup entry, the seat that moves first) in game `game_index`."""
    n = len(seats)
    entry_seats = tuple(seats[(i + game_index) % n] for i in range(n))
    return entry_seats, seats[(game_index // n) % n]


def game_seeds(seed: int, game_index: int, players: int) -> list[int]:
    """[engine seed, public-view seed, one reset seed per lineup entry] for one game."""
    words = np.random.SeedSequence([seed, game_index]).generate_state(2 + players)
    return [int(w) for w in words]


# ---- playing --------------------------------------------------------------------------------
class Table:
    """A lineup's agents in one process, able to play any game of the tournament by index."""

    def __init__(self, agent_specs: list, rules: Rules | str | games.Game, max_turns: int, seed: int):
        self.specs = list(agent_specs)  # specs, Agent objects or functions (agents.as_agent)
        # the Game played (the board game's Rules or preset name: the board game with them)
        self.game = policy_game(rules)
        # "trained": the shipped policy of this game and player count (agents.make_agent)
        self.agents = [agents.as_agent(spec, game=self.game, players=len(self.specs)) for spec in self.specs]
        self.labels = agent_labels(self.specs)
        self.seats = game_seats(self.game, len(self.agents))
        self.max_turns = max_turns
        self.seed = seed
        for agent in self.agents:  # an agent or a network made for another game: refused before any play
            self.game.check_agent(agent, len(self.agents))
        # the lineup entries that decide many games' turns in one call (play_lockstep)
        self.batched = {i for i, agent in enumerate(self.agents) if getattr(agent, "acts_in_batches", False)}

    def play(self, game_index: int) -> dict:
        """One game; returns its record. `winners`: the lineup entries sharing the win (the
        winner, and its partner under team rules; empty if truncated); `scores`: each entry's
        points under play-for-points rules (None otherwise or if truncated)."""
        return self._play_side_by_side([game_index], [self.agents], set())[0]

    def _step(self, state, game_index, entry, legal, action):
        action = checked_action(action, legal, f"agent {self.labels[entry]!r}", f"in game {game_index}")
        return self.game.apply_trusted(state, action)

    def play_many(self, game_indices):
        """Records of these games: in lockstep (:meth:`play_lockstep`) when an agent of the
        lineup acts in batches, else one after the other."""
        if self.batched:
            return self.play_lockstep(game_indices)
        return [self.play(g) for g in game_indices]

    def play_lockstep(self, game_indices):
        """Play these games side by side: each lineup entry that acts in batches (a policy
        network: ``acts_in_batches``, ``act_turns``) decides the pending turns of all games
        in one call (one forward); the other agents get their own instance per game and act
        as in :meth:`play`. Every game draws its seeds, views and agent seeds exactly as in
        :meth:`play`, so the records are the same (up to ties a batched forward's rounding
        could break differently)."""
        # a fresh instance per game for the agents that act one at a time (an object given by
        # the caller is copied: games side by side must not share its state)
        lineups = [
            [
                agent
                if i in self.batched
                else (
                    agents.make_agent(spec, game=self.game, players=len(self.specs))
                    if isinstance(spec, str)
                    else copy.deepcopy(agent)
                )
                for i, (agent, spec) in enumerate(zip(self.agents, self.specs))
            ]
            for _ in game_indices
        ]
        return self._play_side_by_side(game_indices, lineups, self.batched)

    def _play_side_by_side(self, game_indices, lineups, batched):
        """Records of these games, game k played by lineups[k] (agents reset to the game's
        seeds), side by side: the entries in `batched` decide the pending turns of all games in
        one ``act_turns`` call; the other agents act one turn at a time (with none batched,
        each game is played to its end in turn)."""
        game = self.game
        running = []  # [game index, state, entry seats, first seat, seat -> entry, view rng, players]
        for game_index, players in zip(game_indices, lineups):  # every game's seats and seeds (module doc)
            entry_seats, first_seat = seating(game_index, self.seats)
            engine_seed, view_seed, *reset_seeds = game_seeds(self.seed, game_index, len(players))
            for agent, reset_seed in zip(players, reset_seeds):
                agent.reset(reset_seed)
            state = game.new_state(len(self.agents), seed=engine_seed, first=first_seat)
            entry_at_seat = {seat: i for i, seat in enumerate(entry_seats)}
            view_rng = np.random.default_rng(view_seed)
            running.append([game_index, state, entry_seats, first_seat, entry_at_seat, view_rng, players])
        played = list(running)
        while running:
            waiting = {i: [] for i in batched}  # entry -> [(game, turn, legal)]
            for g in running:
                game_index, _, _, _, entry_at_seat, view_rng, players = g
                while game.is_running(g[1], self.max_turns):
                    legal = game.legal_actions_trusted(g[1])
                    turn = agent_turn(game, g[1], view_rng, legal)
                    entry = entry_at_seat[turn.seat]
                    if entry not in batched:
                        g[1] = self._step(g[1], game_index, entry, legal, players[entry].act(turn))
                    elif len(legal) == 1:  # the masked argmax of a lone legal move is that move
                        g[1] = self._step(g[1], game_index, entry, legal, int(legal[0]))
                    else:
                        waiting[entry].append((g, turn, legal))
                        break
            for entry, pending in waiting.items():
                actions = self.agents[entry].act_turns([turn for _, turn, _ in pending]) if pending else []
                for (g, _, legal), action in zip(pending, actions):
                    g[1] = self._step(g[1], g[0], entry, legal, int(action))
            running = [g for g in running if game.is_running(g[1], self.max_turns)]
        return [self._record(g[0], g[1], g[2], g[3]) for g in played]

    def _record(self, game_index, state, entry_seats, first_seat):
        won = self.game.winning_seats(state)
        seat_points = self.game.final_scores(state)
        return {
            "game": game_index,
            "seats": list(entry_seats),
            "first_seat": first_seat,
            "winners": [i for i, seat in enumerate(entry_seats) if seat in won],
            "scores": None if seat_points is None else [seat_points[seat] for seat in entry_seats],
            "turns": self.game.turn(state),
        }


def game_seats(game: games.Game, players: int) -> tuple[int, ...]:
    """The seats a game of `players` is played in (the game's own choice, e.g. 0..n-1)."""
    return tuple(game.seats(game.new_state(players, seed=0)))
