"""The OpenSpiel game python_sorry (sorry_env.openspiel) and the OpenSpiel bots as agents."""

import numpy as np
import pytest

from sorry_env import PRESETS, raw_env, state_to_dict
from sorry_env.board import engine as E
from sorry_env.board import game as G
from sorry_env.board.observation import OBS_SIZE

pyspiel = pytest.importorskip("pyspiel", reason='open_spiel is not installed (pip install "sorry-env[openspiel]")')

import sorry_env.openspiel  # noqa: E402,F401  (registers python_sorry)

COMBOS = [(r, n) for r in PRESETS for n in (2, 3, 4) if PRESETS[r].teams == "none" or n == 4]


def load(players=2, rules="hasbro2003", **extra):
    return pyspiel.load_game("python_sorry", {"players": players, "rules": rules, **extra})


def play_random(state, rng, until=None):
    """Random legal play (chance by its probabilities) until terminal or `until(state)`."""
    while not state.is_terminal() and not (until and until(state)):
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(outcomes[rng.choice(len(outcomes), p=probs)]))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


@pytest.mark.parametrize("rules,players", COMBOS)
def test_random_sim_test_every_preset_and_player_count(rules, players):
    # Short games (60 cards) so serialization, which replays the history at every step, stays fast.
    pyspiel.random_sim_test(load(players, rules, max_turns=60), num_sims=1, serialize=True, verbose=False)


@pytest.mark.slow
@pytest.mark.parametrize("rules,players", COMBOS)
def test_random_sim_test_full_games(rules, players):
    pyspiel.random_sim_test(load(players, rules), num_sims=3, serialize=False, verbose=False)


def test_first_player_and_every_draw_are_chance_nodes():
    game = load(3)
    state = game.new_initial_state()
    assert state.is_chance_node()
    assert state.chance_outcomes() == [(0, 1 / 3), (1, 1 / 3), (2, 1 / 3)]
    state.apply_action(2)
    assert state.is_chance_node()  # the first card
    pack = np.array(PRESETS["hasbro2003"].pack)
    assert state.chance_outcomes() == [(c, pack[c] / pack.sum()) for c in range(len(pack))]
    state.apply_action(8)  # an 11
    assert state.current_player() == 2 and G.card(state.engine_state) == "11"
    state.apply_action(state.legal_actions()[0])
    probs = dict(state.chance_outcomes())
    assert probs[8] == pytest.approx(3 / 44) and sum(probs.values()) == pytest.approx(1)


def test_two_players_sit_in_seats_0_and_2():
    state = load(2).new_initial_state()
    state.apply_action(1)  # player 1 first
    state.apply_action(0)  # draws a 1
    assert G.to_move(state.engine_state) == 2 and state.current_player() == 1


def test_hands_are_dealt_by_chance_and_hidden_from_the_others():
    game = load(2, "hasbro2003_points")
    state = game.new_initial_state()
    state.apply_action(0)
    deals = 0
    while state.is_chance_node():
        outcomes = dict(state.chance_outcomes())
        assert sum(outcomes.values()) == pytest.approx(1)
        state.apply_action(min(outcomes))
        deals += 1
    assert deals == 2 * 5
    # Two deals that differ only in the last card of player 1's hand.
    a, b = game.new_initial_state(), game.new_initial_state()
    for s, last in ((a, 0), (b, 10)):
        s.apply_action(0)
        for card in (3, 3, 3, 3, 2, 5, 5, 5, 5):  # player 0: four 4s and a 3; player 1: four 7s and ...
            s.apply_action(card)
        s.apply_action(last)
    assert a.information_state_string(0) == b.information_state_string(0)
    assert a.information_state_string(1) != b.information_state_string(1)
    assert np.array_equal(a.information_state_tensor(0), b.information_state_tensor(0))
    assert not np.array_equal(a.observation_tensor(1), b.observation_tensor(1))


def test_resample_keeps_the_information_state_and_redeals_the_rest():
    game = load(4, "hasbro2003_points")
    rng = np.random.default_rng(3)
    state = play_random(game.new_initial_state(), rng, until=lambda s: s.move_number() > 80 and not s.is_chance_node())
    player = state.current_player()
    key = state.information_state_string(player)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    others = set()
    for _ in range(5):
        sample = state.resample_from_infostate(player, sampler)
        assert sample.information_state_string(player) == key
        assert sample.legal_actions() == state.legal_actions()
        others.add(sample.information_state_string((player + 1) % 4))
    assert len(others) > 1  # the other hands really are re-dealt


