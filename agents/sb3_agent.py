"""An sb3-contrib MaskablePPO model (``.zip``) trained on the Gymnasium env, or on the batched
env through its SB3 wrapper, as an agent.

The Gymnasium env's observation space records its game (``space.sorry_game``: env id,
input/action layout, rules, player count; :func:`sorry_env.gym_space.game_tag`), and so does
the batched env's flat observation vector (``VectorOpponentEnv``, with ``input``: the env's
observation or the trained policies' input, :func:`sorry_env.gym_space.flat_tag`); and
stable-baselines3 saves that record with the model as plain JSON. An sb3 model is therefore
checked against the game *before* anything in it is unpickled: a model made for another
observation or action size, other rules or another player count is refused with a message.

Loading safety: the network weights are read by SB3 with ``torch.load(weights_only=True)``.
The rest of an sb3 zip is cloudpickle (spaces, schedules, the policy class); this loader
replaces all of it with objects built here (``custom_objects``), so a model trained with
sb3-contrib's ``"MultiInputPolicy"`` (the env) or ``"MlpPolicy"`` (the batched env) and
plain-JSON ``policy_kwargs`` loads without unpickling anything. A model with a custom policy
class or non-JSON ``policy_kwargs`` (activation classes, say) needs SB3 to unpickle them,
which can run code from the file: load those only from sources you trust.

The agent plays the model's deterministic (argmax) masked action, or a sample with
``sample=True``.
"""

from __future__ import annotations

import json
import zipfile

import numpy as np

from sorry_env import files
from sorry_env.board import game
from sorry_env.board.policy_input import layout, policy_input, rules_dict, rules_from_dict
from sorry_env.board.rules import get_rules
from sorry_env.checks import excerpt
from sorry_env.gym_space import ENV_ID, FLAT_INPUTS, flat_space, observation_space

from .base import Agent, Turn

# sb3-contrib's policies for Dict observations (the env's) and for flat vectors (the batched
# envs'), recognised in the JSON by their module and the qualified name in their __init__'s
# repr, so they need not be unpickled.
POLICY_MODULE = "sb3_contrib.common.maskable.policies"
MULTI_INPUT_POLICY = (POLICY_MODULE, "MaskableMultiInputActorCriticPolicy.__init__")
MLP_POLICY = (POLICY_MODULE, "MaskableActorCriticPolicy.__init__")


# Caps on an sb3 zip, checked before it is opened: the file (the shipped-size MLPs are a few
# MB) and its JSON member once unpacked (a few KB in a real model; a zip bomb is refused).
MAX_ZIP_BYTES = 1024 * 1024 * 1024
MAX_DATA_BYTES = 16 * 1024 * 1024


def read_model_data(path) -> dict:
    """The JSON part of an sb3 model zip (nothing unpickled), or ValueError. The file must be
    a regular file of at most MAX_ZIP_BYTES and its ``data`` member at most MAX_DATA_BYTES
    unpacked; messages do not quote the file."""
    files.check_regular_file(path, MAX_ZIP_BYTES, "sb3 model file")
    try:
        with zipfile.ZipFile(path) as archive:
            if archive.getinfo("data").file_size > MAX_DATA_BYTES:
                raise ValueError(f"its data member unpacks to more than {MAX_DATA_BYTES:,} bytes")
            return json.loads(archive.read("data"))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, RecursionError) as error:
        # zipfile's and json's messages name the problem and a position, never the file's bytes.
        raise ValueError(f"{path} is not a stable-baselines3 model zip ({str(error)[:120]})") from None


def model_game(path, data: dict) -> dict:
    """The sorry_env game record of a model's observation space, or ValueError."""
    space = data.get("observation_space")
    tag = space.get("sorry_game") if isinstance(space, dict) else None
    if not isinstance(tag, dict) or tag.get("env") != ENV_ID:
        shown = space.get("spaces", space.get("_shape")) if isinstance(space, dict) else space
        hint = (
            "; a sorry-train run's checkpoint.zip becomes a policy file with sorry-export"
            if "SelfPlayPolicy" in json.dumps(data.get("policy_class", ""))
            else ""
        )
        raise ValueError(
            f"{path} was not trained on the Gymnasium env {ENV_ID} (its observation space, {shown}, "
            f"records no sorry_env game){hint}"
        )
    players = tag.get("num_players")
    if not isinstance(tag.get("rules"), dict) or not isinstance(tag.get("layout"), dict) or players not in (2, 3, 4):
        raise ValueError(
            f"{path}: its observation space's sorry_env game record is incomplete (it needs rules, layout and "
            f"num_players 2..4), got {excerpt(tag)}"
        )
    return tag


