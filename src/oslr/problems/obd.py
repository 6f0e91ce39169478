"""Replay of the Open Bandit Dataset uniform-random logs (docs/algorithms.md sections 5 and E2).

The ZOZOTOWN logs (`obd/random/{all,men,women}`, 10,000 events each, K = 80 / 34 / 46 items)
stand in for the Yahoo! R6 data of [KPM]. Logging was uniform (propensity 1/K), so rejection
sampling replay ([LCLW11]) is unbiased: a learner scores all K items of an event; if its choice is
the logged item the event is *accepted* (it sees the click and may update), otherwise the event is
skipped and the learner must leave its state unchanged (`round.accepted`). CTR score =
10000 clicks / accepted events ([KPM]).

Feature map (OURS, docs/algorithms.md section 5): u = [1, onehot(user_feature_0..3),
onehot(position)], a = [1, item_feature_0, onehot(item_feature_1..3)], x(user, item) = [vec(u a^T),
affinity(user, item)] / ||.||_2, so d = |u| |a| + 1 (1177 on random/all). Vocabularies are the
sorted unique strings of each campaign file. The user table (n, |u|) and item table (K, |a|) travel
as problem params; the (K, d) arm features are built per event on the device.

`stream=True` (OURS, labelled "stream mode" in results): every event counts as accepted with the
logged item's features and click (all K arms equal the logged one), for tracking error and runtime
studies where the ~1/K acceptance rate leaves too few samples.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from oslr.primitives.permutation import permutation_keys, permute
from oslr.problems.datasets import data_path
from oslr.spec import Option, ProblemSpec
from oslr.types import Array, BanditExample, Problem

CAMPAIGNS = ("all", "men", "women")


@functools.lru_cache(maxsize=None)
def load_obd(campaign: str = "all") -> dict:
    """Numpy tables of one uniform-random campaign log: users (n, du), items (K, da),
    affinity (n, K), item (n,) int32 logged item, click (n,) float32."""
    import pandas as pd

    if campaign not in CAMPAIGNS:
        raise ValueError(f"unknown OBD campaign {campaign!r}; choose one of {CAMPAIGNS}.")
    log = pd.read_csv(data_path(f"obd/random/{campaign}/{campaign}.csv.gz"), index_col=0)
    items = pd.read_csv(data_path(f"obd/random/{campaign}/item_context.csv.gz"), index_col=0)
    items = items.sort_values("item_id").reset_index(drop=True)
    n_items = len(items)

    def onehot(col: pd.Series) -> np.ndarray:
        vocab = sorted(col.astype(str).unique())
        return (col.astype(str).to_numpy()[:, None] == np.asarray(vocab)[None, :]).astype(
            np.float32)

    users = np.concatenate(
        [np.ones((len(log), 1), np.float32)]
        + [onehot(log[f"user_feature_{j}"]) for j in range(4)]
        + [onehot(log["position"])], axis=1)
    item_tab = np.concatenate(
        [np.ones((n_items, 1), np.float32), items[["item_feature_0"]].to_numpy(np.float32)]
        + [onehot(items[f"item_feature_{j}"]) for j in range(1, 4)], axis=1)
    affinity = log[[f"user-item_affinity_{k}" for k in range(n_items)]].to_numpy(np.float32)
    return {"users": users, "items": item_tab, "affinity": affinity,
            "item": log["item_id"].to_numpy(np.int32), "click": log["click"].to_numpy(np.float32)}


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class ObdParams:
    """Attributes (broadcast across runs): users (n, du), items (K, da), affinity (n, K) float32;
    item (n,) int32 logged item; click (n,) float32."""

    users: Array
    items: Array
    affinity: Array
    item: Array
    click: Array


def obd_params(campaign: str = "all") -> ObdParams:
    return ObdParams(**{k: jnp.asarray(v) for k, v in load_obd(campaign).items()})


def arm_features(user: Array, items: Array, affinity: Array) -> Array:
    """(K, d) normalised features x(user, item) = [vec(u a^T), affinity] / ||.||."""
    outer = (user[None, :, None] * items[:, None, :]).reshape(items.shape[0], -1)
    x = jnp.concatenate([outer, affinity[:, None]], axis=1)
    return x / jnp.linalg.norm(x, axis=1, keepdims=True)


class ObdState(NamedTuple):
    """Attributes: keys: (ROUNDS,) uint32, the round keys of this run's permutation of the events
    (`primitives.permutation`; unused when the log is replayed in its own order)."""

    keys: Array


def obd_replay(campaign: str = "all", stream: bool = False, shuffle: bool = True) -> Problem:
    """Replay problem over one campaign's uniform-random log (family F3, finite arms).

    Args:
      campaign: "all", "men" or "women".
      stream: stream mode (every event accepted with the logged item; OURS, see module doc).
      shuffle: replay the events in a per-run random order (else in logged order for every run).
    """
    tabs = load_obd(campaign)
    n, n_items = tabs["affinity"].shape
    d = tabs["users"].shape[1] * tabs["items"].shape[1] + 1

    def init(key: Array, params: ObdParams) -> ObdState:
        del params
        return ObdState(keys=permutation_keys(key))

    def sample(key: Array, state: ObdState, t: Array, params: ObdParams):
        del key
        row = permute(state.keys, jnp.mod(t, n), n) if shuffle else jnp.mod(t, n)
        arms = arm_features(params.users[row], params.items, params.affinity[row])
        logged: Array | None = params.item[row]
        click = params.click[row]
        if stream:
            arms = jnp.broadcast_to(arms[logged], arms.shape)
            rewards = jnp.full((n_items,), click)
            logged = None
        else:
            rewards = jnp.zeros((n_items,), jnp.float32).at[logged].set(click)
        zeros = jnp.zeros((n_items,), jnp.float32)
        ids = row * n_items + jnp.arange(n_items, dtype=jnp.int32)
        if stream:
            ids = jnp.full((n_items,), row * n_items + params.item[row], jnp.int32)
        return state, BanditExample(arms=arms, rewards=rewards, means=zeros, logged=logged,
                                    arm_ids=ids)

    def features(params: ObdParams, ids: Array) -> Array:
        """x(user of event row, item) for global ids row * K + item, any leading shape."""
        row, item = ids // n_items, ids % n_items

        def one(r, i):
            return arm_features(params.users[r], params.items[i][None],
                                params.affinity[r, i][None])[0]

        flat = jax.vmap(one)(row.reshape(-1), item.reshape(-1))
        return flat.reshape(ids.shape + (d,))

    return Problem(init=init, sample=sample, kind="bandit", d=d, name="obd", n_arms=n_items,
                   n_rows=n, features=features, replay=not stream, changing_arms=True,
                   info={"campaign": campaign, "stream": stream, "replay": not stream,
                         "events": n, "changing": True})


def _factory(campaign: str = "all", stream: bool = False, shuffle: bool = True):
    return obd_replay(campaign, stream, shuffle), obd_params(campaign)


OBD = ProblemSpec(
    "obd", "bandit",
    "Open Bandit Dataset uniform-random logs (ZOZOTOWN), replay by rejection sampling; "
    "campaign all (K=80, d=1177) / men / women",
    _factory,
    (Option("campaign", "all", "the campaign's log", CAMPAIGNS, str),
     Option("stream", False, "every logged event a round (False: replay by rejection)",
            type=bool),
     Option("shuffle", True, "events in a random order per run", type=bool)))
