"""Learned values: teacher data carries the right outcomes, the compiled network computes what
torch computes, mcts plays with it, and a network for another game is refused."""

import numpy as np
import pytest
import torch
from test_policy import play_game  # tests/ is on sys.path (pytest rootdir import mode)

from sorry_env.agents import make_agent
from sorry_env.agents.policy import Actor, load_policy, save_policy
from sorry_env.agents.value_net import net_logit, pack
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.evaluation import DEFAULT_WEIGHTS
from sorry_env.board.observation import OBS_SIZE
from sorry_env.training import value_fit
from sorry_env.training.outcome_data import OutcomeData


def write_value_net(path, num_players=2, rules="hasbro2003", hidden=(16, 8)):
    torch.manual_seed(3)
    actor = Actor("afterstate", list(hidden), "relu", rules)
    save_policy(
        path,
        actor,
        rules=rules,
        num_players=num_players,
        network={"kind": "afterstate", "hidden": list(hidden), "activation": "relu"},
        name="test",
    )
    return path


@pytest.mark.parametrize("num_players", [2, 4])
def test_teacher_positions_are_afterstates_labelled_with_the_winner(num_players):
    rules = game.rules_array("hasbro2003")
    data = OutcomeData(rules, num_players, 3000, weights=DEFAULT_WEIGHTS.array(), epsilon=0.1, seed=5)
    assert data.num_games >= 10 and len(data) == len(data.states) * num_players
    states = data.states.astype(np.int64)
    assert (states[:, E.CARD] == -1).all()  # the next card is not drawn yet
    assert (states[:, E.DECK : E.DECK + 11] == 0).all() and (states[:, E.RNG] == 0).all()  # public only
    finished = states[:, E.WINNER] >= 0
    assert (states[finished, E.WINNER] == data.winners[data.games[finished]]).all()
    rows = np.arange(len(data))
    obs, labels = data.batch(rows)
    assert obs.shape == (len(data), OBS_SIZE)
    viewers = data.seats[rows % num_players]
    winners = data.winners[data.games[rows // num_players]]
    assert (labels == [E.same_side(rules, v, w) for v, w in zip(viewers, winners)]).all()
    # Every game has exactly one winner: the labels of a position's views add up to 1.
    assert (labels.reshape(-1, num_players).sum(1) == 1).all()


@pytest.mark.float_kernels
def test_compiled_network_matches_torch(tmp_path):
    path = write_value_net(tmp_path / "v.safetensors", hidden=(32, 16, 8))
    params, sizes, _ = pack(path)
    actor, _ = load_policy(path)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = np.zeros(OBS_SIZE, dtype=np.float32)
        x[rng.choice(OBS_SIZE, 40, replace=False)] = rng.random(40)
        expected = actor.net(torch.from_numpy(x)[None]).item()
        assert net_logit(params, sizes, x) == pytest.approx(expected, abs=1e-4)


def test_mcts_with_a_value_network_plays_legal_moves(tmp_path):
    path = write_value_net(tmp_path / "v.safetensors")
    agents = {s: make_agent(f"mcts:iterations=40,value={path}", seed=s) for s in game.seats_for(2)}
    assert play_game(agents, "hasbro2003", 2, seed=1) > 0


def test_mcts_refuses_a_value_network_for_another_game(tmp_path):
    path = write_value_net(tmp_path / "v.safetensors", num_players=4)
    agent = make_agent(f"mcts:value={path}")
    with pytest.raises(ValueError, match="trained for 4 players, not 2"):
        play_game({s: agent for s in game.seats_for(2)}, "hasbro2003", 2, seed=0)
    mlp = tmp_path / "mlp.safetensors"
    save_policy(
        mlp,
        Actor("mlp", [8], "relu", "hasbro2003"),
        rules="hasbro2003",
        num_players=2,
        network={"kind": "mlp", "hidden": [8], "activation": "relu"},
        name="test",
    )
    with pytest.raises(ValueError, match="must be an 'afterstate' one"):
        make_agent(f"mcts:value={mlp}")


@pytest.mark.ci_slow  # over 10 s: CI runs it after the README's test command
def test_value_fit_writes_a_network_that_beats_a_coin(tmp_path, capsys):
    out = tmp_path / "v.safetensors"
    value_fit.main(["--positions", "30000", "--hidden", "32", "--epochs", "2", "--out", str(out)])
    params, sizes, meta = pack(out)
    assert list(sizes) == [OBS_SIZE, 32, 1] and meta["num_players"] == 2
    # Held-out loss below a coin's ln 2: the network learned something about who wins.
    assert meta["evaluation"]["held_out_loss"] < 0.68
    assert "held-out loss" in capsys.readouterr().out


def test_expectimax_with_a_value_network_searches_on_its_leaves(tmp_path):
    # depth 1: the move whose afterstate the network likes best (compared where the best two
    # differ by more than float noise between numba's and torch's sums); depth 2 plays legal
    # moves; a network for another player count is refused.
    from sorry_env.agent import Turn
    from sorry_env.board.policy_input import afterstates

    path = write_value_net(tmp_path / "v.safetensors", hidden=(32, 16))
    actor, _ = load_policy(path)
    greedy = make_agent(f"expectimax:depth=1,value={path}")
    rng = np.random.default_rng(2)
    compared = 0
    for seed in range(40):
        state = game.new_state("hasbro2003", 2, seed=seed)
        for _ in range(30 + seed):
            if game.winner(state) is not None:
                break
            state = game.step(state, "hasbro2003", int(rng.choice(game.legal_actions(state, "hasbro2003"))))
        if game.winner(state) is not None or len(game.legal_actions(state, "hasbro2003")) < 2:
            continue
        obs, _, actions = afterstates(state[None], game.rules_array("hasbro2003"))
        with torch.no_grad():
            scores = actor.net(torch.from_numpy(obs))[:, 0].numpy()
        best = np.argsort(scores)[::-1]
        if scores[best[0]] - scores[best[1]] > 1e-3:
            assert greedy.act(Turn.from_state(state, "hasbro2003", rng)) == actions[best[0]]
            compared += 1
    assert compared >= 10
    searcher = {s: make_agent(f"expectimax:depth=2,value={path}", seed=s) for s in game.seats_for(2)}
    assert play_game(searcher, "hasbro2003", 2, seed=4) > 0
    four = write_value_net(tmp_path / "v4.safetensors", num_players=4)
    with pytest.raises(ValueError, match="trained for 4 players, not 2"):
        play_game({s: make_agent(f"expectimax:depth=2,value={four}") for s in game.seats_for(2)}, "hasbro2003", 2, 0)
