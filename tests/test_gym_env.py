"""The single-agent Gymnasium env (sorry_env.gym_env; made from specs by agents.gym_factory): the
learner's own reward, the PettingZoo env's observation, opponents of every kind, illegal actions,
checkers and vector envs."""

import os
import warnings

import gymnasium
import numpy as np
import pytest

import sorry_env
from sorry_env import agents
from sorry_env.agents.gym_factory import make_gym_env
from sorry_env.agents.policy import Actor, save_policy
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.policy_input import INPUT_SIZE, policy_input
from sorry_env.gym_env import PolicyInputWrapper, SorryGymEnv
from sorry_env.training.opponents import OpponentPool

# Seat 2 is one step from winning: its last pawn is on safe 4 and the draw pile holds only 1s.
# Seat 0 (the learner here) holds a 3 with every pawn in Start, so it can only pass.
OPPONENT_WINS_NEXT = {
    "to_move": 0,
    "card": "3",
    "draw_pile": {"1": 5},
    "pawns": [[["start"]] * 4, None, [["safe", 4], ["home"], ["home"], ["home"]], None],
}
# The mirror image: the learner at seat 0 wins with its 1; seat 2 never gets to move.
LEARNER_WINS_NOW = {
    "to_move": 0,
    "card": "1",
    "pawns": [[["safe", 4], ["home"], ["home"], ["home"]], None, [["start"]] * 4, None],
}


def play_out(env, obs, rng):
    """Random legal learner moves to the end; the last step's (reward, terminated, truncated, info)."""
    while True:
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if terminated or truncated:
            return reward, terminated, truncated, info
        assert reward == 0.0


def write_policy(path, num_players=2):
    actor = Actor("afterstate", [8], "relu", "hasbro2003")
    save_policy(
        path,
        actor,
        rules="hasbro2003",
        num_players=num_players,
        name="untrained",
        network={"kind": "afterstate", "hidden": [8], "activation": "relu"},
    )
    return str(path)


def test_registered_on_import_and_passes_both_checkers():
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    assert "sorry_env/Sorry-v1" in gymnasium.registry and sorry_env.__name__
    env = gymnasium.make("sorry_env/Sorry-v1", num_players=2, opponents=["heuristic"])
    assert isinstance(env.unwrapped, SorryGymEnv)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a checker warning fails the test
        check_env(env.unwrapped)
        sb3_check_env(make_gym_env(4, "random"))


def test_same_observation_as_the_pettingzoo_env_and_seeded_resets_repeat():
    env = make_gym_env(2, "random", seat=2)
    obs, _ = env.reset(seed=5)
    assert env.observation_space.contains(obs)
    pz = sorry_env.raw_env(num_players=2)
    pz.reset(options={"state": env.state_dict()})
    expected = pz.observe("player_2")
    np.testing.assert_array_equal(obs["observation"], expected["observation"])
    np.testing.assert_array_equal(obs["action_mask"], expected["action_mask"])
    np.testing.assert_array_equal(env.action_masks(), expected["action_mask"].astype(bool))
    assert env.observation_space == pz.observation_space("player_2")
    again, _ = make_gym_env(2, "random", seat=2).reset(seed=5)
    np.testing.assert_array_equal(obs["observation"], again["observation"])


def test_learner_that_loses_gets_minus_one_and_one_that_wins_plus_one():
    env = make_gym_env(2, "random")
    obs, _ = env.reset(seed=0, options={"state": OPPONENT_WINS_NEXT, "seat": 0})
    assert np.flatnonzero(obs["action_mask"]).tolist() == [0]  # PASS only
    obs, reward, terminated, truncated, info = env.step(0)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["learner_won"] is False and info["learner_seat"] == 0 and info["opponents"] == ["random"]
    assert not obs["action_mask"].any() and not env.action_masks().any()
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(0)
    obs, _ = env.reset(seed=0, options={"state": LEARNER_WINS_NOW, "seat": 0})
    _, reward, terminated, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert terminated and reward == 1.0 and info["learner_won"] is True


# Team rules: the learner (seat 0) can only pass; the opponent draws nothing playable; the partner
# (seat 2) takes its last pawn Home with a 1 and finishes the partnership: the engine records seat 2
# as the winner, and the win is the learner's too.
PARTNER_WINS_NEXT = {
    "to_move": 0,
    "card": "3",
    "draw_pile": {"1": 4},
    "pawns": [[["home"]] * 4, [["start"]] * 4, [["safe", 4], ["home"], ["home"], ["home"]], [["start"]] * 4],
}


