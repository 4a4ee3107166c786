"""The old home of the tournament code, kept so ``from training.evaluate import run_tournament``
and ``python -m training.evaluate`` keep working: everything now lives in :mod:`agents.arena`
(play, pool, stats, tournament, output, cli)."""

from agents.arena.cli import (  # noqa: F401
    check_out_dir,
    main,
    parse_args,
)
from agents.arena.output import (  # noqa: F401
    agent_csv_rows,
    format_table,
    game_csv_rows,
    percent,
    plot_win_rates,
    write_csv,
    write_outputs,
)
from agents.arena.play import (  # noqa: F401
    Table,
    game_seeds,
    seating,
)
from agents.arena.pool import (  # noqa: F401
    LOCKSTEP_CHUNK,
    _play_in_worker,
    _play_many,
    _start_worker,
    check_picklable,
    play_games,
)
from agents.arena.stats import (  # noqa: F401
    Z_95,
    _short,
    agent_labels,
    entry_at_turn_position,
    mean_score,
    sides,
    skill_ratings,
    summarize,
    wilson_interval,
    win_rate_with_interval,
)
from agents.arena.tournament import (  # noqa: F401
    GAME_TOURNAMENTS,
    _game_type_of,
    game_tournament,
    run_tournament,
)

if __name__ == "__main__":
    main()
