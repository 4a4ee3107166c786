"""``sorry-eval --record K DIR``: save the first K games of a tournament as replay files.

The tournament itself is untouched (it may run in worker processes); afterwards the first K
games are played again here, one by one, with the same agents and seeds (every game of a
tournament depends only on the tournament seed and its index), logging each action. The log
is written down by :func:`sorry_env.replay.record_game`, which re-plays it through the engine,
and each game is checked against the tournament's own record of it (winners and length)
before it is saved as ``DIR/game-0000.json`` etc. Read them with ``sorry-replay``.
"""

from __future__ import annotations

import pathlib

from sorry_env import files, replay

from .play import Table, game_seeds


def check_record_request(k: int, directory: str, games: int) -> tuple:
    """(K, DIR as a Path) once K is sensible and DIR is (made) writable; ValueError otherwise.
    Called before any game is played."""
    try:
        k = int(k)
    except ValueError:
        raise ValueError(f"--record K DIR: K must be a whole number of games, got {k!r}") from None
    if not 1 <= k <= games:
        raise ValueError(f"--record K DIR: K must be 1 .. --games ({games}), got {k}")
    path = pathlib.Path(directory)
    if path.exists() and not path.is_dir():
        raise ValueError(f"--record K DIR: {directory} is a file; name a directory for the replay files")
    try:
        files.make_writable_dir(path)
    except ValueError as error:
        raise ValueError(f"--record K DIR: {error}") from None
    return k, path


class _LoggingAgent:
    """An agent that writes every action it chooses into a shared list."""

    def __init__(self, agent, log: list):
        self._agent, self._log = agent, log

    def act(self, turn):
        action = self._agent.act(turn)
        self._log.append(int(action))
        return action

    def __getattr__(self, name):
        return getattr(self._agent, name)


def record_games(
    agent_specs, k: int, directory: pathlib.Path, seed: int, rules, max_turns: int, tournament_games: list | None = None
) -> list:
    """Play games 0..k-1 of the tournament again, logging their actions, and save each as a
    replay file. `tournament_games`: the tournament's per-game records, checked against.
    `rules`: the :class:`sorry_env.games.Game` played, or the board game's rules."""
    table = Table(agent_specs, rules, max_turns, seed)
    log: list = []
    table.agents = [_LoggingAgent(agent, log) for agent in table.agents]  # type: ignore[misc]  # an Agent by its interface
    paths = []
    for index in range(k):
        log.clear()
        outcome = table.play(index)
        if tournament_games is not None and index < len(tournament_games):
            expected = tournament_games[index]
            if (expected["winners"], expected["turns"]) != (outcome["winners"], outcome["turns"]):
                raise RuntimeError(
                    f"game {index} played again ended differently ({outcome['turns']} turns, "
                    f"winners {outcome['winners']}) from the tournament's ({expected['turns']} "
                    f"turns, winners {expected['winners']}): an agent is not reproducible from "
                    "its seed, so the replay would not be that game"
                )
        engine_seed = game_seeds(seed, index, len(table.agents))[0]
        players = [
            {"agent": spec, "label": label, "seat": seat}
            for spec, label, seat in zip(table.specs, table.labels, outcome["seats"])
        ]
        record = replay.record_game(
            table.game,
            table.seats,
            engine_seed,
            list(log),
            outcome["first_seat"],
            max_turns,
            players,
            {"tool": "sorry-eval", "tournament_seed": seed, "game": index},
        )
        paths.append(replay.save(record, directory / f"game-{index:04d}.json"))
    return paths
