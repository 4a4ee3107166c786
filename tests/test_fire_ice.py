"""Fire and Ice (issue 14, preset ``hasbro2013_fire_ice``): the rules' scenarios, the action
layout, the state dict and random-play invariants. Rules reference: docs/rules.md."""

import sys

import numpy as np
import pytest
from numba import njit

from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.state_io import state_from_dict, state_to_dict
from sorry_env.checks import check_state

RULES = "hasbro2013_fire_ice"
R = game.rules_array(RULES)
P, T, START0, FWD0, BACK0, SPLIT0, SWAP0, SORRY0, N0 = (int(x) for x in E.action_offsets(R))
NO_FIRE, FIRE_MOVE = (T + 1) * N0, (T + 1) * N0 + 1


def load(pawns0, pawns2, card, to_move=0, **extra):
    """A two-player position (seats 0 and 2, three pawns each)."""
    d = {"to_move": to_move, "card": card, "pawns": [pawns0, None, pawns2, None], **extra}
    return state_from_dict(d, game.get_rules(RULES), 1)


def track(sq):
    return ["track", sq]


S = ["start"]


def codes(state, seat):
    return [int(E.pawn_code(state, seat, i)) for i in range(3)]


def test_layout_size_and_decoding():
    assert game.num_actions(RULES) == 802 == (T + 1) * N0 + 2
    assert game.num_actions("hasbro2013") == N0 == 80
    assert game.decode_action(RULES, NO_FIRE)[0] == "no_fire_move"
    assert game.decode_action(RULES, FIRE_MOVE)[0] == "fire_move"
    assert game.decode_action(RULES, 3 * N0 + FWD0 + 1) == ("move", 1, -1, -1, -1)
    assert game.action_token(RULES, 3 * N0 + FWD0 + 1) == 3
    assert game.action_token(RULES, FIRE_MOVE) == 0
    assert game.action_token("hasbro2013", FWD0) == 0


def test_iced_pawn_blocks_a_landing_and_is_jumped():
    base = dict(pawns0=[track(20), S, S], pawns2=[track(25), S, S])
    free = load(**base, card="5")
    iced = load(**base, card="5", ice=[2, 0])
    assert FWD0 in game.legal_actions(free, RULES)  # would bump the pawn on 25
    assert FWD0 not in game.legal_actions(iced, RULES)  # 20 + 5 = 25 is the iced pawn's square
    jump = load(**base, card="8", ice=[2, 0])
    assert FWD0 in game.legal_actions(jump, RULES)  # 20 + 8 = 28 jumps over it
    after = game.step(jump, RULES, FWD0)
    assert 28 in codes(after, 0) and 25 in codes(after, 2)


def test_iced_pawn_cannot_move_nor_be_swapped_or_taken():
    # Seat 2's own pawn is iced: its 5 cannot move it; a start is all that is left.
    s = load([track(40), S, S], [track(20), S, S], "5", to_move=2, ice=[2, 0])
    legal = game.legal_actions(s, RULES)
    assert FWD0 not in legal and START0 in legal
    # Seat 0's 11 cannot swap with the iced pawn, nor its Sorry! take it.
    s = load([track(40), S, S], [track(20), track(30), S], "11", ice=[2, 0])
    swaps = [a for a in game.legal_actions(s, RULES) if game.decode_action(RULES, a)[0] == "swap"]
    targets = {game.describe_action(s, RULES, a).split("with ")[1] for a in swaps}
    assert targets == {"Red's pawn on square 30"} or all("square 20" not in t for t in targets)
    s = load([track(40), S, S], [track(20), S, S], "SORRY", ice=[2, 0])
    assert not [a for a in game.legal_actions(s, RULES) if game.decode_action(RULES, a)[0] == "sorry"]


def test_slide_ending_on_ice_stops_before_it_and_sweeps_the_others():
    # Seat 1's short slide: triangle 16, end 19. Ice on seat 2's pawn at 19, another on 17.
    s = load([track(11), S, S], [track(19), track(17), S], "5", ice=[2, 0])
    after = game.step(s, RULES, FWD0)
    assert codes(after, 0)[0] == 18  # stopped on the square before the iced pawn
    assert sorted(codes(after, 2)) == [19, 66, 66]  # 17 swept to Start, the iced pawn stays
    assert game.tokens(after)["ice"] == (2, 0)
    # Ice inside the slide: not swept, and the slider reaches the end.
    s = load([track(11), S, S], [track(18), S, S], "5", ice=[2, 0])
    after = game.step(s, RULES, FWD0)
    assert codes(after, 0)[0] == 19 and codes(after, 2)[0] == 18


