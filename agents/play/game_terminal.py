"""``sorry-play --game ID``: a person against agents in any registered game other than the
board game (:mod:`sorry_env.games`), built on the registry's functional API alone.

    sorry-play --game ID --players 3 --opponents heuristic random
    sorry-play --game ID --opponents greedy --seat 1 --seed 7

Before each of your moves the position is printed as the game draws it for you
(``Game.render_text``, which leaves out what you may not see), your legal moves are listed in
the game's words (``Game.describe_action``) and you answer with a move's number (``q``
quits). A lone legal move plays itself. Every move is printed as it happens, and turns that
passed without a possible move (a roll nothing can use) are counted. Opponents are agent
specs of that game (:func:`sorry_env.agents.any_game.make_game_agent`: ``random``,
``greedy``, the game's own agents with settings, a policy file of that game,
``package.module:Name``); seats are named by the game's seat names.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from sorry_env import games
from sorry_env.agent import GameTurn
from sorry_env.agents import set_torch_threads

from .. import agents_of_game as agent_makers
from .. import check_plays, make_agent
from .prompt import Quit, ask_choice, seats_after

# The opponent when none is named: the first of these the game offers (its own heuristic,
# else the generic one-ply greedy, else random play).
DEFAULT_OPPONENTS = ("heuristic", "greedy", "random")


def default_opponent(game: games.Game) -> str:
    offered = agent_makers(game.game_type.id)
    return next(name for name in DEFAULT_OPPONENTS if name in offered)


def build_game_opponents(
    game: games.Game, specs: list[str], human_seat: int, num_players: int, seed: int
) -> dict[int, tuple[str, object]]:
    """seat -> (label, agent) for the seats other than the human's, in turn order after it;
    ValueError for a spec the game does not have (or of another game), before any play."""
    seats = game.seats(game.new_state(num_players, seed=0))
    opponents = {}
    for k, (seat, spec) in enumerate(seats_after(specs, seats, human_seat)):
        agent = make_agent(spec, seed=seed + 1 + k, game=game)
        check_plays(agent, game, num_players)
        opponents[seat] = (os.path.basename(spec), agent)  # a policy file shows as its file name
    return opponents


def play_game(
    game: games.Game,
    human_seat: int,
    opponents: dict,
    num_players: int,
    seed: int,
    max_turns: int,
    read: Callable[[str], str] = input,
) -> int | None:
    """One game; `opponents` maps each other seat to (label, agent). Returns the winning seat
    (None if the game reached `max_turns` of the game's turns)."""
    kind = game.game_type
    rng = np.random.default_rng(seed)  # the opponents' re-drawn views of hidden parts
    state = game.new_state(num_players, seed=seed)
    while game.winner(state) is None and game.turn(state) < max_turns:
        seat = game.to_move(state)
        legal = game.legal_actions(state)
        forced = len(legal) == 1
        if seat == human_seat and not forced:
            print("\n" + game.render_text(state, human_seat))
            options = [game.describe_action(state, int(a)) for a in legal]
            action = int(legal[ask_choice(options, read)])
        elif seat == human_seat:
            action = int(legal[0])  # forced: no question to ask
        else:
            label, agent = opponents[seat]
            action = agent.act(GameTurn.from_state(game, state, rng, legal))
            if action not in legal:
                raise Quit(f"{label} chose action {action!r}, not one of the legal {legal.tolist()}")
        before, state = state, game.apply(state, int(action))
        who = "You" if seat == human_seat else f"{kind.seat_names[seat]} ({opponents[seat][0]})"
        note = " (forced: your only move)" if seat == human_seat and forced else ""
        print(f"{who}: {game.describe_action(before, int(action))}{note}")
        passed = game.turn(state) - game.turn(before) - 1  # turns after this one that nobody could use
        if passed > 0:
            print(f"  ({passed} {kind.turn_unit} passed without a possible move)")
    print("\n" + game.render_text(state, human_seat))
    return game.winner(state)


def run(game: games.Game, args, error: Callable[[str], None]) -> int:
    """``sorry-play --game ID`` once the arguments are parsed (the board game's options that
    mean nothing here refused); `error` ends the command with a usage message."""
    kind = game.game_type
    if args.list or args.estimate is not None:
        error(f"--list and --estimate name the board game's shipped policies; {kind.long_name} has none")
    try:
        players = kind.check_players(args.players)
        seats = game.seats(game.new_state(players, seed=0))
    except ValueError as exc:
        error(f"--players: {exc}")
    max_turns = kind.max_turns if args.max_turns is None else args.max_turns
    human_seat = seats[0] if args.seat is None else args.seat
    if human_seat not in seats:
        error(f"--seat must be one of the seats in play {list(seats)}")
    specs = args.opponents or [default_opponent(game)]
    try:
        opponents = build_game_opponents(game, specs, human_seat, players, args.seed)
    except ValueError as exc:
        error(f"--opponents: {exc}")
    set_torch_threads()  # policies answer one position at a time: one thread (SORRY_TORCH_THREADS to change)
    print(
        f"{kind.long_name}: you are {kind.seat_names[human_seat]} (seat {human_seat}). Opponents: "
        + ", ".join(f"{kind.seat_names[s]} = {label}" for s, (label, _) in opponents.items())
    )
    try:
        winner = play_game(game, human_seat, opponents, players, args.seed, max_turns)
    except Quit as why:
        print(f"\nGame abandoned: {why}.")
        return 1
    if winner is None:
        print(f"No winner after {max_turns} {kind.turn_unit}: a draw.")
    elif winner == human_seat:
        print("You win!")
    else:
        print(f"{kind.seat_names[winner]} ({opponents[winner][0]}) wins.")
    return 0
