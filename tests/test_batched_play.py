"""Batched policy play: a policy agent decides many games' turns in one forward, and
sorry-eval's lockstep games give the same records as one game at a time."""

import numpy as np
import pytest
import torch
from float_margins import decisive, near_tie  # tests/ is on sys.path (pytest rootdir import mode)

from sorry_env.agents import Turn, make_agent
from sorry_env.agents import policy as policy_module
from sorry_env.agents.arena.play import Table
from sorry_env.agents.arena.tournament import run_tournament
from sorry_env.agents.policy import PolicyAgent
from sorry_env.board import game
from sorry_env.board.policy_input import policy_input

POLICY = "checkpoints/sorry-2p.safetensors"


@pytest.mark.float_kernels
def test_act_turns_equals_act_one_at_a_time():
    agent = PolicyAgent(POLICY, seed=0)
    rng = np.random.default_rng(0)
    turns = []
    for seed in range(12):
        state = game.new_state("hasbro2003", 2, seed=seed)
        for _ in range(seed * 3):  # positions from a few moves in
            if game.winner(state) is None:
                legal = game.legal_actions(state, "hasbro2003")
                state = game.step(state, "hasbro2003", legal[rng.integers(len(legal))])
        turns.append(Turn.from_state(state, "hasbro2003", rng))
    batch = agent.act_turns(turns)
    inputs = np.array([policy_input(t.state, game.rules_array(t.rules), t.seat) for t in turns])
    masks = np.zeros((len(turns), agent.actor.n_actions), dtype=bool)
    for k, turn in enumerate(turns):
        masks[k, turn.legal] = True
    with torch.no_grad():
        logits = policy_module.masked_logits(agent.actor(torch.from_numpy(inputs)), masks).numpy()
    compared = [k for k in range(len(turns)) if decisive(logits[k])]
    assert len(compared) >= 10  # near-ties (where either move is the policy's best on some CPU) are rare
    assert [batch[k] for k in compared] == [agent.act(turns[k]) for k in compared]
    assert agent.act_turns([]).shape == (0,)
    assert agent.acts_in_batches and not PolicyAgent(POLICY, sample=True).acts_in_batches


@pytest.mark.float_kernels
def test_lockstep_records_equal_sequential(batch_gaps):
    table = Table([POLICY, "random"], "hasbro2003", 2000, seed=3)
    games = range(2, 10)
    records = table.play_lockstep(games)
    assert len(batch_gaps) > 100 and not any(map(near_tie, batch_gaps))
    assert records == [table.play(g) for g in games]


@pytest.mark.float_kernels
def test_lockstep_with_a_policy_on_both_sides_and_truncation(batch_gaps):
    table = Table([POLICY, POLICY], "hasbro2003", 40, seed=0)  # every game stops at 40 cards
    records = table.play_lockstep(range(4))
    assert len(batch_gaps) > 50 and not any(map(near_tie, batch_gaps))
    assert records == [table.play(g) for g in range(4)]
    assert all(r["winners"] == [] and r["turns"] == 40 for r in records)


@pytest.mark.ci_slow  # over 10 s: CI runs it after the README's test command
def test_tournament_with_a_policy_is_reproducible_whatever_the_workers():
    one = run_tournament([POLICY, "random"], games=8, seed=1, workers=1)
    two = run_tournament([POLICY, "random"], games=8, seed=1, workers=2)
    assert one["games"] == two["games"]


def test_non_policy_lineups_play_one_game_at_a_time():
    table = Table(["random", "greedy"], "hasbro2003", 2000, seed=0)
    assert not any(getattr(a, "acts_in_batches", False) for a in table.agents)
    assert table.play_many([0, 1]) == [table.play(0), table.play(1)]


def test_act_turns_refuses_mixed_rules():
    agent = make_agent(POLICY)
    rng = np.random.default_rng(0)
    a = Turn.from_state(game.new_state("hasbro2003", 2, seed=0), "hasbro2003", rng)
    b = Turn.from_state(game.new_state("hasbro2003_fast", 2, seed=0), "hasbro2003_fast", rng)
    with pytest.raises(ValueError, match="same rules"):
        agent.act_turns([a, b])