def test_one_must_ice_an_opponent_pawn_on_the_track():
    s = load([track(20), S, S], [track(30), ["safe", 1], S], "1")
    legal = game.legal_actions(s, RULES)
    # Only target slot 1 (canonical order: the safe pawn is slot 0), the pawn on 30: k = 2.
    assert {game.action_token(RULES, a) for a in legal} == {2}
    after = game.step(s, RULES, 2 * N0 + FWD0)
    assert game.tokens(after)["ice"] == (2, 1) and codes(after, 0)[0] == 21


def test_ice_with_no_eligible_pawn_goes_to_the_middle_and_frees_the_own_pawn():
    # Seat 0's own pawn is iced; seat 2 has nothing on the track: Ice goes to the middle
    # first, so the freed pawn may play the 1.
    s = load([track(20), S, S], [S, ["safe", 2], S], "1", ice=[0, 0])
    legal = game.legal_actions(s, RULES)
    assert {game.action_token(RULES, a) for a in legal} == {0}
    assert FWD0 in legal
    after = game.step(s, RULES, FWD0)
    assert game.tokens(after)["ice"] is None and codes(after, 0)[0] == 21


def test_two_moves_fire_or_keeps_it():
    # Canonical order: slot 0 is the pawn on safe 0, slot 1 the pawn on 20, slot 2 in Start.
    s = load([track(20), ["safe", 0], S], [track(30), S, S], "2", fire=[2, 0])
    legal = game.legal_actions(s, RULES)
    assert {game.action_token(RULES, a) for a in legal} == {0, 1, 2}  # keep, or slots 0 and 1 (not Start)
    after = game.step(s, RULES, 1 * N0 + FWD0 + 1)  # Fire onto the safe pawn, the pawn on 20 moves 2
    seat, slot = game.tokens(after)["fire"]
    assert seat == 0 and E.pawn_code(after, seat, slot) == 60 and 22 in codes(after, 0)
    kept = game.step(s, RULES, FWD0 + 1)
    assert game.tokens(kept)["fire"] == (2, 0)


def test_fire_move_sweeps_a_slide():
    # Seat 0's fire pawn on 12: the next slide ahead not its colour is seat 1's (16 -> 19).
    s = load([track(12), S, S], [track(18), track(17), S], None, fire=[0, 0], fire_decision=True)
    assert game.legal_actions(s, RULES).tolist() == [NO_FIRE, FIRE_MOVE]
    assert game.card(s) is None and game.fire_decision(s)
    after = game.step(s, RULES, FIRE_MOVE)
    assert codes(after, 0)[0] == 19 and sorted(codes(after, 2)) == [66, 66, 66]
    assert game.tokens(after)["fire"] == (0, 0)
    assert game.card(after) is not None and game.to_move(after) == 0 and not game.fire_decision(after)
    assert game.step(s, RULES, NO_FIRE)[E.PAWNS] == 12


def test_fire_decision_comes_at_the_start_of_the_owners_turn():
    s = load([track(12), S, S], [track(40), S, S], "3", to_move=2, fire=[0, 0])
    after = game.step(s, RULES, FWD0)
    assert game.to_move(after) == 0 and game.fire_decision(after) and game.card(after) is None
    # No fire move from the safety zone, when iced, or past the own safety entry.
    for pawns0, ice in (([["safe", 1], S, S], None), ([track(12), S, S], [0, 0]), ([track(59), S, S], None)):
        s = load(pawns0, [track(40), S, S], "3", to_move=2, fire=[0, 0], ice=ice)
        assert not game.fire_decision(game.step(s, RULES, FWD0 if ice is None else START0))


def test_fire_lost_when_bumped():
    s = load([track(20), S, S], [track(15), S, S], "5", to_move=2, fire=[0, 0])
    after = game.step(s, RULES, FWD0)
    assert codes(after, 0)[0] == 66 and game.tokens(after)["fire"] is None


