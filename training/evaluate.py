"""The old home of the tournament code, kept so ``from sorry_env.training.evaluate import run_tournament``
and ``python -m sorry_env.training.evaluate`` keep working: everything now lives in :mod:`sorry_env.agents.arena`
(play, pool, stats, tournament, output, cli)."""

from sorry_env.agents.arena.cli import (  # noqa: F401
    check_out_dir,
    main,
    parse_args,
)
from sorry_env.agents.arena.output import (  # noqa: F401
    agent_csv_rows,
    format_table,
    game_csv_rows,
    percent,
    plot_win_rates,
    write_csv,
    write_outputs,
)
from sorry_env.agents.arena.play import (  # noqa: F401
    Table,
    game_seeds,
    seating,
)
from sorry_env.agents.arena.pool import (  # noqa: F401
    LOCKSTEP_CHUNK,
    _play_in_worker,
    _play_many,
    _start_worker,
    check_picklable,
    play_games,
)
from sorry_env.agents.arena.stats import (  # noqa: F401
    Z_95,
    agent_labels,
    entry_at_turn_position,
    mean_score,
    sides,
    skill_ratings,
    summarize,
    wilson_interval,
    win_rate_with_interval,
)
from sorry_env.agents.arena.tournament import (  # noqa: F401
    _game_type_of,
    run_game_tournament,
    run_tournament,
)

if __name__ == "__main__":
    main()