def test_team_win_finished_by_the_partner_pays_the_learner():
    env = make_gym_env(4, "random", "parker1958_teams")
    obs, _ = env.reset(seed=0, options={"state": PARTNER_WINS_NEXT, "seat": 0})
    assert np.flatnonzero(obs["action_mask"]).tolist() == [0]  # PASS only
    _, reward, terminated, _, info = env.step(0)
    assert terminated and int(E.winner(env.public_state())) == 2  # the partner made the winning move
    assert reward == 1.0 and info["learner_won"] is True


@pytest.mark.parametrize("num_players", [2, 4])
def test_rewards_match_the_winner_over_many_games(num_players):
    """Over whole games the return is +1 exactly when the learner's seat won, whichever seat
    it sat in, and the learner acts only on its own turns."""
    env = make_gym_env(num_players, "random")
    rng = np.random.default_rng(0)
    seats_seen = set()
    for g in range(20):
        obs, _ = env.reset(seed=g)
        seats_seen.add(env.learner_seat)
        assert env.state[E.TO_MOVE] == env.learner_seat and len(env.opponents) == num_players - 1
        reward, terminated, _, info = play_out(env, obs, rng)
        if terminated:
            assert reward == (1.0 if game.winner(env.state) == env.learner_seat else -1.0)
            assert info["learner_won"] == (reward == 1.0)
    assert len(seats_seen) > 1


def test_a_fixed_seat_is_kept():
    env = make_gym_env(4, "random", seat=3)
    assert {env.reset(seed=g)[0] is not None and env.learner_seat for g in range(5)} == {3}


def test_trained_stands_for_the_shipped_policy_of_the_envs_game():
    env = make_gym_env(4, "trained", rules="hasbro2013")
    _obs, info = env.reset(seed=0)
    assert info["opponents"] == ["trained"] * 3
    assert {os.path.basename(agent.path) for _, agent in env.opponents.values()} == {"hasbro2013-4p.safetensors"}
    with pytest.raises(ValueError, match="no shipped policy for rules 'hasbro2003_fast' with 2 players"):
        make_gym_env(2, "trained", rules="hasbro2003_fast")


def test_reset_says_which_seat_is_the_learners_and_who_the_opponents_are():
    env = make_gym_env(2, ["greedy"])
    seats = set()
    for g in range(8):
        _obs, info = env.reset(seed=g)
        assert info == {"learner_seat": env.learner_seat, "opponents": ["greedy"]}
        seats.add(info["learner_seat"])
    assert seats == {0, 2}  # a random seat each episode, told from the start


def test_illegal_actions_lose_by_default_or_raise():
    env = make_gym_env(2, "random")
    env.reset(seed=0, options={"state": OPPONENT_WINS_NEXT, "seat": 0})
    _obs, reward, terminated, truncated, info = env.step(5)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    env.reset(seed=0)
    assert env.step(10_000)[1:3] == (-1.0, True)  # out of range: the same
    strict = make_gym_env(2, "random", illegal_action="raise")
    strict.reset(seed=0, options={"state": OPPONENT_WINS_NEXT, "seat": 0})
    with pytest.raises(ValueError, match=r"illegal learner action 5 at seat 0; legal: \[0\]"):
        strict.step(5)
    with pytest.raises(TypeError, match="integer index"):
        strict.step("pass")


def test_opponents_of_every_kind_play(tmp_path):
    policy = write_policy(tmp_path / "p.safetensors")
    seen = []

    def first_legal(observation):
        seen.append(observation["observation"].shape)
        return int(np.flatnonzero(observation["action_mask"])[0])

    env = make_gym_env(4, ["heuristic", agents.RandomAgent(), first_legal], seat=0)
    obs, _ = env.reset(seed=1)
    assert [label for label, _ in env.opponents.values()] == ["heuristic", "random", "first_legal"]
    play_out(env, obs, np.random.default_rng(1))
    assert seen and seen[0] == (sorry_env.board.observation.OBS_SIZE,)
    env = make_gym_env(2, [policy])
    play_out(env, env.reset(seed=0)[0], np.random.default_rng(0))