def test_fire_follows_its_pawn_when_slots_resort_and_leaves_it_at_home():
    s = load([track(20), track(40), S], [track(10), S, S], "12", fire=[0, 0])
    after = game.step(s, RULES, FWD0 + 1)  # the pawn on 20 (slot 1 in canonical order) moves 12
    assert game.tokens(after)["fire"] is not None
    seat, slot = game.tokens(after)["fire"]
    assert E.pawn_code(after, seat, slot) == 32
    s = load([["safe", 3], S, S], [track(10), S, S], "2", fire=[0, 0])
    after = game.step(s, RULES, FWD0)
    assert codes(after, 0)[0] == 65 and game.tokens(after)["fire"] is None


def test_state_dict_round_trip_and_errors():
    s = load([track(12), S, S], [track(18), S, S], None, fire=[0, 0], ice=[2, 0], fire_decision=True)
    d = state_to_dict(s, game.get_rules(RULES))
    assert d["fire"] == [0, 0] and d["ice"] == [2, 0] and d["fire_decision"] is True
    assert state_to_dict(state_from_dict(d, game.get_rules(RULES), 5), game.get_rules(RULES)) == d
    bad = [
        ({"ice": [2, 1]}, "Ice only goes on a pawn on the track"),
        ({"fire": [0, 2]}, "Fire leaves a pawn in Start or Home"),
        ({"fire": [1, 0]}, "fire must be null"),
        ({"fire_decision": True}, "has no fire move"),
    ]
    for extra, message in bad:
        with pytest.raises(ValueError, match=message):
            load([track(12), S, S], [track(18), S, S], None, **extra)
    with pytest.raises(ValueError, match="no Fire and Ice"):
        state_from_dict(
            {"to_move": 0, "pawns": [[S] * 3, None, [S] * 3, None], "ice": None}, game.get_rules("hasbro2013"), 1
        )


def test_check_state_rejects_bad_tokens():
    s = load([track(12), S, S], [track(18), S, S], "3")
    r = R
    bad = s.copy()
    bad[E.ICE] = 31  # square 30: nobody there
    with pytest.raises(ValueError, match="ICE"):
        check_state(bad, r)
    bad = s.copy()
    bad[E.FIRE] = 3  # seat 0 slot 2: a pawn in Start
    with pytest.raises(ValueError, match="FIRE"):
        check_state(bad, r)
    bad = s.copy()
    bad[E.FIRE_PENDING] = 1  # a card is in play
    with pytest.raises(ValueError, match="FIRE_PENDING"):
        check_state(bad, r)
    with pytest.raises(ValueError, match="without Fire and Ice"):
        plain = game.new_state("hasbro2013", 2, seed=0)
        plain[E.ICE] = 1
        check_state(plain, game.rules_array("hasbro2013"))


def test_rules_validation():
    import dataclasses

    with pytest.raises(ValueError, match="fire_ice"):
        dataclasses.replace(game.get_rules("hasbro2003_teams"), fire_ice=True)
    with pytest.raises(ValueError, match="fire_ice must be True or False"):
        dataclasses.replace(game.get_rules("hasbro2013"), fire_ice=1)


def _invariants():
    sys.path.insert(0, "benchmarks")
    try:
        import invariants
    finally:
        sys.path.pop(0)
    return invariants


@njit
def _feature_counts(rules, active, games):
    """Random games: how often each power-up is in use (fire decisions, fire moves made, iced
    positions, positions where a pawn stands just before the iced pawn at a slide's end)."""
    buf = E.action_buffer(rules)
    state = np.zeros(E.STATE_SIZE, dtype=np.int64)
    fire_decisions = fire_moves = iced = 0
    for g in range(games):
        E.init_state(state, rules, active, g)
        while E.is_running(state, 2000):
            n = E.legal_actions(state, rules, buf)
            a = buf[E.randint(state, n)]
            if E.fire_decision_pending(state):
                fire_decisions += 1
                fire_moves += a == buf[1]
            iced += E.ice_pawn(state)[0] >= 0
            E.step(state, rules, a)
    return fire_decisions, fire_moves, iced


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_play_invariants(players, games=1500):
    invariants = _invariants()
    active = np.zeros(4, dtype=np.int64)
    active[list(game.DEFAULT_SEATS[players])] = 1
    counts = np.zeros(len(invariants.CHECKS), dtype=np.int64)
    moves, truncated = invariants.play_games(R, active, 1000 * players, games, 2000, counts)
    assert dict(zip(invariants.CHECKS, counts.tolist())) == dict.fromkeys(invariants.CHECKS, 0)
    assert moves > 100 * games and truncated == 0
    decisions, fire_moves, iced = _feature_counts(R, active, 200)
    assert decisions > 200 and 0 < fire_moves < decisions and iced > 1000  # the power-ups are in play


