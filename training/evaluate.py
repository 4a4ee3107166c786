"""Tournaments between Sorry! agents: win rates with 95% Wilson intervals, game length,
first-mover advantage and openskill ratings, as a terminal table, JSON, CSV and a PNG chart.

Command line (``sorry-eval`` or ``python -m training.evaluate``)::

    sorry-eval heuristic random --games 2000 --seed 0
    sorry-eval heuristic random random random --games 2000 --out runs/eval/heuristic-4p
    sorry-eval checkpoints/policy.safetensors "montecarlo:iterations=400" --rules hasbro2003_fast
    sorry-eval trained heuristic heuristic heuristic --rules hasbro2013  # the game's shipped policy
    sorry-eval --game express greedy random random --games 2000  # Sorry! Express (docs/express.md)

List one agent per player: anything :func:`agents.make_agent` accepts (a registered name,
with optional settings, a policy file, an sb3 MaskablePPO ``.zip`` trained on the Gymnasium
env, or your own agent as ``package.module:Name``); :func:`run_tournament` also takes
:class:`agents.Agent` objects. ``--league A B C ...`` plays every pair instead
(:mod:`training.league`). Each playing process gives torch one thread (``--torch-threads``
or ``SORRY_TORCH_THREADS`` to change). An agent listed twice is two players, labelled
``random`` and ``random#2``. Written to ``--out`` (default ``runs/eval``): ``results.json`` (everything
below), ``agents.csv``, ``turn_order.csv``, ``games.csv`` (one row per game) and
``win_rates.png``.

Fair seating
------------
With ``n`` players in ``seats`` (the engine's default seats: 0 and 2 for two players),
game ``g`` puts lineup entry ``i`` in ``seats[(i + g) % n]`` and lets ``seats[(g // n) % n]``
move first. Every ``n`` consecutive games put each agent once in every seat and once in
the first mover's seat; every ``n**2`` games play each (seating, first mover) pair once, so
with ``games`` a multiple of ``n**2`` both are exactly balanced (``seating_balanced`` in the
results). The engine draws the first player from the game's seed; we overwrite the
player to move (``engine.set_to_move``) of the fresh :func:`sorry_env.game.new_state` before anything is
played (the first card or the hands are already dealt, but they do not depend on who
plays first).

Games
-----
Played on the compiled engine directly (no PettingZoo env): each turn the agent to move gets
``agents.Turn.from_state(...)``, so it never sees the draw order. A game still
running after ``max_turns`` cards played (the engine's ``TURN`` counter, as the env's
truncation) is a draw: nobody wins, and the ratings count it as a tie between all players.
Game length is measured in the same turns.

Under team rules (4 players) lineup entries ``i`` and ``i + 2`` are partners (the rotation
keeps them opposite): both are credited with their side's wins, so equal strength means a
1/2 win rate, and the ratings rate them as one openskill team. Under play-for-points rules
each agent's mean end-of-game score (:func:`sorry_env.scoring.scores`) is reported too.

Reproducibility
---------------
Everything random in game ``g`` (the pack order, every agent's ``reset`` seed, the
scrambled draw pile of the public views) comes from ``numpy.random.SeedSequence([seed, g])``,
and ratings are updated in game order, so the results depend on the seed, never on the
number of workers.

Library use (periodic evaluation during training)::

    from training.evaluate import run_tournament
    results = run_tournament(["checkpoints/policy.safetensors", "heuristic"], games=400, seed=1)
    results["agents"][0]["win_rate"], results["agents"][0]["ci_low"]

With more than one worker the games run in spawned processes, which re-import the calling
script: call it under ``if __name__ == "__main__":`` (a script without the guard gets a
RuntimeError saying so) or pass ``workers=1``.
"""

import argparse
import copy
import csv
import json
import math
import multiprocessing
import os
import pathlib
import pickle
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import openskill.models
from matplotlib.figure import Figure
from tqdm import tqdm

import agents
from sorry_env import engine as E
from sorry_env import game
from sorry_env.express.game import DEFAULT_MAX_TURNS as EXPRESS_MAX_TURNS
from sorry_env.rules import DEFAULT_MAX_TURNS, PRESETS, Rules, get_rules
from sorry_env.scoring import scores

