"""Agents (issue #3): legal play under every preset and player count, winning moves found by
the search agents on literal positions, determinism under a seed, and no peeking at the
hidden cards.

Board facts used by the literal positions (docs/rules.md): seat 0's safety entry is square 2 and
Home is 6 steps past it, so a pawn on track square 57 is 11 steps from Home, on square 58
10 steps, and on safe k it is 5 - k steps.
"""

import numpy as np
import pytest

from sorry_env import PRESETS, state_from_dict
from sorry_env.agents import AGENTS, MonteCarloAgent, Turn, make_agent
from sorry_env.board import engine as E
from sorry_env.board import game

# Small budgets keep the file fast; the search logic is the same at any budget.
SPECS = ["random", "greedy", "heuristic", "expectimax", "montecarlo:iterations=24"]
SEARCH_SPECS = ["expectimax:depth=2", "expectimax", "expectimax:model_others=1", "montecarlo:iterations=64"]
H, S = ["home"], ["start"]


def turn_for(state, rules, rng):
    """What the acting player is shown (as the evaluator shows it)."""
    return Turn.from_state(state, rules, rng)


def play(rules, seats, agents, seed, max_turns):
    """Play one game (or its first `max_turns` cards); check every action is legal."""
    r = game.rules_array(rules)
    state = game.new_state(rules, seats=seats, seed=seed)
    rng = np.random.default_rng(seed)
    while E.is_running(state, max_turns):
        turn = turn_for(state, rules, rng)
        action = agents[turn.seat].act(turn)
        assert action in turn.legal, f"{agents[turn.seat].name} chose illegal {action} under {rules.name}"
        E.step(state, r, action)
    return state


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_agent_plays_only_legal_actions(preset):
    rules = PRESETS[preset]
    counts = (4,) if rules.teams != "none" else (2, 3, 4)
    for players in counts:
        seats = game.seats_for(players)
        for rotation in range(len(SPECS)):
            agents = {seat: make_agent(SPECS[(rotation + k) % len(SPECS)], seed=k) for k, seat in enumerate(seats)}
            play(rules, seats, agents, seed=100 * players + rotation, max_turns=60)


def test_heuristic_and_greedy_finish_games_under_every_preset():
    for preset, rules in PRESETS.items():
        seats = game.seats_for(4)
        agents = {seat: make_agent("heuristic" if seat % 2 else "greedy", seed=seat) for seat in seats}
        state = play(rules, seats, agents, seed=7, max_turns=2000)
        assert E.winner(state) >= 0, preset


def winning_move_cases():
    """(rules, state dict, description) where exactly one kind of move wins at once."""
    opponents = [["track", 30], ["track", 40], ["track", 20], S]
    return [
        # An 11 from 11 steps out goes Home; the swaps with the opponent's pawns do not.
        ("hasbro2003", {"to_move": 0, "card": "11", "pawns": [[H, H, H, ["track", 57]], None, opponents, None]}),
        # A 10 from 10 steps out goes Home; one step back does not.
        ("hasbro2003", {"to_move": 0, "card": "10", "pawns": [[H, H, H, ["track", 58]], None, opponents, None]}),
        # Three pawns each (2013 rules): the 10 again.
        (
            "hasbro2013",
            {"to_move": 0, "card": "10", "pawns": [[H, H, ["track", 58]], None, [["track", 30], S, S], None]},
        ),
        # A split seven brings the last two pawns Home (3 + 4; its only legal move, in two orders).
        ("hasbro2003", {"to_move": 0, "card": "7", "pawns": [[H, H, ["safe", 2], ["safe", 1]], None, opponents, None]}),
        # Four players: the 11 again, with more pawns to swap with.
        (
            "hasbro2003",
            {
                "to_move": 0,
                "card": "11",
                "pawns": [[H, H, H, ["track", 57]], [["track", 25], S, S, S], opponents, [["track", 10], S, S, S]],
            },
        ),
        # Play for points: of the five cards held, only the 5 wins.
        (
            "hasbro2003_points",
            {
                "to_move": 0,
                "pawns": [[H, H, H, ["safe", 0]], None, opponents, None],
                "hands": [{"5": 1, "1": 1, "4": 1, "10": 1, "11": 1}, None, {"2": 2, "3": 2, "SORRY": 1}, None],
            },
        ),
    ]


@pytest.mark.parametrize("spec", SEARCH_SPECS)
@pytest.mark.parametrize("case", range(len(winning_move_cases())))
def test_search_agents_take_a_winning_move(spec, case):
    preset, d = winning_move_cases()[case]
    rules = PRESETS[preset]
    state = state_from_dict(d, rules, seed=3)
    turn = turn_for(state, rules, np.random.default_rng(0))
    winning = [a for a in turn.legal if game.winner(game.after_move(state, rules, a)) == 0]
    agent = make_agent(spec, seed=0)
    assert agent.act(turn) in winning


def test_winning_move_cases_offer_losing_alternatives():
    """The literal positions above test a choice, except the split seven (whose only legal
    moves are the winning split in its two orders)."""
    for preset, d in winning_move_cases():
        rules = PRESETS[preset]
        state = state_from_dict(d, rules, seed=3)
        legal = game.legal_actions(state, rules)
        winning = [a for a in legal if game.winner(game.after_move(state, rules, a)) == 0]
        assert winning
        assert len(winning) < len(legal) or d.get("card") == "7"