def test_invariant_checker_flags_a_moved_iced_pawn_and_bad_tokens():
    invariants = _invariants()
    n = E.n_actions(R)
    buffers = (np.empty(n, dtype=np.int64), np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int8))
    s = load([track(12), S, S], [track(18), S, S], "3", ice=[2, 0])
    counts = np.zeros(len(invariants.CHECKS), dtype=np.int64)
    invariants._check(s, R, *buffers, counts)
    assert counts.sum() == 0
    s[E.ICE] = 31  # square 30 is empty
    invariants._check(s, R, *buffers, counts)
    assert counts[invariants.CHECKS.index("tokens")] == 1


@pytest.mark.parametrize("seats", [(0, 2), (0, 1, 2, 3)])
def test_every_masked_action_steps_and_every_unmasked_is_refused(seats):
    rng = np.random.default_rng(len(seats))
    positions, kinds = [], set()
    for g in range(6):
        s = game.new_state(RULES, seats=seats, seed=50 + g)
        k = 0
        while game.winner(s) is None and k < 400:
            if k % 3 == 0 or game.fire_decision(s) or game.card(s) in ("1", "2"):
                positions.append(s)
            s = game.step(s, RULES, int(rng.choice(game.legal_actions(s, RULES))))
            k += 1
    n = game.num_actions(RULES)
    for s in positions[::4]:
        keep = s.copy()
        legal = game.legal_actions(s, RULES)
        assert np.flatnonzero(game.legal_mask(s, RULES)).tolist() == legal.tolist()
        for a in legal:
            kinds.add(game.decode_action(RULES, int(a))[0])
            s2 = game.step(s, RULES, int(a))
            check_state(s2, R)
            assert game.describe_action(s, RULES, int(a))
            if game.fire_decision(s):  # the same turn goes on, a card drawn, no card counted
                assert game.to_move(s2) == game.to_move(s) and game.card(s2) and s2[E.TURN] == s[E.TURN]
            else:
                assert s2[E.TURN] == s[E.TURN] + 1
        legal_set = set(legal.tolist())
        for a in rng.choice(n, 60, replace=False):
            if int(a) not in legal_set:
                with pytest.raises(ValueError):
                    game.check_action(s, RULES, int(a))
        assert np.array_equal(s, keep)
    assert {"no_fire_move", "fire_move", "move", "start"} <= kinds


def test_text_render_and_narration_show_the_tokens():
    from sorry_env import raw_env
    from sorry_env.board.narrate import describe_move

    rules = game.get_rules(RULES)
    s = load([track(12), S, S], [track(18), track(17), S], None, fire=[0, 0], ice=[2, 0], fire_decision=True)
    from sorry_env.board.render import render_ansi

    text = render_ansi(s, 3, fire_ice=True)
    assert "Fire: R1 (square 12) | Ice: Y1 (square 18)" in text and "decides on a fire move" in text
    after = game.step(s, RULES, FIRE_MOVE)
    told = describe_move(s, rules, FIRE_MOVE, after)
    # The slide ends on 19 past the iced pawn on 18, sweeping only the pawn on 17.
    assert "fire move from square 12 to square 16" in told and "sweeping Yellow's Y2 back to Start" in told
    assert codes(after, 2)[0] == 18
    one = load([track(20), S, S], [track(30), S, S], "1")
    a = int(game.legal_actions(one, RULES)[-1])
    told = describe_move(one, rules, a, game.step(one, RULES, a))
    assert told.startswith("Red plays 1: moves Ice onto Yellow's Y1 on square 30, then ")
    env = raw_env(num_players=2, rules=RULES, render_mode="ansi")
    env.reset(seed=3)
    assert "Fire: middle | Ice: middle" in env.render()