Z_95 = 1.959963984540054  # two-sided 95% quantile of the standard normal


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

    def __init__(self, agent_specs: list, rules: Rules | str, max_turns: int, seed: int):
        self.specs = list(agent_specs)  # specs, Agent objects or functions (agents.as_agent)
        self.agents = [agents.as_agent(spec) for spec in self.specs]
        self.labels = agent_labels(self.specs)
        self.rules = get_rules(rules)
        self.rules_array = game.rules_array(self.rules)
        self.seats = game.DEFAULT_SEATS[len(self.agents)]
        self.max_turns = max_turns
        self.seed = seed
        for agent in self.agents:  # a network made for another game: refused before any play
            agent.check_game(self.rules, len(self.agents))

    def play(self, game_index: int) -> dict:
        """One game; returns its record. `winners`: the lineup entries sharing the win (the
        winner, and its partner under team rules; empty if truncated); `scores`: each entry's
        points under play-for-points rules (None otherwise or if truncated)."""
        entry_seats, first_seat = seating(game_index, self.seats)
        engine_seed, view_seed, *reset_seeds = game_seeds(self.seed, game_index, len(self.agents))
        for agent, reset_seed in zip(self.agents, reset_seeds):
            agent.reset(reset_seed)
        entry_at_seat = {seat: i for i, seat in enumerate(entry_seats)}
        view_rng = np.random.default_rng(view_seed)

        state = game.new_state(self.rules, seats=self.seats, seed=engine_seed)
        E.set_to_move(state, first_seat)
        while E.is_running(state, self.max_turns):
            seat = int(E.to_move(state))
            legal = game.legal_actions(state, self.rules)
            turn = agents.Turn.from_state(state, self.rules, view_rng, legal)
            entry = entry_at_seat[seat]
            self._step(state, game_index, entry, legal, self.agents[entry].act(turn))
        return self._record(game_index, state, entry_seats, first_seat)

    def _step(self, state, game_index, entry, legal, action):
        if not isinstance(action, (int, np.integer)) or int(action) not in legal.tolist():
            raise ValueError(
                f"agent {self.labels[entry]!r} chose illegal action {action!r} in game "
                f"{game_index}; legal: {legal.tolist()}"
            )
        E.step(state, self.rules_array, int(action))

    def play_many(self, game_indices):
        """Records of these games: in lockstep (:meth:`play_lockstep`) when an agent of the
        lineup acts in batches, else one after the other."""
        if any(getattr(agent, "acts_in_batches", False) for agent in self.agents):
            return self.play_lockstep(game_indices)
        return [self.play(g) for g in game_indices]

    def play_lockstep(self, game_indices):
        """Play these games side by side: each lineup entry that acts in batches (a policy
        network: ``acts_in_batches``, ``act_turns``) decides the pending turns of all games
        in one call (one forward); the other agents get their own instance per game and act
        as in :meth:`play`. Every game draws its seeds, views and agent seeds exactly as in
        :meth:`play`, so the records are the same (up to ties a batched forward's rounding
        could break differently)."""
        batched = {i for i, agent in enumerate(self.agents) if getattr(agent, "acts_in_batches", False)}
        games = []
        for game_index in game_indices:
            entry_seats, first_seat = seating(game_index, self.seats)
            engine_seed, view_seed, *reset_seeds = game_seeds(self.seed, game_index, len(self.agents))
            # a fresh instance per game for the agents that act one at a time (an object
            # given by the caller is copied: games side by side must not share its state)
            players = [
                agent if i in batched else (agents.make_agent(spec) if isinstance(spec, str) else copy.deepcopy(agent))
                for i, (agent, spec) in enumerate(zip(self.agents, self.specs))
            ]
            for agent, reset_seed in zip(players, reset_seeds):
                agent.reset(reset_seed)
            state = game.new_state(self.rules, seats=self.seats, seed=engine_seed)
            E.set_to_move(state, first_seat)
            games.append(
                (
                    game_index,
                    state,
                    entry_seats,
                    first_seat,
                    {seat: i for i, seat in enumerate(entry_seats)},
                    np.random.default_rng(view_seed),
                    players,
                )
            )
        running = games
        buf = np.empty(E.n_actions(self.rules_array), dtype=np.int64)
        while running:
            waiting = {i: [] for i in batched}  # entry -> [(game, turn, legal)]
            for g in running:
                game_index, state, _, _, entry_at_seat, view_rng, players = g
                while E.is_running(state, self.max_turns):
                    # game.legal_actions without its checks (the game runs): this loop is hot
                    legal = np.sort(buf[: E.legal_actions(state, self.rules_array, buf)])
                    turn = agents.Turn.from_state(state, self.rules, view_rng, legal)
                    entry = entry_at_seat[int(E.to_move(state))]
                    if entry not in batched:
                        self._step(state, game_index, entry, legal, players[entry].act(turn))
                    elif len(legal) == 1:  # the masked argmax of a lone legal move is that move
                        self._step(state, game_index, entry, legal, int(legal[0]))
                    else:
                        waiting[entry].append((g, turn, legal))
                        break
            for entry, pending in waiting.items():
                actions = self.agents[entry].act_turns([turn for _, turn, _ in pending]) if pending else []
                for (g, _, legal), action in zip(pending, actions):
                    self._step(g[1], g[0], entry, legal, int(action))
            running = [g for g in running if E.is_running(g[1], self.max_turns)]
        return [self._record(g[0], g[1], g[2], g[3]) for g in games]

    def _record(self, game_index, state, entry_seats, first_seat):
        winner_seat = game.winner(state)
        winners = (
            []
            if winner_seat is None
            else [i for i, seat in enumerate(entry_seats) if game.same_side(self.rules, seat, winner_seat)]
        )
        points = None
        if winner_seat is not None and self.rules.scoring != "none":
            seat_points = scores(state, self.rules)
            points = [seat_points[seat] for seat in entry_seats]
        return {
            "game": game_index,
            "seats": list(entry_seats),
            "first_seat": first_seat,
            "winners": winners,
            "scores": points,
            "turns": int(E.turns_played(state)),
        }


