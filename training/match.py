"""Win rate of a policy file against one scripted opponent, played in the Gymnasium env (a win
of the policy's side: under team rules, its partner finishing counts).

The learner seat rotates over the seats game by game and every other seat is the opponent,
so a 4-player evaluation is one policy seat against three copies of the opponent. This is
the quick in-training measurement; reported results come from the tournament evaluator.
"""

from __future__ import annotations

from pathlib import Path

from agents.gym_env import PolicyInputWrapper, SorryGymEnv
from agents.policy import PolicyAgent
from sorry_env.rules import DEFAULT_MAX_TURNS, Rules


def play_win_rate(
    policy_path: str | Path,
    opponent: str,
    num_players: int,
    rules: Rules | str,
    games: int,
    seed: int,
    max_turns: int = DEFAULT_MAX_TURNS,
) -> float:
    """Play `games` games of the policy against `opponent` and return the fraction its side won
    (a plain number; training.evaluate.win_rate_with_interval summarises a tally instead)."""
    policy = PolicyAgent(policy_path)
    policy.check_game(rules, num_players)
    env = PolicyInputWrapper(
        SorryGymEnv(num_players, [opponent], rules, max_turns=max_turns, illegal_action="raise", torch_threads=None)
    )
    seats = env.unwrapped.seats
    wins = 0
    for g in range(games):
        obs, _ = env.reset(seed=seed + g, options={"seat": seats[g % len(seats)]})
        done = False
        while not done:
            action = policy.act_batch(obs[None], env.action_masks()[None])[0]
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        wins += info["learner_won"]
    return wins / games
