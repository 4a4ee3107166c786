"""Board layout (sorry_env.board.board_layout): the drawn board's geometry matches the rules' board."""

import itertools
import json

import pytest

from sorry_env.board import board_layout as L
from sorry_env.board import geometry as G


def _on_edge(cell):
    col, row = cell
    return col in (0, L.GRID - 1) or row in (0, L.GRID - 1)


def _adjacent(a, b):
    return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1


def _inside(point):
    return 0 <= point[0] <= L.GRID and 0 <= point[1] <= L.GRID


def test_track_is_sixty_distinct_edge_cells():
    cells = [L.track_cell(sq) for sq in range(G.TRACK)]
    assert len(set(cells)) == G.TRACK
    assert all(_on_edge(c) for c in cells)
    assert all(0 <= c[0] < L.GRID and 0 <= c[1] < L.GRID for c in cells)
    # 16 cells on each side, corners shared
    for row in (0, L.GRID - 1):
        assert sum(1 for c in cells if c[1] == row) == 16
    for col in (0, L.GRID - 1):
        assert sum(1 for c in cells if c[0] == col) == 16


def test_consecutive_squares_are_adjacent_and_clockwise():
    for sq in range(G.TRACK):
        assert _adjacent(L.track_cell(sq), L.track_cell((sq + 1) % G.TRACK)), sq
    # seat 0 along the bottom, running right to left from the bottom-right corner (clockwise)
    assert L.track_cell(0) == (15, 15)
    assert L.track_cell(1) == (14, 15)
    assert L.track_cell(15) == (0, 15)
    assert L.track_cell(30) == (0, 0)
    assert L.track_cell(45) == (15, 0)
    # every seat's side of 15 squares is on its own edge: 0 bottom, 1 left, 2 top, 3 right
    for seat, on_side in enumerate(
        [lambda c: c[1] == 15, lambda c: c[0] == 0, lambda c: c[1] == 0, lambda c: c[0] == 15]
    ):
        assert all(on_side(L.track_cell(15 * seat + i)) for i in range(15)), seat


def test_safety_zones_run_inward_from_the_entry():
    track = {L.track_cell(sq) for sq in range(G.TRACK)}
    seen = set()
    for seat in range(G.N_SEATS):
        zone = [L.safe_cell(seat, k) for k in range(G.SAFE_LEN)]
        assert not any(_on_edge(c) for c in zone)
        assert not set(zone) & track
        assert _adjacent(L.track_cell(G.safety_entry(seat)), zone[0])
        for a, b in itertools.pairwise(zone):
            assert _adjacent(a, b)
        assert not set(zone) & seen
        seen |= set(zone)
        # Home is just past safe 4; Start next to the start square, both inside the board
        home, start = L.home_centre(seat), L.start_centre(seat)
        assert _inside(home) and _inside(start)
        last = L.safe_cell(seat, G.SAFE_LEN - 1)
        assert abs(home[0] - (last[0] + 0.5)) + abs(home[1] - (last[1] + 0.5)) <= 0.5 + L.HOME_RADIUS + 0.1
        sq = L.track_cell(G.start_circle(seat))
        assert abs(start[0] - (sq[0] + 0.5)) + abs(start[1] - (sq[1] + 0.5)) <= 2.0
        # the Start circle does not cover any track or safety cell centre
        for c in track | seen:
            assert (c[0] + 0.5 - start[0]) ** 2 + (c[1] + 0.5 - start[1]) ** 2 > L.START_RADIUS**2


def test_slides_match_the_rules_board():
    got = L.slides()
    assert len(got) == 8
    for seat in range(G.N_SEATS):
        owned = [(first, last) for owner, first, last in got if owner == seat]
        assert owned == [(15 * seat + 1, 15 * seat + 4), (15 * seat + 9, 15 * seat + 13)]
        for first, last in owned:
            assert G.SLIDE_OWNER[first] == seat and G.SLIDE_END[first] == last
    assert L.slide_squares(9, 13) == [9, 10, 11, 12, 13]


def test_layout_round_trips_through_json():
    data = L.layout()
    back = json.loads(json.dumps(data))
    assert back == data
    assert back["grid"] == L.GRID
    assert [tuple(c) for c in back["track"]] == [L.track_cell(sq) for sq in range(G.TRACK)]
    assert [[tuple(c) for c in zone] for zone in back["safe"]] == [
        [L.safe_cell(s, k) for k in range(G.SAFE_LEN)] for s in range(G.N_SEATS)
    ]
    assert [tuple(p) for p in back["start"]] == [L.start_centre(s) for s in range(G.N_SEATS)]
    assert [tuple(p) for p in back["home"]] == [L.home_centre(s) for s in range(G.N_SEATS)]
    assert [tuple(s) for s in back["slides"]] == L.slides()


@pytest.mark.parametrize(
    "call",
    [
        lambda: L.track_cell(60),
        lambda: L.track_cell(-1),
        lambda: L.safe_cell(4, 0),
        lambda: L.safe_cell(0, 5),
        lambda: L.start_centre(-1),
        lambda: L.home_centre(4),
    ],
)
def test_out_of_range_arguments_are_refused(call):
    with pytest.raises(ValueError):
        call()


def test_home_circles_leave_every_safety_square_whole():
    for seat in range(G.N_SEATS):
        x, y = L.home_centre(seat)
        for other in range(G.N_SEATS):
            for k in range(G.SAFE_LEN):
                col, row = L.safe_cell(other, k)
                nearest = (min(max(x, col), col + 1), min(max(y, row), row + 1))
                assert (nearest[0] - x) ** 2 + (nearest[1] - y) ** 2 > L.HOME_RADIUS**2, (seat, other, k)