_worker_table = None  # the Table of a worker process


def _start_worker(agent_specs, rules, max_turns, seed, table_class, torch_threads=None):
    global _worker_table
    _worker_table = table_class(agent_specs, rules, max_turns, seed)
    agents.set_torch_threads(torch_threads)  # torch is loaded if a policy plays: one thread per worker


def _play_many(table, game_indices):
    """A table's records of these games (lockstep when it can: Table.play_many)."""
    if hasattr(table, "play_many"):
        return table.play_many(game_indices)
    return [table.play(g) for g in game_indices]


def _play_in_worker(game_indices):
    return _play_many(_worker_table, game_indices)


LOCKSTEP_CHUNK = 250  # games played side by side per job when a policy acts in batches


def check_picklable(agent_specs: list) -> None:
    """ValueError naming an agent object that cannot be sent to worker processes."""
    for spec in agent_specs:
        if isinstance(spec, str):
            continue
        try:
            pickle.dumps(spec)
        except Exception as error:  # pickling raises many types (PicklingError, TypeError, AttributeError)
            raise ValueError(
                f"agent {agents.agent_label(spec)!r} cannot be sent to worker processes ({error}); "
                "define it at the top level of a module, give it as package.module:Name, "
                "or pass workers=1"
            ) from None


def play_games(
    agent_specs: list,
    games: int,
    seed: int,
    rules: Rules | str | None,
    max_turns: int,
    workers: int,
    progress: bool,
    table_class: type = Table,
    torch_threads: int | None = None,
) -> list[dict]:
    """Records of games 0..games-1 in index order, played by `workers` processes, each with
    a `table_class` (Table; training.express_evaluate.ExpressTable for Sorry! Express) and
    `torch_threads` torch threads (default: SORRY_TORCH_THREADS, else 1)."""
    # Built here first so that a bad agent spec fails before any worker starts.
    table = table_class(agent_specs, rules, max_turns, seed)
    if workers > 1:
        check_picklable(agent_specs)
    lockstep = hasattr(table, "play_many") and any(getattr(agent, "acts_in_batches", False) for agent in table.agents)
    chunk = max(1, min(LOCKSTEP_CHUNK, -(-games // workers))) if lockstep else max(1, min(16, games // (8 * workers)))
    if workers == 1:
        agents.set_torch_threads(torch_threads)
    # Game 0 first, here and before the progress bar: on a cold numba cache this is where the
    # compiling happens (so its notice stands on its own line, not after a bar stuck at 0%),
    # and it happens once: spawned workers then load the machine code from the disk cache
    # instead of each compiling it again.
    records = _play_many(table, range(min(1, games)))
    with tqdm(total=games, initial=len(records), unit="game", disable=not progress) as bar:
        if workers == 1:
            step = chunk if lockstep else 1
            for start in range(len(records), games, step):
                records.extend(_play_many(table, range(start, min(start + step, games))))
                bar.update(len(records) - bar.n)
            return records
        if games <= len(records):
            return records
        # spawn, not fork: a forked child of a process whose torch threads have run (a policy
        # agent, a training loop) hangs in its first torch call. A spawned child re-imports
        # the caller's main script; without the `if __name__ == "__main__":` guard it dies
        # there, and an executor (unlike multiprocessing.Pool, which would respawn it
        # forever) reports that as a broken pool.
        context = multiprocessing.get_context("spawn")
        try:
            with ProcessPoolExecutor(
                workers, context, _start_worker, (agent_specs, rules, max_turns, seed, table_class, torch_threads)
            ) as pool:
                first = len(records)
                jobs = [
                    pool.submit(_play_in_worker, range(g, min(g + chunk, games))) for g in range(first, games, chunk)
                ]
                for job in as_completed(jobs):  # the bar moves as chunks finish, in any order
                    records.extend(job.result())
                    bar.update(len(job.result()))
        except BrokenProcessPool as error:
            raise RuntimeError(
                "a tournament worker process died (out of memory, a crash, or, most often, a "
                'script without the `if __name__ == "__main__":` guard: the workers re-import '
                "the main script); pass workers=1 to play in this process"
            ) from error
    return sorted(records, key=lambda record: record["game"])


# ---- statistics -----------------------------------------------------------------------------
def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval (low, high) for a binomial proportion successes/trials."""
    p = successes / trials
    shrink = 1 + z**2 / trials
    centre = (p + z**2 / (2 * trials)) / shrink
    half_width = z / shrink * math.sqrt(p * (1 - p) / trials + z**2 / (4 * trials**2))
    return centre - half_width, centre + half_width


def win_rate_with_interval(wins: int, games: int) -> dict:
    """A tally as {wins, games, win_rate, ci_low, ci_high}: the rate with its Wilson interval
    (no games are played here; training.match.play_win_rate plays them)."""
    low, high = wilson_interval(wins, games)
    return {"wins": wins, "games": games, "win_rate": wins / games, "ci_low": low, "ci_high": high}


def sides(players: int, rules: Rules | str | None) -> list[list[int]]:
    """The groups of lineup entries that win together: under team rules partners sit
    opposite, and the rotation keeps entries i and i + 2 opposite; otherwise (and for a game
    without rule presets, `rules` None: Sorry! Express) everyone alone."""
    if rules is None:
        return [[i] for i in range(players)]
    groups = []
    for i in range(players):
        if not any(i in group for group in groups):
            groups.append([j for j in range(players) if game.same_side(rules, i, j)])
    return groups


def skill_ratings(records: list[dict], players: int, rules: Rules | str | None) -> list[dict]:
    """openskill Plackett-Luce ratings of the lineup entries after rating the games in order,
    partners as one team: the winning side ranked first and the others tied second; a
    truncated game ties everyone."""
    model = openskill.models.PlackettLuce()
    ratings = [model.rating() for _ in range(players)]
    groups = sides(players, rules)
    for record in records:
        teams = [[ratings[i] for i in group] for group in groups]
        ranks = [1 if not record["winners"] or group[0] in record["winners"] else 2 for group in groups]
        for group, team in zip(groups, model.rate(teams, ranks=ranks)):
            for i, rating in zip(group, team):
                ratings[i] = rating
    return [{"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()} for r in ratings]


def entry_at_turn_position(record: dict, seats: tuple[int, ...], position: int) -> int:
    """The lineup entry that moved `position`-th (0: first) in the game of `record`."""
    seat = seats[(seats.index(record["first_seat"]) + position) % len(seats)]
    return record["seats"].index(seat)


def mean_score(records: list[dict], entry: int) -> float | None:
    """Mean points of a lineup entry over the games that were scored, or None."""
    points = [record["scores"][entry] for record in records if record["scores"] is not None]
    return float(np.mean(points)) if points else None


def _short(spec: str) -> str:
    name, colon, settings = spec.partition(":")
    if not colon or "=" not in settings:  # a file, a bare name, or package.module:Name
        return pathlib.Path(spec).name
    parts = [item.partition("=") for item in settings.split(",")]
    return name + ":" + ",".join(k + eq + (pathlib.Path(v).name if "/" in v else v) for k, eq, v in parts)


def agent_labels(agent_specs: list[str]) -> list[str]:
    """Display names: a policy file's name, a registered agent's spec with any file paths in
    its settings shortened to file names, an agent object's name; '#k' on the k-th repeat."""
    names = [_short(spec) if isinstance(spec, str) else agents.agent_label(spec) for spec in agent_specs]
    return [
        name if names[:i].count(name) == 0 else f"{name}#{names[:i].count(name) + 1}" for i, name in enumerate(names)
    ]


def summarize(
    records: list[dict],
    agent_specs: list[str],
    seed: int,
    rules: Rules | str | None,
    max_turns: int,
    seats: tuple[int, ...] | None = None,
    rules_name: str | None = None,
) -> dict:
    """The results dict (JSON-able) of a finished tournament. `seats` defaults to the
    engine's default seats; `rules` None with a `rules_name` is a game without rule presets
    (Sorry! Express: seats 0..n-1, rules_name "express")."""
    players = len(agent_specs)
    seats = game.DEFAULT_SEATS[players] if seats is None else tuple(seats)
    games = len(records)
    ratings = skill_ratings(records, players, rules)
    expected = len(sides(players, rules)[0]) / players  # an entry's share of the wins at equal strength
    agent_rows = []
    for i, (spec, label) in enumerate(zip(agent_specs, agent_labels(agent_specs))):
        agent_rows.append(
            {
                "agent": label,
                "spec": spec if isinstance(spec, str) else label,
                **win_rate_with_interval(sum(i in record["winners"] for record in records), games),
                "expected": expected,
                "rating_mu": ratings[i]["mu"],
                "rating_sigma": ratings[i]["sigma"],
                "rating_ordinal": ratings[i]["ordinal"],
                "mean_score": mean_score(records, i),
                "moved_first": sum(record["seats"][i] == record["first_seat"] for record in records),
                "games_at_seat": {str(seat): sum(record["seats"][i] == seat for record in records) for seat in seats},
            }
        )
    turn_order = []
    for position in range(players):
        wins = sum(entry_at_turn_position(record, seats, position) in record["winners"] for record in records)
        turn_order.append({"position": position, **win_rate_with_interval(wins, games), "expected": expected})
    return {
        "config": {
            "agents": [row["spec"] for row in agent_rows],
            "players": players,
            "seats": list(seats),
            "games": games,
            "seed": seed,
            "rules": get_rules(rules).name if rules is not None else rules_name,
            "max_turns": max_turns,
        },
        "seating_balanced": games % players**2 == 0,
        "agents": agent_rows,
        "turn_order": turn_order,
        "first_mover_advantage": turn_order[0]["win_rate"] - expected,
        "mean_turns": float(np.mean([record["turns"] for record in records])),
        "truncated": sum(not record["winners"] for record in records),
        "games": records,
    }


def run_tournament(
    agent_specs: list,
    players: int | None = None,
    games: int = 1000,
    seed: int = 0,
    rules: Rules | str = "hasbro2003",
    workers: int | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    progress: bool = False,
    torch_threads: int | None = None,
) -> dict:
    """Play `games` games between `agent_specs` (one per player: a spec, an agents.Agent or a
    function from the observation dict to an action) and return the results dict:
    ``config``, ``agents`` (win rate, Wilson interval, rating, mean score per lineup entry),
    ``turn_order`` (win rate by position in turn order), ``first_mover_advantage``,
    ``mean_turns``, ``truncated`` and the per-game ``games`` records. `workers` defaults to
    the number of cores; agent objects must pickle to reach them. `torch_threads`: torch
    threads in each playing process (default: SORRY_TORCH_THREADS, else 1)."""
    agent_specs = list(agent_specs)
    players = len(agent_specs) if players is None else players
    if players not in game.DEFAULT_SEATS:
        raise ValueError(f"players must be 2, 3 or 4, got {players!r}")
    if len(agent_specs) != players:
        raise ValueError(
            f"{len(agent_specs)} agents listed for {players} players; list one agent per "
            f"player, e.g. heuristic {' '.join(['random'] * (players - 1))}"
        )
    game.seats_for(players, rules=rules)
    workers = os.cpu_count() if workers is None else workers
    for name, value in (("games", games), ("max_turns", max_turns), ("workers", workers)):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    workers = min(workers, games)
    records = play_games(agent_specs, games, seed, rules, max_turns, workers, progress, torch_threads=torch_threads)
    return summarize(records, agent_specs, seed, rules, max_turns)


# ---- output ---------------------------------------------------------------------------------
def percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def format_table(results: dict) -> str:
    """The results as text for the terminal."""
    config = results["config"]
    rows = results["agents"]
    scored = rows[0]["mean_score"] is not None
    lines = [
        f"{config['players']} players (seats {', '.join(map(str, config['seats']))}), rules "
        f"{config['rules']}, {config['games']} games, seed {config['seed']}",
        "",
        f"{'agent':<20} {'win rate':>8}  {'95% CI':<15} {'wins':>11}  {'rating mu ± sigma':>17}  {'ordinal':>7}"
        + (f"  {'mean score':>10}" if scored else ""),
    ]
    for row in rows:
        lines.append(
            f"{row['agent']:<20} {percent(row['win_rate']):>8}  "
            f"{'[' + percent(row['ci_low']) + ', ' + percent(row['ci_high']) + ']':<15} "
            f"{str(row['wins']) + '/' + str(row['games']):>11}  "
            f"{row['rating_mu']:>8.2f} ± {row['rating_sigma']:<6.2f}  {row['rating_ordinal']:>7.2f}"
            + (f"  {row['mean_score']:>10.1f}" if scored else "")
        )
    first = results["turn_order"][0]
    lines += [
        "",
        f"equal strength: {percent(rows[0]['expected'])} each"
        + (
            f" (partners win together: {rows[0]['agent']} + {rows[2]['agent']}, "
            f"{rows[1]['agent']} + {rows[3]['agent']})"
            if rows[0]["expected"] > 1 / config["players"]
            else ""
        ),
        f"first mover won {percent(first['win_rate'])} [{percent(first['ci_low'])}, {percent(first['ci_high'])}] "
        f"(expected {percent(first['expected'])}; advantage {100 * results['first_mover_advantage']:+.1f} points)",
        "win rate by turn position: "
        + ", ".join(f"{row['position'] + 1}. {percent(row['win_rate'])}" for row in results["turn_order"]),
        f"mean game length {results['mean_turns']:.1f} turns "
        f"({'rolls' if config['rules'] == 'express' else 'cards played'}); "
        f"{results['truncated']} games truncated at {config['max_turns']} turns (draws)",
    ]
    if not results["seating_balanced"]:
        lines.append(
            f"note: {config['games']} games is not a multiple of {config['players'] ** 2}: "
            "seats and first moves are balanced only approximately"
        )
    return "\n".join(lines)


def write_csv(path: str | pathlib.Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def agent_csv_rows(results: dict) -> list[dict]:
    """Agent rows with `games_at_seat` spread over one column per seat."""
    rows = []
    for row in results["agents"]:
        flat = {key: value for key, value in row.items() if key != "games_at_seat"}
        flat.update({f"games_at_seat_{seat}": n for seat, n in row["games_at_seat"].items()})
        rows.append(flat)
    return rows


def game_csv_rows(results: dict) -> list[dict]:
    """One row per game: who won (empty: truncated), its length, every agent's seat and,
    under play-for-points rules, points (empty: truncated)."""
    labels = [row["agent"] for row in results["agents"]]
    scored = results["agents"][0]["mean_score"] is not None
    rows = []
    for record in results["games"]:
        row = {
            "game": record["game"],
            "first_seat": record["first_seat"],
            "winners": " ".join(labels[i] for i in record["winners"]),
            "turns": record["turns"],
            **{f"seat_{label}": seat for label, seat in zip(labels, record["seats"])},
        }
        if scored:
            row.update(
                {
                    f"score_{label}": "" if record["scores"] is None else record["scores"][i]
                    for i, label in enumerate(labels)
                }
            )
        rows.append(row)
    return rows


def plot_win_rates(results: dict, path: str | pathlib.Path) -> None:
    """Bar chart of the win rates with their 95% intervals and the equal-strength line."""
    rows = results["agents"]
    config = results["config"]
    rates = [row["win_rate"] for row in rows]
    errors = [[row["win_rate"] - row["ci_low"] for row in rows], [row["ci_high"] - row["win_rate"] for row in rows]]
    fig = Figure(figsize=(1.6 * len(rows) + 2.5, 4.5), layout="constrained")
    ax = fig.subplots()
    bars = ax.bar([row["agent"] for row in rows], rates, yerr=errors, capsize=6, color="tab:blue")
    ax.bar_label(bars, labels=[percent(rate) for rate in rates], label_type="center", color="white")
    ax.axhline(rows[0]["expected"], color="gray", linestyle="--", label="equal strength")
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate (95% Wilson interval)")
    ax.set_title(f"{config['players']} players, {config['rules']}, {config['games']} games, seed {config['seed']}")
    ax.legend(loc="upper right")
    fig.savefig(path, dpi=120)


def write_outputs(results: dict, out_dir: str | pathlib.Path) -> list[pathlib.Path]:
    """results.json (all but the per-game records), agents.csv, turn_order.csv, games.csv and
    win_rates.png in `out_dir`; returns their paths."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        name: out_dir / name for name in ("results.json", "agents.csv", "turn_order.csv", "games.csv", "win_rates.png")
    }
    summary = {key: value for key, value in results.items() if key != "games"}
    paths["results.json"].write_text(json.dumps(summary, indent=2) + "\n")
    write_csv(paths["agents.csv"], agent_csv_rows(results))
    write_csv(paths["turn_order.csv"], results["turn_order"])
    write_csv(paths["games.csv"], game_csv_rows(results))
    plot_win_rates(results, paths["win_rates.png"])
    return list(paths.values())


# ---- command line ---------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    parser = argparse.ArgumentParser(
        prog="sorry-eval",
        description="A tournament between Sorry! agents with rotated seats and first moves.",
        epilog="examples:\n  sorry-eval heuristic random --games 2000\n"
        "  sorry-eval --game express greedy random random --games 2000\n"
        "  sorry-eval heuristic random random random --games 2000 --out runs/eval/heuristic-4p\n"
        "  sorry-eval --league heuristic greedy random --games 400 --out runs/eval/league",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "agents",
        nargs="+",
        metavar="AGENT",
        help=f"one per player: a registered agent ({', '.join(sorted(agents.AGENTS))}), "
        "a policy file (.safetensors; sorry-export makes one from a training run), an "
        "sb3-contrib MaskablePPO model (.zip) trained on sorry_env/Sorry-v1, or your own "
        "agent as package.module:Name; with --league, the league's agents",
    )
    parser.add_argument(
        "--league",
        action="store_true",
        help="play every pair (every set of --players agents) of the listed agents; writes a "
        "win-share matrix (table, league_matrix.csv, league.png) and ratings",
    )
    parser.add_argument(
        "--players",
        type=int,
        choices=(2, 3, 4),
        help="number of players; must match the agents listed (default: their number)",
    )
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0, help="the same seed gives the same results")
    parser.add_argument(
        "--game",
        default="sorry",
        choices=("sorry", "express"),
        help="sorry (the board game) or express (Sorry! Express, the dice game; agents: "
        "random, greedy, heuristic, expectimax, montecarlo with the same settings syntax, or an "
        "Express policy file; see docs/express.md)",
    )
    parser.add_argument("--rules", choices=sorted(PRESETS), help="board-game rules (default: hasbro2003)")
    parser.add_argument(
        "--max-turns",
        type=int,
        help=f"cards played (express: turns) before a game is stopped and counted as a draw "
        f"(default: {DEFAULT_MAX_TURNS}; express: {EXPRESS_MAX_TURNS})",
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="processes (default: all cores)")
    parser.add_argument("--out", default="runs/eval", help="directory for results.json, CSVs and win_rates.png")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--record",
        nargs=2,
        metavar=("K", "DIR"),
        help="also save the first K games as replay files DIR/game-0000.json ... (sorry-replay "
        "prints and animates them; they are played again after the tournament)",
    )
    parser.add_argument(
        "--torch-threads",
        type=int,
        help="torch threads per playing process (default: SORRY_TORCH_THREADS, else 1; policies "
        "answer one position at a time, where more threads only fight over the cores)",
    )
    return parser, parser.parse_args(argv)


def check_out_dir(out) -> None:
    """ValueError unless `out` is (or can be created as) a writable directory: checked
    before the games, so a long tournament never ends in an unwritable folder."""
    path = pathlib.Path(out)
    if path.exists() and not path.is_dir():
        raise ValueError(f"--out {out} is a file; name a directory for the results")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"--out {out}: {existing} is a file, so no directory can be made there")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out}: {existing} is not writable")


def main(argv: list[str] | None = None) -> None:
    parser, args = parse_args(argv)
    try:
        check_out_dir(args.out)
    except ValueError as error:
        parser.error(str(error))
    if args.torch_threads is not None and args.torch_threads < 1:
        parser.error(f"--torch-threads must be at least 1, got {args.torch_threads}")
    if args.record:
        from .record import check_record_request, record_games

        if args.game != "sorry":
            parser.error("--record saves board-game replays; Sorry! Express (--game express) games cannot be recorded")
        try:
            record_k, record_dir = check_record_request(*args.record, args.games)
        except ValueError as error:
            parser.error(str(error))
    start = time.perf_counter()
    if args.league:
        from .league import format_league, run_league, write_league

        if args.game != "sorry":
            parser.error("--league plays the board game (--game sorry) only")
        try:
            league = run_league(
                args.agents,
                args.players or 2,
                args.games,
                args.seed,
                args.rules or "hasbro2003",
                args.workers,
                args.max_turns,
                not args.no_progress,
                args.torch_threads,
            )
        except ValueError as error:
            parser.error(str(error))
        print(format_league(league))
        print(f"league played in {time.perf_counter() - start:.1f} s")
        for path in write_league(league, args.out):
            print(f"wrote {path}")
        return
    if args.game == "sorry" and agents.catalog.TRAINED in args.agents:
        # "trained": the shipped policy of this game (agents.catalog); each player is one agent.
        try:
            rules = args.rules or "hasbro2003"
            args.agents = [agents.catalog.resolve_spec(spec, rules, len(args.agents)) for spec in args.agents]
        except ValueError as error:
            parser.error(str(error))
    try:
        if args.game == "express":
            from .express_evaluate import run_express_tournament

            if args.rules is not None:
                raise ValueError("--rules names board-game rules; Sorry! Express (--game express) has none")
            results = run_express_tournament(
                args.agents,
                args.players,
                args.games,
                args.seed,
                args.workers,
                args.max_turns,
                progress=not args.no_progress,
                torch_threads=args.torch_threads,
            )
        else:
            results = run_tournament(
                args.agents,
                args.players,
                args.games,
                args.seed,
                args.rules or "hasbro2003",
                args.workers,
                DEFAULT_MAX_TURNS if args.max_turns is None else args.max_turns,
                progress=not args.no_progress,
                torch_threads=args.torch_threads,
            )
    except ValueError as error:
        parser.error(str(error))
    except KeyboardInterrupt:
        parser.exit(130, "\nsorry-eval: interrupted; no results written\n")
    elapsed = time.perf_counter() - start
    print(format_table(results))
    print(f"{args.games} games in {elapsed:.1f} s ({args.games / elapsed:.0f} games/s)")
    try:
        paths = write_outputs(results, args.out)
    except OSError as error:
        parser.exit(1, f"sorry-eval: cannot write the results to {args.out}: {error}\n")
    for path in paths:
        print(f"wrote {path}")
    if args.record:
        max_turns = DEFAULT_MAX_TURNS if args.max_turns is None else args.max_turns
        for path in record_games(
            args.agents, record_k, record_dir, args.seed, args.rules or "hasbro2003", max_turns, results["games"]
        ):
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