@pytest.mark.parametrize(
    "opponents, message",
    [
        (["nobody"], r"opponent 1 \(nobody\): unknown agent 'nobody'"),
        (["no_such_module:Agent"], "cannot import module 'no_such_module'"),
        (["numpy:ndarray"], "class ndarray is not an agent"),
        (["random", "random"], "opponents for 2 players: give 1, got 2"),
        ([3], "an agent is a spec"),
    ],
)
def test_bad_opponents_are_refused_before_any_episode(opponents, message):
    with pytest.raises(ValueError, match=message):
        make_gym_env(2, opponents)


def test_bad_settings_are_refused(tmp_path):
    with pytest.raises(ValueError, match="trained for 4 players, not 2"):
        make_gym_env(2, [write_policy(tmp_path / "p4.safetensors", num_players=4)])
    with pytest.raises(ValueError, match=r"seat must be None .* \(0, 2\), got 1"):
        make_gym_env(2, "random", seat=1)
    with pytest.raises(ValueError, match="illegal_action must be"):
        make_gym_env(2, "random", illegal_action="ignore")
    with pytest.raises(RuntimeError, match="call reset"):
        make_gym_env(2, "random").step(0)
    with pytest.raises(TypeError, match="opponents: give a list of agents"):
        make_gym_env(2, None)


def test_an_opponent_that_plays_an_illegal_move_is_named_with_the_legal_moves():
    env = make_gym_env(2, [lambda observation: 999], seat=0)
    with pytest.raises(
        ValueError,
        match=r"opponent '<lambda>' \(seat 2\) chose illegal action 999 in episode "
        r"\d+ at turn \d+; legal: \[",
    ):
        obs, _ = env.reset(seed=0)
        play_out(env, obs, np.random.default_rng(0))


def test_policy_input_wrapper_gives_the_policy_agents_input():
    env = PolicyInputWrapper(make_gym_env(2, "random"))
    obs, _ = env.reset(seed=3)
    assert obs.shape == (INPUT_SIZE,) and env.observation_space.contains(obs)
    raw = env.unwrapped
    np.testing.assert_array_equal(obs, policy_input(raw.state, game.rules_array(raw.rules), raw.learner_seat))
    assert env.action_masks().any()


def test_snapshot_opponents_from_a_pool_and_one_leaving_the_window_mid_game(tmp_path):
    pool = OpponentPool({"snapshots": 1.0}, snapshot_window=1)
    with pytest.raises(ValueError, match="no snapshot"):
        make_gym_env(2, opponent_sampler=pool.sample).reset(seed=0)
    pool.add_snapshot(write_policy(tmp_path / "a.safetensors"))
    env = make_gym_env(2, opponent_sampler=pool.sample)
    obs, _ = env.reset(seed=0)
    assert [label for label, _ in env.opponents.values()] == ["policy:untrained"]
    pool.add_snapshot(write_policy(tmp_path / "b.safetensors"))  # evicts a from memory
    play_out(env, obs, np.random.default_rng(0))
    assert pool.snapshot_agents[0] is None


@pytest.mark.ci_slow  # over 10 s: CI runs it after the README's test command
def test_vector_envs_gymnasium_sync_async_and_sb3_subproc():
    from stable_baselines3.common.vec_env import SubprocVecEnv

    for mode in ("sync", "async"):
        venv = gymnasium.make_vec(
            "sorry_env/Sorry-v1", num_envs=2, vectorization_mode=mode, num_players=2, opponents=["heuristic"]
        )
        obs, _ = venv.reset(seed=0)
        assert obs["observation"].shape == (2, sorry_env.board.observation.OBS_SIZE)
        for _ in range(5):
            actions = [int(np.flatnonzero(mask)[0]) for mask in obs["action_mask"]]
            obs, _rewards, *_ = venv.step(np.array(actions))
        venv.close()
    venv = SubprocVecEnv([lambda: make_gym_env(2, "heuristic")] * 2)
    venv.seed(0)
    obs = venv.reset()
    masks = np.stack(venv.env_method("action_masks"))
    assert masks.shape == (2, 142) and (masks == obs["action_mask"].astype(bool)).all()
    venv.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
    venv.close()


