"""Pictures of the board (sorry_env.board.draw) and the env's render modes: rgb_array, human, ansi."""

import importlib.util

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import render_test

from sorry_env import PRESETS, raw_env, state_from_dict
from sorry_env.board import board_layout as L
from sorry_env.board import game
from sorry_env.board.draw import DEFAULT_SIZE, INK, board_array, draw_board

S = ["start"]


def seat(*pawns):
    return [list(p) for p in pawns] + [S] * (4 - len(pawns))


def near(pixel, colour, tol=40):
    return all(abs(int(a) - int(b)) <= tol for a, b in zip(pixel, colour))


def cell_pixel(image, cell, dy=-0.3):
    """A pixel inside the pawn disc drawn on `cell`, above its label."""
    size = image.shape[0] / L.GRID
    col, row = cell
    return image[int((row + 0.5 + dy) * size), int((col + 0.5) * size)]


def test_rgb_array_is_a_uint8_image_with_pawns_in_their_colours_on_their_squares():
    e = raw_env(num_players=4, render_mode="rgb_array")
    e.reset(
        seed=0,
        options={
            "state": {
                "to_move": 0,
                "card": "3",
                "pawns": [seat(["track", 10]), seat(["track", 25]), seat(["safe", 2]), seat(["track", 55])],
            }
        },
    )
    image = e.render()
    assert isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.shape == (DEFAULT_SIZE, DEFAULT_SIZE, 3)
    assert near(cell_pixel(image, L.track_cell(10)), INK[0])
    assert near(cell_pixel(image, L.track_cell(25)), INK[1])
    assert near(cell_pixel(image, L.safe_cell(2, 2)), INK[2])
    assert near(cell_pixel(image, L.track_cell(55)), INK[3])
    assert not near(cell_pixel(image, L.track_cell(11)), INK[0])  # an empty square is not red
    e.step(2)  # Red's pawn 10 -> 13
    after = e.render()
    assert near(cell_pixel(after, L.track_cell(13)), INK[0]) and not near(cell_pixel(after, L.track_cell(10)), INK[0])


def test_pettingzoo_render_test_passes_headless(monkeypatch):
    if importlib.util.find_spec("pygame") is None:
        pytest.skip("pygame (the human extra) is not installed")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setitem(raw_env.metadata, "render_fps", 1000)  # no pauses between frames in a test
    render_test(lambda render_mode=None: raw_env(num_players=3, render_mode=render_mode))


def test_human_mode_without_pygame_names_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pygame" else real(name, *a))
    with pytest.raises(ImportError, match=r"sorry-env\[human\]"):
        raw_env(render_mode="human")


def test_unknown_render_mode_is_refused():
    with pytest.raises(ValueError, match="rgb_array"):
        raw_env(render_mode="video")


@pytest.mark.parametrize("name", ["hasbro2003_teams", "hasbro2003_points", "hasbro2013"])
def test_every_variant_draws_and_what_matters_to_it_changes_the_picture(name):
    rules = PRESETS[name]
    state = game.new_state(rules, 4, seed=3)
    image = board_array(state, rules)
    assert image.shape == (DEFAULT_SIZE, DEFAULT_SIZE, 3)
    if rules.hand_size:  # the mover's hand is drawn: another hand, another picture
        d = {"to_move": 0, "pawns": [seat()] * 4}
        others = [{"7": 1, "8": 1, "10": 1, "11": 1, "12": 1}] * 3
        one = state_from_dict({**d, "hands": [{"1": 1, "2": 1, "3": 1, "4": 1, "5": 1}, *others]}, rules, seed=0)
        two = state_from_dict({**d, "hands": [{"1": 3, "SORRY": 2}, *others]}, rules, seed=0)
        assert not np.array_equal(board_array(one, rules), board_array(two, rules))
        hidden = [{"7": 1, "8": 1, "10": 1, "11": 1, "SORRY": 1}, *others[1:]]  # another player's hand: hidden
        three = state_from_dict({**d, "hands": [{"1": 1, "2": 1, "3": 1, "4": 1, "5": 1}, *hidden]}, rules, seed=0)
        assert np.array_equal(board_array(one, rules), board_array(three, rules))
    if rules.teams != "none":  # the partnership is marked: differs from the same board without teams
        plain = board_array(state, PRESETS["hasbro2003"])
        assert not np.array_equal(image, plain)


def test_labels_and_caption_are_drawn_and_size_is_checked():
    state = game.new_state("hasbro2003", 2, seed=0)
    plain = np.asarray(draw_board(state, "hasbro2003"))
    captioned = np.asarray(draw_board(state, "hasbro2003", caption="Red plays 1: R1 leaves Start"))
    assert not np.array_equal(plain, captioned)
    assert draw_board(state, "hasbro2003", size=320).size == (320, 320)
    with pytest.raises(ValueError, match="size"):
        draw_board(state, "hasbro2003", size=10)


