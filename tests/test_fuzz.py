"""Bounded fuzzers for the public edges (fixed seeds and budgets; a few thousand cases in all).

They are the small form of the study that found the defects of the hardening issue: mutated
state dicts, custom Rules of every type, damaged policy files and corrupted state arrays.
Each case must end in a result that works or in a ValueError with a short message; never
another exception type, an unplayable position or a crash. ``benchmarks/invariants.py`` is
the long-run companion (millions of games).
"""

import copy
import functools
import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sorry_env import PRESETS
from sorry_env.board import game
from sorry_env.board.rules import Rules
from sorry_env.board.state_io import state_from_dict, state_to_dict
from sorry_env.checks import check_state


def fuzz(max_examples):
    """A fixed budget and seed: the same cases on every run."""
    return settings(
        max_examples=max_examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


NO_HANDS = [name for name, rules in PRESETS.items() if not rules.hand_size]

# JSON-like values, with the awkward ones: huge integers, bools, floats, deep and long values.
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 70),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True),
    st.sampled_from(["start", "track", "safe", "home", "7", "SORRY", ""]),
    st.text(max_size=5),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=12,
)


def position(rules_name, seed, plies):
    """A state dict of a real position: `plies` random legal moves into a game."""
    players = 4 if PRESETS[rules_name].teams != "none" else 2 + seed % 3
    state = game.new_state(rules_name, players, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        if game.winner(state) is not None:
            break
        state = game.step(state, rules_name, int(rng.choice(game.legal_actions(state, rules_name))))
    return state_to_dict(state, PRESETS[rules_name]), game.winner(state) is not None


def paths(value, prefix=(), depth=8):
    """Every path to a value inside nested dicts and lists, down to `depth` levels (a hostile
    value nested thousands deep is replaced whole, not walked)."""
    yield prefix
    if depth == 0:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, prefix + (key,), depth - 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, prefix + (index,), depth - 1)


def assert_playable_or_refused(d, rules_name, seed=0):
    rules = PRESETS[rules_name]
    try:
        state = state_from_dict(d, rules, seed)
    except ValueError as error:
        assert len(str(error)) < 400, str(error)[:500]
        return
    check_state(state, game.rules_array(rules))
    legal = game.legal_actions(state, rules)
    assert len(legal) > 0
    game.step(state, rules, int(legal[0]))


