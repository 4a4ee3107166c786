"""Training end to end on the smoke config: checkpoint, resume, export."""

import json
import pathlib
import shutil

import numpy as np
import pytest
from float_margins import near_tie  # tests/ is on sys.path (pytest rootdir import mode)

from sorry_env.agents.gym_factory import make_gym_env
from sorry_env.agents.policy import PolicyAgent, read_metadata
from sorry_env.board.observation import OBS_SIZE
from sorry_env.board.policy_input import INPUT_SIZE, STATE_SIZE
from sorry_env.gym_env import PolicyInputWrapper
from sorry_env.training.config import load_config, validate
from sorry_env.training.export import export_model, export_run
from sorry_env.training.opponents import OpponentPool
from sorry_env.training.train import make_envs, make_model, train
from sorry_env.version import LAYOUT_VERSION

SMOKE = "configs/smoke.yaml"


def load_checkpoint(run_dir, cfg):
    """The run's MaskablePPO as --resume rebuilds it: from the config, then the checkpoint."""
    from sorry_env.training import checkpoint

    model = make_model(cfg, make_envs(cfg, OpponentPool({"random": 1.0}), seed=0), run_dir / "tb")
    checkpoint.restore(model, run_dir / checkpoint.FILE)
    return model


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """One smoke run (2,048 steps), shared by the tests below."""
    runs = tmp_path_factory.mktemp("runs")
    run = train(load_config(SMOKE), runs)
    return runs, run.dir


def test_training_writes_checkpoint_pool_logs_and_curve(smoke_run):
    _, run_dir = smoke_run
    state = json.loads((run_dir / "run_state.json").read_text())
    assert state["timesteps"] >= 2048
    assert len(state["snapshots"]) >= 2  # the initial policy and one scheduled snapshot
    assert all((run_dir / p).exists() for p in state["snapshots"])
    assert state["evaluations"][-1]["timesteps"] == state["timesteps"]
    assert (run_dir / "checkpoint.safetensors").exists() and (run_dir / "learning_curve.png").exists()
    assert not (run_dir / "checkpoint.zip").exists()  # no pickle-based file in a run directory
    assert any((run_dir / "tb").rglob("events.out.tfevents.*"))
    assert read_metadata(run_dir / "policy.safetensors")["training"]["timesteps"] == state["timesteps"]


def test_resume_continues_the_same_run(smoke_run, tmp_path):
    runs, run_dir = smoke_run
    copy = tmp_path / "smoke"
    shutil.copytree(run_dir, copy)  # leave the shared run untouched for the other tests
    before = json.loads((copy / "run_state.json").read_text())
    cfg = load_config(SMOKE)
    cfg["budget"]["timesteps"] = 4096
    with pytest.raises(FileExistsError, match="--resume"):
        train(cfg, tmp_path)
    train(cfg, tmp_path, resume=True)
    after = json.loads((copy / "run_state.json").read_text())
    assert after["timesteps"] >= 4096 > before["timesteps"]
    assert after["snapshots"][: len(before["snapshots"])] == before["snapshots"]  # pool kept, grown
    assert len(after["snapshots"]) > len(before["snapshots"])
    assert after["evaluations"][: len(before["evaluations"])] == before["evaluations"]
    model = load_checkpoint(copy, cfg)
    assert model.num_timesteps == after["timesteps"]
    assert model.policy.optimizer.state  # Adam moments travel with the checkpoint


def test_resume_refuses_a_changed_config(smoke_run, tmp_path):
    _, run_dir = smoke_run
    shutil.copytree(run_dir, tmp_path / "smoke")
    cfg = load_config(SMOKE)
    cfg["ppo"]["learning_rate"] = 1.0
    with pytest.raises(ValueError, match="another config"):
        train(cfg, tmp_path, resume=True)


def sample_inputs(n=300):
    """Policy inputs and legal masks of real positions from random games."""
    env = PolicyInputWrapper(make_gym_env(2, ["random"], illegal_action="raise"))
    rng = np.random.default_rng(0)
    inputs, masks = [], []
    obs, _ = env.reset(seed=0)
    while len(inputs) < n:
        inputs.append(obs)
        masks.append(env.action_masks())
        obs, _, terminated, truncated, _ = env.step(rng.choice(np.flatnonzero(masks[-1])))
        if terminated or truncated:
            obs, _ = env.reset()
    return np.array(inputs), np.array(masks)