class SB3Agent(Agent):
    """Plays a MaskablePPO model trained on ``sorry_env/Sorry-v1``."""

    uses_torch = True

    def __init__(self, path, seed=None, sample: bool = False):
        self.path = str(path)
        self.sample = sample
        data = read_model_data(self.path)
        self.game = model_game(self.path, data)
        self.rules = rules_from_dict(self.game["rules"])
        self.num_players = int(self.game["num_players"])
        self.flat = self.game.get("input")  # None: the env's Dict observation; else a flat vector (gym_space)
        if self.flat is not None and self.flat not in FLAT_INPUTS:
            raise ValueError(f"{self.path}: its observation space records an unknown input {excerpt(self.flat)}")
        if self.game["layout"] != layout(self.rules):
            raise ValueError(
                f"{self.path} was made for input/action layout {excerpt(self.game['layout'], 200)} but this sorry_env "
                f"uses {layout(self.rules)}; retrain it with this version"
            )
        self.model = self._load(data)
        self.name = f"sb3:{self.path.rsplit('/', 1)[-1]}"
        self.reset(seed)

    def _load(self, data: dict):
        from gymnasium import spaces

        try:
            from sb3_contrib import MaskablePPO
            from sb3_contrib.common.maskable.policies import (
                MaskableActorCriticPolicy,
                MaskableMultiInputActorCriticPolicy,
            )
        except ImportError as error:
            raise ValueError(
                f"{self.path}: playing an sb3 model needs sb3-contrib ({error}); install the "
                "train extra: pip install -c constraints.txt -e '.[train]'"
            ) from None

        space: spaces.Space
        if self.flat is None:
            space = observation_space(self.rules, self.num_players)
        else:  # as the batched env (sorry_env.vector_opponents) made it
            space = flat_space(self.rules, self.num_players, self.flat)
        custom: dict[str, object] = {  # SB3's custom_objects
            "observation_space": space,
            "action_space": spaces.Discrete(game.num_actions(self.rules)),
            "lr_schedule": lambda _: 0.0,
            "learning_rate": 0.0,
            "clip_range": lambda _: 0.2,
            "clip_range_vf": None,
        }
        policy = data.get("policy_class", {})
        text = json.dumps(policy)
        known = MULTI_INPUT_POLICY if self.flat is None else MLP_POLICY
        if isinstance(policy, dict) and policy.get("__module__") == known[0] and known[1] in text:
            custom["policy_class"] = MaskableActorCriticPolicy if self.flat else MaskableMultiInputActorCriticPolicy
        # Anything else still serialized (a custom policy class, non-JSON policy_kwargs) is
        # left to SB3, which unpickles it (see the module docstring).
        for key, value in data.items():
            if (
                key not in custom
                and isinstance(value, dict)
                and ":serialized:" in value
                and key not in ("policy_class", "policy_kwargs")
            ):
                custom[key] = None
        # Trust: whatever is still serialized (a custom policy class, pickled policy_kwargs) is
        # unpickled here, which runs code from the file. That is why every .zip spec counts as
        # code (agents.runs_code): only a spec the user typed reaches this line, never one
        # read from a run directory, a replay or a results file, or sent over HTTP.
        try:
            model = MaskablePPO.load(self.path, custom_objects=custom, device="cpu")
        except Exception as error:  # noqa: BLE001 (a damaged policy.pth, pickled kwargs that do not fit, ...)
            reason = f"{type(error).__name__}: {error}"
            raise ValueError(f"{self.path}: not a MaskablePPO model for {ENV_ID} ({reason[:200]})") from None
        return model

    def check_game(self, rules, num_players: int) -> None:
        """ValueError unless the model was trained for these rules and player count."""
        r = get_rules(rules)
        if rules_dict(r) != self.game["rules"]:
            raise ValueError(f"model {self.path} was trained for rules {self.game['rules']['name']!r}, not {r.name!r}")
        if num_players != self.num_players:
            raise ValueError(f"model {self.path} was trained for {self.num_players} players, not {num_players}")

    def act(self, turn: Turn) -> int:
        obs = turn.observation()
        features: dict | np.ndarray = obs
        if self.flat == "policy_input":
            features = policy_input(turn.state, game.rules_array(turn.rules), turn.seat)
        elif self.flat == "observation":
            features = obs["observation"]
        mask = obs["action_mask"].astype(bool)
        action, _ = self.model.predict(features, action_masks=mask, deterministic=not self.sample)
        return int(np.asarray(action).item())

    def __reduce__(self):
        # Sent to tournament workers as its file, loaded there (a model object pickles badly).
        return (SB3Agent, (self.path, None, self.sample))