@pytest.mark.parametrize("rules,players", [("hasbro2003", 4), ("hasbro2003_teams", 4), ("hasbro2013_fire_ice", 3)])
def test_actions_and_observations_equal_the_envs(rules, players):
    game = load(players, rules)
    env = raw_env(num_players=players, rules=rules)
    rng = np.random.default_rng(7)
    state = game.new_initial_state()
    checked = 0
    while not state.is_terminal() and checked < 60:
        if state.is_chance_node():
            play_random(state, rng, until=lambda s: not s.is_chance_node())
            continue
        engine_state = state.engine_state
        env.reset(seed=0, options={"state": state_to_dict(engine_state, PRESETS[rules])})
        agent = env.agent_selection
        obs = env.observe(agent)
        assert agent == f"player_{game_seats(game)[state.current_player()]}"
        assert state.legal_actions() == np.flatnonzero(obs["action_mask"]).tolist()
        for p, seat in enumerate(game_seats(game)):
            assert np.array_equal(np.asarray(state.observation_tensor(p)), env.observe(f"player_{seat}")["observation"])
        state.apply_action(int(rng.choice(state.legal_actions())))
        checked += 1
    assert checked == 60


def game_seats(game):
    return game.setup.seats


def test_game_sizes_follow_the_rules():
    assert load(4).num_distinct_actions() == G.num_actions("hasbro2003")
    assert load(4).observation_tensor_size() == OBS_SIZE
    assert load(4).information_state_tensor_size() == OBS_SIZE
    assert load(4, max_turns=100).max_game_length() == 100
    assert load(4, "hasbro2003_teams", max_turns=100).max_game_length() == 700  # a seven in parts
    assert load(3, "hasbro2013_fire_ice", max_turns=100).max_game_length() == 200  # fire decisions
    assert load(2).get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert load(3).get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    assert load(4, "hasbro2003_teams").get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert load(4, "hasbro2003_points", reward="points").max_utility() > 100


def test_turn_limit_ends_the_game_as_a_draw():
    state = load(2, max_turns=5).new_initial_state()
    play_random(state, np.random.default_rng(0))
    assert E.turns_played(state.engine_state) == 5 and G.winner(state.engine_state) is None
    assert state.returns() == [0.0, 0.0]


@pytest.mark.parametrize("rules,players,reward", [("hasbro2003", 3, "win"), ("hasbro2003_points", 2, "points")])
def test_returns_of_a_finished_game(rules, players, reward):
    game = load(players, rules, reward=reward)
    state = play_random(game.new_initial_state(), np.random.default_rng(1))
    winner = G.winner(state.engine_state)
    assert winner is not None
    player = game.setup.seats.index(winner)
    returns = state.returns()
    if reward == "win":
        assert returns[player] == 1.0 and sorted(returns) == [-1.0] * (players - 1) + [1.0]
    else:
        assert returns[player] == max(returns) > 0


@pytest.mark.parametrize(
    "params,words",
    [
        ({"players": 5}, "players must be 2, 3 or 4"),
        ({"rules": "chess"}, "rules must be a preset name"),
        ({"players": 2, "rules": "hasbro2003_teams"}, "team rules"),
        ({"reward": "points"}, "needs a play-for-points preset"),
        ({"max_turns": 0}, "max_turns must be a positive integer"),
        ({"colour": 1}, "Unknown parameter"),
    ],
)
def test_bad_parameters_are_refused(params, words):
    with pytest.raises(Exception, match=words):
        pyspiel.load_game("python_sorry", params)


def test_an_illegal_action_is_refused():
    state = load(2).new_initial_state()
    with pytest.raises(Exception, match="impossible"):
        state.apply_action(7)  # 2 players: chance outcomes 0 and 1
    state.apply_action(0)
    state.apply_action(3)  # a 4: nothing can move, PASS only
    with pytest.raises(Exception, match="illegal"):
        state.apply_action(1)


@pytest.mark.parametrize("spec", ["openspiel_mcts:simulations=8", "openspiel_ismcts:simulations=8"])
@pytest.mark.parametrize("rules", ["hasbro2003", "hasbro2003_points"])
def test_openspiel_bots_play_legal_games(spec, rules):
    from sorry_env.agents import action_for, make_agent

    bot = make_agent(spec, seed=0)
    env = raw_env(num_players=2, rules=rules)
    env.reset(seed=5)
    moves = 0
    while env.agents and not any(env.terminations.values()) and not any(env.truncations.values()):
        mover = env.agent_selection
        if mover == "player_0":
            action = action_for(env, bot)  # raises if the bot picks an illegal move
        else:
            action = int(np.flatnonzero(env.observe(mover)["action_mask"])[0])
        env.step(action)
        moves += 1
    assert moves > 20 and any(env.terminations.values())