def assert_same_actions(model, policy_file, gaps):
    """The exported file's moves are sb3's wherever they do not hang on float rounding (two
    networks, two roundings: tests/float_margins.py); `gaps` is the batch_gaps fixture."""
    inputs, masks = sample_inputs()
    assert inputs.shape[1] == INPUT_SIZE
    expected, _ = model.predict(inputs, action_masks=masks, deterministic=True)
    chosen = PolicyAgent(policy_file).act_batch(inputs, masks)
    compared = [k for k, gap in enumerate(gaps) if not near_tie(gap)]
    assert len(gaps) == len(inputs) and len(compared) > 0.9 * len(inputs)
    np.testing.assert_array_equal(chosen[compared], expected[compared])
    assert masks[np.arange(len(masks)), expected].all()


def test_export_then_load_gives_the_sb3_actions(smoke_run, tmp_path, batch_gaps):
    _, run_dir = smoke_run
    out = tmp_path / "policy.safetensors"
    export_run(run_dir, out)
    assert_same_actions(load_checkpoint(run_dir, load_config(SMOKE)), out, batch_gaps)
    meta = read_metadata(out)
    assert meta["num_players"] == 2 and meta["rules"]["name"] == "hasbro2003"
    assert meta["layout"] == {
        "version": LAYOUT_VERSION,
        "obs_size": OBS_SIZE,
        "state_size": STATE_SIZE,
        "n_actions": 142,
    }
    assert meta["network"]["kind"] == "afterstate"
    assert meta["evaluation"]["latest"]["win_rates"].keys() == {"random"}


def test_mlp_actor_exports_too(tmp_path, batch_gaps):
    cfg = load_config(SMOKE)
    cfg["network"]["kind"] = "mlp"
    model = make_model(cfg, make_envs(cfg, OpponentPool({"random": 1.0}), seed=0), tmp_path / "tb")
    export_model(model, tmp_path / "mlp.safetensors", cfg, timesteps=0)
    assert read_metadata(tmp_path / "mlp.safetensors")["network"]["kind"] == "mlp"
    assert_same_actions(model, tmp_path / "mlp.safetensors", batch_gaps)


def test_tournament_results_go_into_the_exported_metadata(smoke_run, tmp_path):
    from sorry_env.agents.arena.tournament import run_tournament

    _, run_dir = smoke_run
    results = run_tournament([str(run_dir / "policy.safetensors"), "random"], players=2, games=4, seed=0, workers=1)
    (tmp_path / "results.json").write_text(json.dumps(results))
    export_run(run_dir, tmp_path / "p.safetensors", [tmp_path / "results.json"])
    (tournament,) = read_metadata(tmp_path / "p.safetensors")["evaluation"]["tournaments"]
    assert tournament["config"]["games"] == 4 and len(tournament["agents"]) == 2
    assert "games" not in tournament  # the per-game log stays out of the policy file

    unrelated = run_tournament(["heuristic", "random"], games=2, seed=0, workers=1)
    (tmp_path / "unrelated.json").write_text(json.dumps(unrelated))
    search = dict(unrelated, config={**unrelated["config"], "agents": ["mcts:value=x.safetensors", "random"]})
    (tmp_path / "search.json").write_text(json.dumps(search))
    four = run_tournament(["random"] * 4, games=1, seed=0, workers=1)
    four["config"]["agents"][0] = "x.safetensors"
    (tmp_path / "four.json").write_text(json.dumps(four))
    for results, message in [
        ("unrelated.json", "no policy file took part"),
        ("search.json", "no policy file took part"),
        ("four.json", "played under hasbro2003 with 4 players"),
        ("nowhere.json", "results file .* does not exist"),
        ("p.safetensors", "results file .* is not (UTF-8 text|JSON)"),
    ]:
        with pytest.raises(ValueError, match=message):
            export_run(run_dir, tmp_path / "q.safetensors", [tmp_path / results])
    with pytest.raises(ValueError, match="not a training run directory: it has no run_state.json"):
        export_run(tmp_path, tmp_path / "q.safetensors")
    with pytest.raises(ValueError, match="no directory"):
        export_run(run_dir, tmp_path / "nodir" / "q.safetensors")
    with pytest.raises(ValueError, match="runs/nothing: no such directory"):
        export_run(tmp_path / "runs" / "nothing", tmp_path / "q.safetensors")


# configs/rllib-*.yaml are sorry-train-rllib's (training/rllib_backend.py), configs/expit-*.yaml
# sorry-expit's (tests/test_azsearch.py), each checked by its own schema.
TD_CONFIGS = ["configs/tabula-rasa-2p.yaml"]  # algorithm: td_lambda (training/td_afterstate.py)
SB3_CONFIGS = sorted(
    p
    for p in pathlib.Path("configs").glob("*.yaml")
    if not p.name.startswith(("rllib-", "expit-")) and str(p) not in TD_CONFIGS
)