def test_the_core_env_takes_agents_and_functions_and_refuses_specs_naming_the_way_in():
    def first_legal(observation):
        return int(np.flatnonzero(observation["action_mask"])[0])

    env = SorryGymEnv(4, [agents.HeuristicAgent(), agents.RandomAgent(), first_legal], seat=0)
    obs, _ = env.reset(seed=1)
    assert [label for label, _ in env.opponents.values()] == ["heuristic", "random", "first_legal"]
    play_out(env, obs, np.random.default_rng(1))
    with pytest.raises(ValueError, match=r"opponent 1 \(heuristic\): 'heuristic' is an agent spec.*gymnasium\.make"):
        SorryGymEnv(2, ["heuristic"])
    with pytest.raises(TypeError, match=r"opponents: .*got None.*gymnasium\.make"):
        SorryGymEnv(2)
    with pytest.raises(TypeError, match="make_opponent must be a function"):
        SorryGymEnv(2, [first_legal], make_opponent="heuristic")
    with pytest.raises(ValueError, match="make_opponent returned 3, not an Agent"):
        SorryGymEnv(2, [first_legal], make_opponent=lambda entry: 3)


def test_agent_objects_give_the_same_episodes_as_their_specs():
    """The core env with Agent objects and gymnasium.make with the specs naming them play the
    same games for the same seeds (the factory only turns specs into agents)."""
    made = gymnasium.make("sorry_env/Sorry-v1", num_players=4, opponents=["heuristic", "greedy", "random"])
    direct = SorryGymEnv(4, [agents.HeuristicAgent(), agents.GreedyAgent(), agents.RandomAgent()])
    assert made.spec.entry_point == "sorry_env.agents.gym_factory:make_gym_env"
    assert made.observation_space == direct.observation_space and made.action_space == direct.action_space
    for seed in (0, 7):
        results = []
        for env in (made, direct):
            obs, _ = env.reset(seed=seed)
            rng, trace = np.random.default_rng(seed), [obs["observation"].copy()]
            while True:
                obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
                trace.append(obs["observation"].copy())
                if terminated or truncated:
                    break
            results.append((np.stack(trace), reward, info))
        np.testing.assert_array_equal(results[0][0], results[1][0])
        assert results[0][1:] == results[1][1:]


def test_an_env_made_from_specs_pickles_and_the_copy_plays_on_alike():
    import pickle

    env = make_gym_env(2, "random", seat=0)
    obs, _ = env.reset(seed=3)
    copy = pickle.loads(pickle.dumps(env))
    action = int(np.flatnonzero(obs["action_mask"])[0])
    first, second = env.step(action), copy.step(action)
    np.testing.assert_array_equal(first[0]["observation"], second[0]["observation"])
    np.testing.assert_array_equal(env.state, copy.state)


def test_sb3_make_vec_env_by_id_resets_and_steps():
    """SB3's own helper asks gymnasium.make for render_mode="rgb_array" (issue 39)."""
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("sorry_env/Sorry-v1", n_envs=2, seed=0, env_kwargs={"num_players": 2, "opponents": ["random"]})
    obs = venv.reset()
    assert obs["observation"].shape == (2, sorry_env.board.observation.OBS_SIZE)
    masks = np.stack(venv.env_method("action_masks"))
    for _ in range(3):
        obs, rewards, dones, infos = venv.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
        masks = np.stack(venv.env_method("action_masks"))
        assert rewards.shape == (2,) and masks.any(axis=1).all()
    frames = venv.get_images()
    assert len(frames) == 2 and all(f.dtype == np.uint8 and f.ndim == 3 and f.shape[2] == 3 for f in frames)
    venv.close()


def test_gymnasium_render_wrappers_collect_the_pictures(tmp_path):
    from gymnasium.wrappers import RecordVideo, RenderCollection

    env = RenderCollection(gymnasium.make("sorry_env/Sorry-v1", opponents=["random"], render_mode="rgb_array"))
    obs, _ = env.reset(seed=0)
    for _ in range(3):
        obs, *_ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    frames = env.render()
    assert len(frames) == 4 and len({f.shape for f in frames}) == 1 and frames[0].dtype == np.uint8
    pytest.importorskip("moviepy", reason="RecordVideo writes with moviepy, which is not installed")
    video = RecordVideo(
        gymnasium.make("sorry_env/Sorry-v1", opponents=["random"], render_mode="rgb_array"),
        str(tmp_path / "videos"),
        episode_trigger=lambda episode: True,
        disable_logger=True,
    )
    obs, _ = video.reset(seed=0)
    for _ in range(5):
        obs, *_ = video.step(int(np.flatnonzero(obs["action_mask"])[0]))
    video.close()
    written = list((tmp_path / "videos").glob("*.mp4"))
    assert len(written) == 1 and written[0].stat().st_size > 0