@fuzz(700)
@pytest.mark.ci_slow  # over 10 s: CI runs it after the README's test command
@given(st.sampled_from(sorted(PRESETS)), st.integers(0, 10**6), st.integers(0, 80), st.data())
def test_mutated_state_dicts_load_playable_or_are_refused(rules_name, seed, plies, data):
    d, over = position(rules_name, seed, plies)
    if over:
        return
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.sampled_from(list(paths(d))))
        if not where:
            d = data.draw(VALUES)
            break
        parent = d
        for key in where[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            parent.pop(where[-1])
        else:
            parent[where[-1]] = data.draw(VALUES)
    assert_playable_or_refused(d, rules_name)


@fuzz(300)
@given(st.integers(0, 10**6), st.integers(0, 60), st.integers(1, 6), st.lists(st.integers(-1, 8), max_size=9))
def test_split_sevens_load_playable_or_are_refused(seed, plies, left, moved):
    d, over = position("hasbro2003_teams", seed, plies)
    if over:
        return
    d = dict(d, card="7", split_seven={"left": left, "moved": moved})
    assert_playable_or_refused(d, "hasbro2003_teams")


RULE_FIELDS = {
    "pawns_per_player": st.one_of(st.sampled_from([3, 4]), SCALARS),
    "pack": st.one_of(st.lists(st.integers(0, 5), min_size=11, max_size=11), st.lists(SCALARS, max_size=12), SCALARS),
    "two_draws_again": st.one_of(st.booleans(), SCALARS),
    "start_cards": st.one_of(st.lists(st.sampled_from(["1", "2", "3", "7", "11", "SORRY", "13"]), max_size=4), SCALARS),
    "sorry_forward": st.one_of(st.sampled_from([0, 4]), SCALARS),
    "fast_play": st.one_of(st.booleans(), SCALARS),
    "teams": st.one_of(st.sampled_from(["none", "parker1958", "hasbro2003"]), SCALARS),
    "hand_size": st.one_of(st.sampled_from([0, 5]), SCALARS),
    "scoring": st.one_of(st.sampled_from(["none", "hasbro2003", "parker1939"]), SCALARS),
    "fire_ice": st.one_of(st.booleans(), SCALARS),
}


@fuzz(400)
@given(st.fixed_dictionaries({}, optional=RULE_FIELDS), st.integers(0, 1000))
def test_custom_rules_are_refused_or_play(fields, seed):
    try:
        rules = Rules(name="fuzz", **fields)
    except ValueError as error:
        assert len(str(error)) < 400
        return
    players = 4 if rules.teams != "none" else 2
    state = game.new_state(rules, players, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(60):
        if game.winner(state) is not None:
            break
        legal = game.legal_actions(state, rules)
        assert len(legal) > 0
        state = game.step(state, rules, int(rng.choice(legal)))


@functools.cache
def policy_bytes(tmp_dir):
    """The bytes of a small valid policy file (built once)."""
    import torch

    from sorry_env.agents.policy import Actor, save_policy

    torch.manual_seed(0)
    path = tmp_dir / "valid.safetensors"
    save_policy(
        path,
        Actor("afterstate", [8], "relu", "hasbro2003"),
        rules="hasbro2003",
        num_players=2,
        network={"kind": "afterstate", "hidden": [8], "activation": "relu"},
        name="fuzz",
    )
    return path.read_bytes()


@fuzz(400)
@given(st.data())
def test_damaged_policy_files_are_refused_or_load(tmp_path_factory, data):
    from sorry_env.agents.policy import load_policy

    blob = bytearray(policy_bytes(tmp_path_factory.getbasetemp()))
    header_end = 8 + int.from_bytes(blob[:8], "little")
    how = data.draw(st.sampled_from(["flip", "truncate", "metadata"]))
    if how == "flip":
        for _ in range(data.draw(st.integers(1, 4))):
            blob[data.draw(st.integers(0, header_end - 1))] = data.draw(st.integers(0, 255))
    elif how == "truncate":
        blob = blob[: data.draw(st.integers(0, len(blob) - 1))]
    else:
        header = json.loads(blob[8:header_end])
        meta = json.loads(header["__metadata__"]["sorry_policy"])
        where = data.draw(st.sampled_from([p for p in paths(meta) if p]))
        parent = meta
        for key in where[:-1]:
            parent = parent[key]
        parent[where[-1]] = data.draw(VALUES)
        header["__metadata__"]["sorry_policy"] = json.dumps(meta)
        raw = json.dumps(header).encode()
        blob = len(raw).to_bytes(8, "little") + raw + blob[header_end:]
    path = tmp_path_factory.getbasetemp() / "fuzzed.safetensors"
    path.write_bytes(bytes(blob))
    try:
        load_policy(path)
    except ValueError as error:
        assert len(str(error)) < 600, str(error)[:700]


ARRAY_FUZZ = """
import sys
import numpy as np
import pytest
from sorry_env import PRESETS
from sorry_env.board import engine as E, game
rng = np.random.default_rng(int(sys.argv[1]))
names = sorted(PRESETS)
calls = 0
for case in range(int(sys.argv[2])):
    name = names[case % len(names)]
    players = 4 if PRESETS[name].teams != "none" else 2 + case % 3
    s = game.new_state(name, players, seed=case)
    for _ in range(int(rng.integers(0, 40))):
        if game.winner(s) is not None:
            break
        s = game.step(s, name, int(rng.choice(game.legal_actions(s, name))))
    for _ in range(int(rng.integers(1, 4))):
        i = int(rng.integers(0, E.STATE_SIZE))
        s[i] = rng.choice([rng.integers(-3, 70), rng.integers(-2**40, 2**40), s[i] + 1, s[i] - 1])
    for call in (lambda: game.legal_actions(s, name), lambda: game.legal_mask(s, name),
                 lambda: game.step(s, name, int((list(game.legal_actions(s, name)) or [0])[0])),
                 lambda: game.describe_action(s, name, 1)):
        try:
            call()
            calls += 1
        except ValueError:
            pass
print("DONE", calls)
"""


def test_corrupted_state_arrays_never_crash_the_engine():
    """Random corruptions of real state arrays (in a child process, so a crash is a failure
    here rather than the end of the test run)."""
    result = subprocess.run(
        [sys.executable, "-c", ARRAY_FUZZ, "0", "3000"], capture_output=True, text=True, check=False, timeout=600
    )
    assert result.returncode == 0 and "DONE" in result.stdout, (result.returncode, result.stderr[-2000:])


def test_the_fuzzers_start_from_real_positions():
    d, _ = position("hasbro2003_teams", 3, 30)
    assert_playable_or_refused(copy.deepcopy(d), "hasbro2003_teams")
    assert state_from_dict(d, PRESETS["hasbro2003_teams"], 0) is not None


def test_the_invariant_checker_flags_broken_states():
    """benchmarks/invariants.py counts what it should: a sound state passes, broken ones do not."""
    sys.path.insert(0, "benchmarks")
    try:
        import invariants
    finally:
        sys.path.pop(0)
    from sorry_env.board import engine as E

    rules = game.rules_array("hasbro2003")
    n = E.num_actions(rules)
    buffers = (np.empty(n, dtype=np.int64), np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int8))

    def broken(change):
        s = game.new_state("hasbro2003", 2, seed=1)
        change(s)
        counts = np.zeros(len(invariants.CHECKS), dtype=np.int64)
        invariants._check(s, rules, *buffers, counts)
        return {c for c, k in zip(invariants.CHECKS, counts) if k}

    assert broken(lambda s: None) == set()
    assert broken(lambda s: s.__setitem__(E.REMAIN, s[E.REMAIN] + 1)) == {"draw_pile"}
    assert broken(lambda s: s.__setitem__(slice(E.PAWNS, E.PAWNS + 2), 5)) == {"two_on_square"}
    assert broken(lambda s: s.__setitem__(E.PAWNS + 4, 3)) == {"pawn_code"}  # a pawn of an empty seat
    assert broken(lambda s: s.__setitem__(E.WINNER, int(s[E.TO_MOVE]))) == {"winner"}
    assert broken(lambda s: s.__setitem__(E.ICE, 1)) == {"tokens"}  # Ice under rules without it
    counts = np.zeros(len(invariants.CHECKS), dtype=np.int64)
    moves, truncated = invariants.play_games(rules, np.array([1, 0, 1, 0]), 0, 20, 2000, counts)
    assert moves > 20 * 50 and truncated == 0 and counts.sum() == 0


@pytest.mark.parametrize("rules_name", sorted(PRESETS))
def test_compiled_random_playouts_end_in_sound_states(rules_name):
    """E.random_playout sized its action buffer for one card: with hands (1,573 actions) the
    legal actions were written past its end."""
    from sorry_env.board import engine as E

    rules = game.rules_array(rules_name)
    for seed in range(5):
        state = game.new_state(rules_name, 4, seed=seed)
        E.random_playout(state, rules, 2000)
        check_state(state, rules)
        assert game.winner(state) is not None


# ---- Sorry! Express state dicts: the same guarantees as the board game's (issue 23) ----------

HOSTILE = st.one_of(
    st.integers(2**62, 2**64),
    st.just(2**63),
    st.just(-(2**63)),
    st.just(10**5000),  # more digits than Python will print
    st.text(min_size=2000, max_size=3000),
    st.integers(500, 3000).map(lambda depth: functools.reduce(lambda inner, _: [inner], range(depth), 0)),
    st.integers(500, 3000).map(lambda depth: functools.reduce(lambda inner, _: {"Red": inner}, range(depth), 1)),
)


def express_position(players, seed, plies):
    """A state dict of a real Express position: `plies` random legal moves into a game."""
    from sorry_env.express import game as xgame
    from sorry_env.express.state_io import state_to_dict as x_to_dict

    state = xgame.new_state(players, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        if xgame.winner(state) is not None:
            break
        state = xgame.step(state, int(rng.choice(xgame.legal_actions(state))))
    return x_to_dict(state), xgame.winner(state) is not None


def assert_express_playable_or_refused(d, seed=0):
    from sorry_env.express import engine as XE
    from sorry_env.express import game as xgame
    from sorry_env.express.state_io import state_from_dict as x_from_dict

    try:
        state = x_from_dict(d, seed)
    except ValueError as error:
        assert len(str(error)) < 400, str(error)[:500]
        return
    # Playable, with every count within the game's bounds and the observation in [0, 1].
    assert xgame.winner(state) is None and len(xgame.legal_actions(state)) > 0
    owned = xgame.owned(state)
    assert owned.min() >= 0 and owned.sum(axis=0).max() <= XE.PAWNS_PER_COLOUR
    assert 0 <= xgame.turn(state) < 2**62
    obs = np.empty(XE.OBS_SIZE, dtype=np.float32)
    XE.observe(state, xgame.to_move(state), obs)
    assert np.isfinite(obs).all() and obs.min() >= 0 and obs.max() <= 1
    xgame.step(state, int(xgame.legal_actions(state)[0]))


@fuzz(600)
@given(st.integers(2, 4), st.integers(0, 10**6), st.integers(0, 60), st.data())
def test_mutated_express_state_dicts_load_playable_or_are_refused(players, seed, plies, data):
    d, over = express_position(players, seed, plies)
    if over:
        return
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.sampled_from(list(paths(d))))
        value = data.draw(st.one_of(VALUES, HOSTILE, st.sampled_from(["Red", "Blue", "Wild", "Slide", "Sorry!"])))
        if not where:
            d = value
            break
        parent = d
        for key in where[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            parent.pop(where[-1])
        elif isinstance(parent, dict) and data.draw(st.booleans()):  # a new key: a colour, or anything
            parent[data.draw(st.one_of(st.sampled_from(["Red", "Green", "dice", "turn"]), st.text(max_size=3)))] = value
        else:
            parent[where[-1]] = value
    assert_express_playable_or_refused(d)


@fuzz(300)
@given(st.sampled_from(sorted(PRESETS)), st.integers(0, 10**6), st.integers(0, 60), st.data())
def test_board_state_dicts_with_hostile_values_are_refused_shortly(rules_name, seed, plies, data):
    """The board game's loader against the values that broke the Express one: huge integers,
    thousands of digits, megabyte strings, nesting thousands deep."""
    d, over = position(rules_name, seed, plies)
    if over:
        return
    where = data.draw(st.sampled_from([p for p in paths(d) if p]))
    parent = d
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = data.draw(HOSTILE)
    assert_playable_or_refused(d, rules_name)