@pytest.mark.parametrize("path", TD_CONFIGS)
def test_td_configs_load(path):
    from sorry_env.training import td_afterstate
    from sorry_env.training.train import td_config

    assert td_config(path)
    assert td_afterstate.parse_args(["--config", path]).name == pathlib.Path(path).stem


def test_rllib_configs_load():
    from sorry_env.training import rllib_backend

    rllib_configs = sorted(pathlib.Path("configs").glob("rllib-*.yaml"))
    assert rllib_configs
    for path in rllib_configs:
        rllib_backend.load_config(path)


@pytest.mark.parametrize("path", SB3_CONFIGS)
def test_shipped_configs_load_and_their_network_files_fit(path):
    from sorry_env.agents.policy import load_policy

    cfg = load_config(path)
    d = cfg["distillation"]
    for key in ("value", "init"):
        if d["decisions"] and d[key] is not None:
            _, meta = load_policy(d[key])  # exists, and matches this code's layout
            assert meta["num_players"] == cfg["game"]["num_players"]
            assert meta["rules"]["name"] == cfg["game"]["rules"]
    if d["decisions"] and d["init"] is not None:
        assert meta["network"]["hidden"] == cfg["network"]["hidden"]


def test_distillation_warm_start_runs_in_training(tmp_path):
    cfg = load_config(SMOKE)
    cfg.update(
        name="smoke-distil",
        imitation={**cfg["imitation"], "samples": 0},
        distillation={**cfg["distillation"], "decisions": 60, "iterations": 10, "workers": 1, "epochs": 1},
    )
    run = train(cfg, tmp_path)
    stats = json.loads((run.dir / "run_state.json").read_text())["imitation"]["distillation"]
    assert stats["decisions"] == 60 and 0 <= stats["agreement"] <= 1
    assert (run.dir / "teacher.npz").exists()


@pytest.mark.parametrize(
    "override, message",
    [
        ({"game": {"num_players": 2, "rules": "hasbro2003_teams"}}, "game: team rules .* need 4 players"),
        ({"game": {"num_players": 5}}, "num_players must be 2, 3 or 4"),
        ({"game": {"rules": "chess"}}, "game.rules must be one of"),
        ({"game": 3}, "game must be a mapping"),
        ({"budget": {"timesteps": -5}}, "budget.timesteps must be > 0"),
        ({"budget": {"timesteps": "abc"}}, "budget.timesteps must be an integer"),
        ({"evaluation": {"games": 0}}, "evaluation.games must be > 0"),
        ({"evaluation": {"opponents": ["foo"]}}, "evaluation.opponents: 'foo': unknown agent"),
        ({"evaluation": {"opponents": [3]}}, "evaluation.opponents: agent specs are text, got 3"),
        ({"evaluation": {"opponents": ["checkpoints/sorry-4p.safetensors"]}}, "trained for 4 players, not 2"),
        ({"imitation": {"teacher": "mcts:iterations=abc"}}, "imitation.teacher: .* must be an integer"),
        ({"network": {"hidden": "abc"}}, "network.hidden must be a list"),
        ({"network": {"hidden": [0]}}, "network.hidden must be a list of at most 16 layers of 1..16,384 units"),
        ({"network": {"kind": "cnn"}}, "network.kind must be one of"),
        ({"envs": 0}, "envs must be > 0"),
        ({"ppo": {"gamma": 1.5}}, r"ppo.gamma must be in \(0, 1\]"),
        ({"ppo": {"n_epochs": True}}, "ppo.n_epochs must be an integer"),
        ({"opponents": {"mix": {"foo": 1}}}, r"opponents.mix: unknown kinds \['foo'\]"),
        ({"opponents": {"mix": {"random": 0}}}, "opponents.mix: weights must be numbers >= 0 with a positive sum"),
        ({"distillation": {"decisions": 10, "value": "nowhere.safetensors"}}, "distillation.value: no file"),
        (
            {
                "game": {"num_players": 4},
                "distillation": {"decisions": 10, "value": "checkpoints/value-2p.safetensors"},
            },
            "distillation.value: .* trained for 2 players, not 4",
        ),
        (
            {
                "distillation": {"decisions": 10, "init": "checkpoints/value-2p.safetensors"},
                "network": {"hidden": [64]},
            },
            r"distillation.init .* its network \(\[256, 256\], relu\) differs",
        ),
        ({"network": {"kind": "mlp"}, "distillation": {"decisions": 10}}, "distillation trains an afterstate actor"),
    ],
)
def test_config_mistakes_are_refused_at_load_with_their_key(tmp_path, override, message):
    import yaml

    cfg = yaml.safe_load(pathlib.Path(SMOKE).read_text())
    for key, value in override.items():
        cfg[key] = (
            {**cfg.get(key, {}), **value} if isinstance(value, dict) and isinstance(cfg.get(key), dict) else value
        )
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ValueError, match=message):
        validate(load_config(path))  # load_config leaves the warm start's files to open_run