def mid_game_turns(rules, players, n_turns, seed):
    """Real states from a heuristic-played game, a few dozen cards in."""
    r = game.rules_array(rules)
    seats = game.seats_for(players)
    agent = make_agent("heuristic")
    state = game.new_state(rules, seats=seats, seed=seed)
    rng = np.random.default_rng(seed)
    states = []
    while E.winner(state) < 0 and len(states) < n_turns:
        turn = turn_for(state, rules, rng)
        if E.turns_played(state) >= 20 and len(turn.legal) > 1:
            states.append(state.copy())
        E.step(state, r, agent.act(turn))
    return states


@pytest.mark.parametrize("spec", ["expectimax", "mcts:iterations=48"])
@pytest.mark.parametrize("preset", ["hasbro2003", "hasbro2003_points"])
def test_search_agents_are_deterministic_under_a_seed(spec, preset):
    rules = PRESETS[preset]
    states = mid_game_turns(rules, 2, 12, seed=5)

    def choices(agent_seed):
        agent = make_agent(spec)
        agent.reset(agent_seed)
        rng = np.random.default_rng(1)
        return [agent.act(turn_for(s, rules, rng)) for s in states]

    assert choices(11) == choices(11)


@pytest.mark.parametrize("spec", ["greedy", "heuristic", "expectimax", "mcts:iterations=48"])
@pytest.mark.parametrize("preset", ["hasbro2003", "hasbro2003_points"])
def test_choices_do_not_depend_on_the_hidden_cards(spec, preset):
    """The same public position with the hidden cards (draw-pile order; with hands the
    opponents' hands) arranged differently, as another view or another real game would
    hold them: a seeded agent makes the same choice."""
    rules = PRESETS[preset]
    for state in mid_game_turns(rules, 2, 10, seed=9):
        chosen = set()
        for view_seed in range(3):
            agent = make_agent(spec)
            agent.reset(4)
            chosen.add(agent.act(turn_for(state, rules, np.random.default_rng(view_seed))))
        assert len(chosen) == 1


def test_make_agent_reads_settings_and_rejects_bad_ones():
    assert make_agent("expectimax:depth=3").depth == 3
    mcts = make_agent("mcts:iterations=10,epsilon=0.25", seed=1)
    assert (mcts.iterations, mcts.epsilon) == (10, 0.25)
    assert set(AGENTS) >= {"random", "greedy", "heuristic", "expectimax", "montecarlo"}
    # The flat Monte Carlo agent's old name still works as a spec (its old module is gone).
    old = make_agent("mcts:iterations=3", seed=1)
    assert type(old) is MonteCarloAgent and old.iterations == 3
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("nobody")
    with pytest.raises(ValueError, match="key=value"):
        make_agent("mcts:fast")


def test_a_policy_without_torch_names_the_extra_to_install(monkeypatch):
    import sys

    from sorry_env import agents

    # As on an install of the environment alone: no torch (the modules that import it re-imported).
    monkeypatch.setitem(sys.modules, "torch", None)
    for module in ("sorry_env.agents.policy", "sorry_env.agents.game_policy", "sorry_env.agents.tensor_file"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    assert make_agent("heuristic").name  # scripted agents need no torch
    for spec in ("hasbro2003-2p", "checkpoints/sorry-2p.safetensors"):
        with pytest.raises(
            ModuleNotFoundError,
            match=r'needs the train extra \(torch is not installed\): pip install "sorry-env\[train\]"',
        ):
            agents.as_agent(spec)
    with pytest.raises(ModuleNotFoundError, match="train extra"):
        make_agent("azsearch:net=checkpoints/value-2p.safetensors")


def test_a_folder_given_as_an_agent_is_refused_with_what_to_pass(tmp_path):
    from sorry_env.agents import make_agent

    with pytest.raises(ValueError, match="is a folder, not an agent: pass a policy file"):
        make_agent(str(tmp_path))
    (tmp_path / "policy.safetensors").write_bytes(b"")  # a training run's folder holds one
    with pytest.raises(ValueError, match=r"pass its policy file \(.*policy\.safetensors\)"):
        make_agent(str(tmp_path))
    with pytest.raises(ValueError, match="is a folder, not an agent"):
        make_agent(str(tmp_path), game="express")


@pytest.mark.parametrize(
    "spec, message",
    [
        ("heuristic:depth=2", "agent 'heuristic' has no setting 'depth'.*its settings: none"),
        ("mcts:iterations=abc", "iterations in 'mcts:iterations=abc' must be an integer, got 'abc'"),
        ("mcts:iterations=10.7", "must be an integer, got '10.7'"),  # not silently 10
        ("expectimax:depth=1.5", "must be an integer"),
        ("expectimax:model_others=abc", "model_others .* must be an integer"),  # not silently on
        ("mcts:epsilon=abc", "epsilon .* must be a number"),
        ("mcts:weights=foo", "no setting 'weights'.*epsilon, iterations, rollout_plies, value"),
        ("random:seed=3", "no setting 'seed'"),
        ("expectimax:depth=0", "depth and samples must be at least 1"),
    ],
)
def test_make_agent_names_the_bad_setting(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec)
