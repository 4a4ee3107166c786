"""Tournaments between Sorry! agents: win rates with 95% Wilson intervals, game length,
first-mover advantage and openskill ratings, as a terminal table, JSON, CSV and a PNG chart.

Command line (``sorry-eval`` or ``python -m sorry_env.agents.arena.cli``)::

    sorry-eval heuristic random --games 2000 --seed 0
    sorry-eval heuristic random random random --games 2000 --out runs/eval/heuristic-4p
    sorry-eval checkpoints/policy.safetensors "montecarlo:iterations=400" --rules hasbro2003_fast
    sorry-eval trained heuristic heuristic heuristic --rules hasbro2013  # the game's shipped policy
    sorry-eval --game ID greedy random random --games 2000  # another registered game (sorry_env.games)

List one agent per player: anything :func:`agents.make_agent` accepts (a registered name,
with optional settings, a policy file, an sb3 MaskablePPO ``.zip`` trained on the Gymnasium
env, or your own agent as ``package.module:Name``); :func:`run_tournament` also takes
:class:`agents.Agent` objects. ``--league A B C ...`` plays every pair instead
(:mod:`sorry_env.agents.arena.league`). Each playing process gives torch one thread (``--torch-threads``
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
player to move (``engine.set_to_move``) of the fresh :func:`sorry_env.board.game.new_state` before anything is
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
each agent's mean end-of-game score (:func:`sorry_env.board.scoring.scores`) is reported too.

Reproducibility
---------------
Everything random in game ``g`` (the pack order, every agent's ``reset`` seed, the
scrambled draw pile of the public views) comes from ``numpy.random.SeedSequence([seed, g])``,
and ratings are updated in game order, so the results depend on the seed, never on the
number of workers.

Library use (periodic evaluation during training)::

    from sorry_env.agents.arena.tournament import run_tournament
    results = run_tournament(["checkpoints/policy.safetensors", "heuristic"], games=400, seed=1)
    results["agents"][0]["win_rate"], results["agents"][0]["ci_low"]

With more than one worker the games run in spawned processes, which re-import the calling
script: call it under ``if __name__ == "__main__":`` (a script without the guard gets a
RuntimeError saying so) or pass ``workers=1``.

Modules: :mod:`~agents.arena.play` (seating, seeds, Table), :mod:`~agents.arena.pool` (the
process pool), :mod:`~agents.arena.stats` (statistics and the results dict),
:mod:`~agents.arena.tournament` (run_tournament, for every registered game), :mod:`~agents.arena.output` (table, CSV,
JSON, PNG), :mod:`~agents.arena.league`, :mod:`~agents.arena.record` (replays) and
:mod:`~agents.arena.cli` (``sorry-eval``).
"""
