"""The self-play wrapper: a real gymnasium.Env that rewards the learner, and only the learner."""
import gymnasium
import numpy as np
import pytest

from agents.policy import Actor, save_policy
from sorry_env import engine as E
from training.opponents import OpponentPool
from training.selfplay_env import SelfPlayEnv

# Seat 2 is one step from winning: its last pawn is on safe 4 and the draw pile holds only 1s.
# Seat 0 (the learner here) holds a 3 with every pawn in Start, so it can only pass.
OPPONENT_WINS_NEXT = {
    "to_move": 0, "card": "3", "draw_pile": {"1": 5},
    "pawns": [[["start"]] * 4, None, [["safe", 4], ["home"], ["home"], ["home"]], None],
}
# The mirror image: the learner at seat 0 wins with its 1; seat 2 never gets to move.
LEARNER_WINS_NOW = {
    "to_move": 0, "card": "1",
    "pawns": [[["safe", 4], ["home"], ["home"], ["home"]], None, [["start"]] * 4, None],
}


def make_env(num_players=2, mix=None):
    return SelfPlayEnv(OpponentPool(mix or {"random": 1.0}), num_players=num_players)


def test_is_a_gymnasium_env_with_matching_spaces_and_masks():
    env = make_env()
    assert isinstance(env, gymnasium.Env)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    mask = env.action_masks()
    assert mask.dtype == bool and mask.shape == (env.action_space.n,) and mask.any()
    obs2, _ = make_env().reset(seed=3)
    np.testing.assert_array_equal(obs, obs2)  # seeded resets are reproducible


def test_learner_that_loses_gets_minus_one():
    env = make_env()
    env.reset(seed=0, options={"state": OPPONENT_WINS_NEXT, "learner_seat": 0})
    assert env.action_masks().nonzero()[0].tolist() == [0]  # PASS only
    _, reward, terminated, truncated, info = env.step(0)
    assert terminated and not truncated
    assert reward == -1.0
    assert info["learner_won"] is False and info["learner_seat"] == 0


def test_learner_that_wins_gets_plus_one():
    env = make_env()
    env.reset(seed=0, options={"state": LEARNER_WINS_NOW, "learner_seat": 0})
    legal = env.action_masks().nonzero()[0]
    _, reward, terminated, _, info = env.step(int(legal[0]))
    assert terminated and reward == 1.0 and info["learner_won"] is True


@pytest.mark.parametrize("num_players", [2, 4])
def test_rewards_match_the_winner_over_many_games(num_players):
    """Over whole random games the episode return is +1 exactly when the learner's seat won,
    whichever seat the learner sat in, and non-final steps give 0."""
    env = make_env(num_players)
    rng = np.random.default_rng(0)
    seats_seen = set()
    for g in range(30):
        env.reset(seed=g)
        seats_seen.add(env.learner_seat)
        assert len(env.opponents) == num_players - 1 and env.learner_seat not in env.opponents
        done = False
        while not done:
            assert E.to_move(env.state) == env.learner_seat  # the learner acts only on its turns
            action = rng.choice(np.flatnonzero(env.action_masks()))
            _, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            if not done:
                assert reward == 0.0
        winner = int(E.winner(env.state))
        assert reward == (1.0 if winner == env.learner_seat else -1.0)
        assert not env.action_masks().any()
    assert len(seats_seen) > 1


def test_illegal_learner_action_is_refused():
    env = make_env()
    env.reset(seed=0, options={"state": OPPONENT_WINS_NEXT, "learner_seat": 0})
    with pytest.raises(ValueError, match="illegal learner action 5"):
        env.step(5)


def test_snapshot_only_pool_needs_a_snapshot():
    with pytest.raises(ValueError, match="no snapshot"):
        make_env(mix={"snapshots": 1.0}).reset(seed=0)
    with pytest.raises(ValueError, match="unknown kinds"):
        OpponentPool({"nobody": 1.0})


def write_policy(path):
    actor = Actor("afterstate", [8], "relu", "hasbro2003")
    save_policy(path, actor, rules="hasbro2003", num_players=2, name="untrained",
                network={"kind": "afterstate", "hidden": [8], "activation": "relu"})
    return path


def test_a_snapshot_leaving_the_window_mid_game_still_finishes_it(tmp_path):
    pool = OpponentPool({"snapshots": 1.0}, snapshot_window=1)
    pool.add_snapshot(write_policy(tmp_path / "a.safetensors"))
    env = SelfPlayEnv(pool)
    env.reset(seed=0)
    pool.add_snapshot(write_policy(tmp_path / "b.safetensors"))  # evicts a from memory
    rng = np.random.default_rng(0)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(rng.choice(np.flatnonzero(env.action_masks())))
        done = terminated or truncated
    assert pool.snapshot_agents[0] is None


# Team rules (Parker 1958): the learner at seat 0 has every pawn Home and can only pass with
# its 3; opponent seat 1 starts a pawn with its 1; then the learner's partner at seat 2 moves
# its last pawn Home with a 1 and finishes the partnership: the engine records seat 2 as the
# winner, and the win is the learner's too.
PARTNER_WINS_NEXT = {
    "to_move": 0, "card": "3", "draw_pile": {"1": 4},
    "pawns": [[["home"]] * 4, [["start"]] * 4, [["safe", 4], ["home"], ["home"], ["home"]], [["start"]] * 4],
}


def test_team_win_finished_by_the_partner_pays_the_learner():
    env = SelfPlayEnv(OpponentPool({"random": 1.0}), num_players=4, rules="parker1958_teams")
    env.reset(seed=0, options={"state": PARTNER_WINS_NEXT, "learner_seat": 0})
    assert env.action_masks().nonzero()[0].tolist() == [0]  # PASS only
    _, reward, terminated, _, info = env.step(0)
    assert terminated and int(E.winner(env.state)) == 2  # the partner made the winning move
    assert reward == 1.0 and info["learner_won"] is True