def test_openspiel_bot_settings_are_checked():
    from sorry_env.agents import make_agent

    with pytest.raises(ValueError, match="simulations and rollouts must be positive"):
        make_agent("openspiel_mcts:simulations=0")
    with pytest.raises(ValueError, match="rollout must be"):
        make_agent("openspiel_ismcts:rollout=fast")
    bot = make_agent("openspiel_mcts")
    with pytest.raises(ValueError, match="presets only"):
        import dataclasses

        bot.check_game(dataclasses.replace(PRESETS["hasbro2003"], name="mine", fast_play=True), 2)


def test_an_illegal_action_raises_spiel_error_as_cpp_games_do():
    """RLlib's OpenSpielEnv (and other OpenSpiel tools) catch pyspiel.SpielError."""
    state = load(2).new_initial_state()
    with pytest.raises(pyspiel.SpielError, match="impossible"):
        state.apply_action(7)
    state.apply_action(0)
    state.apply_action(3)  # a 4: nothing can move, PASS only
    with pytest.raises(pyspiel.SpielError, match=r"action 1 is illegal here; legal: \[0\]"):
        state.apply_action(1)
    with pytest.raises(ValueError):  # still a ValueError too
        state.apply_action(1)
    finished = load(2, max_turns=1).new_initial_state()
    play_random(finished, np.random.default_rng(0))
    with pytest.raises(pyspiel.SpielError, match="the game is over"):
        finished.apply_action(0)


@pytest.mark.parametrize("params", [{"players": 2}, {"players": 3, "rules": "hasbro2013", "max_turns": 50}, {}])
def test_the_game_reloads_from_its_type_with_its_parameters(params):
    """Tools that re-load a game from get_type().short_name (Shimmy at every reset) get it back."""
    game = pyspiel.load_game("python_sorry", params)
    again = pyspiel.load_game(game.get_type().short_name)
    assert again.num_players() == game.num_players() and again.get_parameters() == game.get_parameters()
    assert again.get_type().short_name == game.get_type().short_name
    assert (game.get_type().short_name == "python_sorry") == (params == {})
    assert game.get_type().utility == again.get_type().utility


def test_shimmy_keeps_the_parameters():
    shimmy = pytest.importorskip("shimmy", reason="shimmy is not installed (in no extra)")
    from pettingzoo.test import api_test

    env = shimmy.OpenSpielCompatibilityV0(env=pyspiel.load_game("python_sorry", {"players": 2, "max_turns": 40}))
    env.reset(seed=0)
    assert env.possible_agents == ["player_0", "player_1"] and env.game_state.get_game().num_players() == 2
    api_test(env, num_cycles=200)


def test_rllib_open_spiel_env_passes_its_checker():
    pytest.importorskip("ray.rllib", reason="ray[rllib] is not installed (the rllib extra)")
    from ray.rllib.env.wrappers.open_spiel import OpenSpielEnv
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    env = OpenSpielEnv(load(2))
    check_multiagent_environments(env)  # its random action is mostly illegal: a legal one is played instead
    obs, _ = env.reset()
    assert list(obs.values())[0].shape == (OBS_SIZE,)


@pytest.mark.slow
def test_rllib_trains_on_its_own_open_spiel_env():
    pytest.importorskip("ray.rllib", reason="ray[rllib] is not installed (the rllib extra)")
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.wrappers.open_spiel import OpenSpielEnv
    from ray.tune.registry import register_env

    register_env("python_sorry_2p", lambda _: OpenSpielEnv(pyspiel.load_game("python_sorry", {"players": 2})))
    config = (
        PPOConfig()
        .environment("python_sorry_2p")
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
        .env_runners(num_env_runners=0)
        .training(train_batch_size=256, minibatch_size=64, num_epochs=1)
    )
    algo = config.build_algo()
    try:
        sampled = [algo.train()["env_runners"]["num_env_steps_sampled"] for _ in range(2)]
    finally:
        algo.stop()
    assert all(n >= 256 for n in sampled)


def test_observation_tensor_computed_in_python_equals_pyspiels_own_path():
    """SorryState.observation_tensor skips pyspiel's clone per call (benchmarks/bench_openspiel.py);
    it returns what pyspiel's path (the observer) returns, and refuses the same players."""
    game = load(3, "hasbro2013")
    state = game.new_initial_state()
    rng = np.random.default_rng(1)
    for _ in range(40):
        play_random(state, rng, until=lambda s: not s.is_chance_node())
        for player in range(3):
            ours = state.observation_tensor(player)
            assert isinstance(ours, list) and ours == pyspiel.State.observation_tensor(state, player)
        assert state.observation_tensor() == state.observation_tensor(state.current_player())
        state.apply_action(int(rng.choice(state.legal_actions())))
    for player in (3, -1, True):
        with pytest.raises(pyspiel.SpielError, match="player"):
            state.observation_tensor(player)