def test_ansi_board_prints_the_square_numbers_and_stable_labels():
    e = raw_env(num_players=2, render_mode="ansi")
    e.reset(
        seed=0,
        options={
            "state": {"to_move": 0, "card": "12", "pawns": [seat(["track", 20], ["track", 10]), None, seat(), None]}
        },
    )
    text = e.render()
    lines = text.split("\n")
    assert lines[0].split() == [str(n) for n in range(30, 46)]  # the top row: squares 30..45
    assert lines[17].split() == [str(n) for n in range(15, -1, -1)]  # the bottom row: 15..0, seat 0's side
    e.step(2 + 1)  # the 12 takes R2 (on 10) to 22, past R1: the engine re-sorts the slots
    text = e.render()
    assert "R2" in text.split("\n")[16 - 7]  # square 22 is on the left edge, row 8
    row = text.split("\n")[1 + L.track_cell(20)[1]]
    assert "R1" in row


def _box_meets_circle(box, centre, radius):
    """Does the rectangle (x0, y0, x1, y1) meet the disc (centre, radius)? All in pixels."""
    x = min(max(centre[0], box[0]), box[2])
    y = min(max(centre[1], box[1]), box[3])
    return (x - centre[0]) ** 2 + (y - centre[1]) ** 2 < radius**2


@pytest.mark.parametrize("rules", ["hasbro2003", "hasbro2003_teams", "hasbro2013_fire_ice"])
def test_a_long_caption_stays_clear_of_the_circles_with_visible_word_spaces(rules):
    state = game.new_state(rules, 4 if "teams" in rules else 2, seed=0)
    caption = "Yellow plays 7: Y2 moves 4 forward from square 44 to square 48, then Y3 moves 3 forward " * 3
    size = DEFAULT_SIZE
    boxes = draw_board(state, rules, caption=caption, size=size).info["caption_boxes"]
    assert len(boxes) == len(caption.split())
    cell = size / L.GRID
    circles = [(L.home_centre(s), L.HOME_RADIUS) for s in range(4)]
    circles += [(L.start_centre(s), L.START_RADIUS) for s in range(4)]
    for box in boxes:
        assert 0 <= box[0] and box[2] <= size and box[3] <= size
        for (x, y), radius in circles:
            assert not _box_meets_circle(box, (x * cell, y * cell), radius * cell), (box, (x, y))
    gaps = [b[0] - a[2] for a, b in zip(boxes, boxes[1:]) if abs(a[1] - b[1]) < 2]  # words on one line
    assert gaps and min(gaps) >= 3  # "square 44to square 46" no more


def test_the_picture_of_a_caption_has_no_overlapping_words():
    state = game.new_state("hasbro2003", 2, seed=0)
    boxes = draw_board(state, "hasbro2003", caption="Red plays 2: R1 moves 2 forward from square 44 to square 46").info[
        "caption_boxes"
    ]
    for k, a in enumerate(boxes):
        for b in boxes[k + 1 :]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)


def test_the_gymnasium_env_draws_the_pettingzoo_envs_pictures_after_every_move():
    """Same seed and start position, same moves: the Gymnasium env's picture after each of its
    steps (the learner's move, then the opponent's) is the PettingZoo env's after the same moves."""
    from sorry_env.gym_env import SorryGymEnv

    opponent_moves = []

    def first_legal(observation):
        action = int(np.flatnonzero(observation["action_mask"])[0])
        opponent_moves.append(action)
        return action

    start = {"to_move": 0, "card": "1", "pawns": [seat(), None, seat(), None]}
    gym_env = SorryGymEnv(2, [first_legal], seat=0, render_mode="rgb_array")
    pz = raw_env(num_players=2, render_mode="rgb_array")
    obs, _ = gym_env.reset(seed=4, options={"state": start})
    pz.reset(seed=4, options={"state": start})
    np.testing.assert_array_equal(gym_env.render(), pz.render())
    rng = np.random.default_rng(0)
    for _ in range(12):
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        opponent_moves.clear()
        obs, _, terminated, truncated, _ = gym_env.step(action)
        for move in [action, *opponent_moves]:
            pz.step(move)
        picture = gym_env.render()
        assert picture.dtype == np.uint8 and picture.shape == (DEFAULT_SIZE, DEFAULT_SIZE, 3)
        np.testing.assert_array_equal(picture, pz.render())
        assert gym_env.render_mode == "rgb_array" and not (terminated or truncated)
    text = SorryGymEnv(2, [first_legal], seat=0, render_mode="ansi")
    text.reset(seed=4, options={"state": start})
    pz_text = raw_env(num_players=2, render_mode="ansi")
    pz_text.reset(seed=4, options={"state": start})
    assert text.render() == pz_text.render()


def test_gymnasium_make_with_rgb_array_and_human_headless(monkeypatch):
    env = gymnasium.make("sorry_env/Sorry-v1", num_players=2, opponents=["heuristic"], render_mode="rgb_array")
    env.reset(seed=0)
    image = env.render()
    assert isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    with (
        pytest.raises(ValueError, match="rgb_array"),
        pytest.warns(UserWarning, match="not in the possible render_modes"),
    ):
        gymnasium.make("sorry_env/Sorry-v1", render_mode="video")
    if importlib.util.find_spec("pygame") is None:
        pytest.skip("pygame (the human extra) is not installed")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    human = gymnasium.make("sorry_env/Sorry-v1", num_players=2, opponents=["random"], render_mode="human")
    obs, _ = human.reset(seed=0)
    assert human.unwrapped._renderer._window is not None  # the window opened at reset
    human.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert human.render() is None
    human.close()
    assert human.unwrapped._renderer._window is None