def test_image_render_draws_the_tokens():
    pytest.importorskip("PIL")
    from sorry_env.board.draw import board_array

    s = load([track(12), S, S], [track(18), S, S], "3", fire=[0, 0], ice=[2, 0])
    plain = load([track(12), S, S], [track(18), S, S], "3")
    image, without = board_array(s, RULES), board_array(plain, RULES)
    assert image.shape == without.shape and (image != without).any()


@pytest.mark.parametrize("spec", ["random", "greedy", "heuristic", "expectimax:depth=2", "montecarlo:iterations=40"])
def test_every_agent_plays_full_games_with_fire_decisions(spec):
    from sorry_env.agents import Turn, make_agent

    rules = game.get_rules(RULES)
    agents = {0: make_agent(spec, seed=1), 2: make_agent("heuristic", seed=2)}
    decisions = 0
    for seed in range(6 if spec in ("random", "greedy") else 2):  # the cheap agents play more games
        state = game.new_state(RULES, 2, seed=seed)
        rng = np.random.default_rng(seed)
        while E.is_running(state, 2000):
            turn = Turn.from_state(state, rules, rng)
            decisions += game.fire_decision(state) and turn.seat == 0
            action = agents[turn.seat].act(turn)
            assert action in turn.legal
            E.step(state, R, action)
        assert game.winner(state) is not None
    # The agent met fire decisions: it put Fire on its pawns with a 2. Greedy never does (Fire
    # adds no progress at once; docs/agents.md), so it meets none.
    assert (decisions == 0) if spec == "greedy" else (decisions > 0)


def test_trained_policies_are_refused_for_fire_and_ice():
    from sorry_env.agents import make_agent

    agent = make_agent("checkpoints/sorry-2p.safetensors")
    with pytest.raises(ValueError, match="was trained for rules 'hasbro2003'.*not 'hasbro2013_fire_ice'"):
        agent.check_game(game.get_rules(RULES), 2)


def test_the_play_command_plays_a_whole_fire_and_ice_game():
    import subprocess

    args = [sys.executable, "-m", "sorry_env.agents.play", "--rules", RULES, "--opponents", "heuristic", "--seed", "4"]
    last = "1\n" * 2000  # always the first listed move
    result = subprocess.run(args, input=last, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "Fire: " in result.stdout and "Ice: " in result.stdout
    assert "Ice onto" in result.stdout or "moves Ice onto" in result.stdout


@pytest.mark.parametrize("players", [2, 4])
def test_pettingzoo_api_seed_and_pickle(players):
    import pickle

    from pettingzoo.test import api_test, seed_test

    from sorry_env import env, raw_env

    api_test(raw_env(num_players=players, rules=RULES), num_cycles=300)
    seed_test(lambda: env(num_players=players, rules=RULES), num_cycles=300)
    e = raw_env(num_players=players, rules=RULES)
    e.reset(seed=1)
    for _ in range(40):
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(np.flatnonzero(mask)[-1]))
    copy = pickle.loads(pickle.dumps(e))
    assert copy.state_dict() == e.state_dict()
    again = raw_env(num_players=players, rules=RULES)
    again.reset(seed=9, options={"state": e.state_dict()})
    assert again.state_dict()["fire"] == e.state_dict()["fire"] and again.state_dict()["ice"] == e.state_dict()["ice"]


def test_gymnasium_env_shows_the_fire_decision():
    from sorry_env.agents.gym_factory import make_gym_env
    from sorry_env.board.observation import FIRE_DECISION_INDEX, ICE_BASE

    env = make_gym_env(num_players=2, opponents=("heuristic",), rules=RULES, seat=0)
    rng = np.random.default_rng(0)
    seen_decision = seen_ice = False
    for episode in range(4):
        obs, _ = env.reset(seed=episode)
        done = False
        while not done:
            assert obs["action_mask"].shape == (802,)
            seen_decision |= obs["observation"][FIRE_DECISION_INDEX] == 1
            seen_ice |= obs["observation"][ICE_BASE : ICE_BASE + 16].any()
            obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            done = terminated or truncated
    assert seen_decision and seen_ice