def test_a_resumed_run_does_not_need_the_warm_start_files(tmp_path):
    cfg = load_config(SMOKE)
    cfg["distillation"].update(decisions=10, value="moved-away.safetensors")
    with pytest.raises(ValueError, match="distillation.value: no file"):
        validate(cfg)
    validate(cfg, warm_start=False)  # what open_run does on --resume


def test_train_command_reports_mistakes_without_a_traceback(tmp_path, capsys):
    # In this process (sorry-train's main with its argv): an exception other than the exit of
    # a usage error would fail the test, as a traceback would from the command.
    from sorry_env.training.train import main

    for args, message in [
        (["nowhere.yaml"], "config nowhere.yaml does not exist"),
        ([SMOKE, "--timesteps", "0"], "budget.timesteps must be > 0"),
        ([SMOKE, "--resume"], "--resume: no checkpoint in"),
    ]:
        with pytest.raises(SystemExit) as stop:
            main([*map(str, args), "--runs-dir", str(tmp_path)])
        assert stop.value.code == 2 and message in capsys.readouterr().err, args


def test_in_training_evaluations_are_logged_with_their_interval(capsys):
    import types

    from sorry_env.training.train import SelfPlayCallback

    recorded = {}
    callback = SelfPlayCallback(run=types.SimpleNamespace(wall_seconds=lambda: 65.2), total=1)
    callback.model = types.SimpleNamespace(logger=types.SimpleNamespace(record=recorded.__setitem__))
    callback.log_evaluation({"timesteps": 5, "games": 300, "win_rates": {"heuristic": 0.303}})
    assert recorded == {"eval/win_rate_vs_heuristic": 0.303}
    # 91 wins of 300: Wilson 95% interval [25.41%, 35.76%]
    # with the run's elapsed wall time, so a reader sees the learning happen in time
    assert "step 5 (1 min 05 s): win rate vs heuristic 30.3% [25.4%, 35.8%] (300 games each)" in capsys.readouterr().out


def test_the_run_ends_with_its_checks_as_a_table_and_times_read_as_people_read_them():
    from sorry_env.training.train import evaluation_table, format_duration

    checks = [
        {"timesteps": 0, "games": 400, "win_rates": {"random": 0.315, "heuristic": 0.08}},
        {"timesteps": 602112, "games": 400, "win_rates": {"random": 0.855, "heuristic": 0.502}},
    ]
    lines = evaluation_table(checks).splitlines()
    assert lines[0] == "in-training evaluations (400 games each):"
    assert lines[1].split() == ["step", "vs", "random", "vs", "heuristic"]
    assert lines[2].split()[:2] == ["0", "31.5%"] and "8.0% [5.7%, 11.1%]" in lines[2]
    assert "85.5% [81.7%, 88.6%]" in lines[3] and "50.2% [45.4%, 55.1%]" in lines[3]
    assert len({len(line) for line in lines[1:]}) == 1  # aligned columns
    assert evaluation_table([]) == "no evaluations"
    assert [format_duration(s) for s in (0.4, 47, 60, 905.2)] == ["0 s", "47 s", "1 min 00 s", "15 min 05 s"]


def test_pure_self_play_starts_from_the_initial_network_and_anneals_its_rate(tmp_path):
    # A mix of snapshots alone used to fail at the first game (no snapshot yet): the initial
    # network is now the first opponent. learning_rate_final anneals the rate linearly.
    cfg = load_config(SMOKE)
    cfg["imitation"]["samples"] = 0
    cfg["opponents"]["mix"] = {"snapshots": 1.0}
    cfg["ppo"].update(learning_rate=1e-3, learning_rate_final=1e-4)
    cfg["budget"]["timesteps"] = 1024
    run = train(cfg, tmp_path)
    state = json.loads((run.dir / "run_state.json").read_text())
    assert state["snapshots"][0] == "pool/snapshot_0000000000.safetensors"
    model = load_checkpoint(run.dir, cfg)
    assert model.lr_schedule(1.0) == pytest.approx(1e-3) and model.lr_schedule(0.0) == pytest.approx(1e-4)
    assert model.lr_schedule(0.5) == pytest.approx(5.5e-4)
