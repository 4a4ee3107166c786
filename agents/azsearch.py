"""`azsearch`: tree search whose only knowledge of the game is a network (AlphaZero-style
search with chance nodes), compiled with numba.

The tree alternates decision nodes (a player holds a card and chooses a move) and chance
nodes (a move has been played and the next card is not drawn yet). A chance node's children
are the possible next cards, weighted by the public draw-pile counts (:func:`card_chances`:
nothing hidden is used); a 2 gives the same player another card, and a split seven under way
keeps the same player's decision, which the engine's turn order already says.

Only the network knows anything about Sorry!: no heuristic, no playouts.

- **Values.** The value network (an ``afterstate`` policy file whose output is the logit of
  the viewer's chance of winning, :mod:`sorry_env.training.value_fit` or :mod:`sorry_env.training.expert_iteration`)
  scores the positions a move leads to. When the search first reaches a decision node it
  scores every legal move's afterstate at once (a one-ply expansion): each child starts with
  that value, and the node's value is the best child's for the player to move.
- **Priors.** The moves' prior probabilities are a softmax over the same afterstate scores
  (``prior_temperature``), or with ``policy=FILE`` over an afterstate policy's scores (for
  example the shipped PPO policy).
- **Selection.** PUCT at decision nodes (the mover maximizes its own side's chance), and at
  chance nodes the card whose visit share lags its probability most (deterministic
  stratified sampling: no sampling noise in the expectation).
- **The move.** The root move visited most (ties: the better mean value). The root's visit
  shares are the search's improved policy (:func:`search_policy`), which expert iteration
  learns from; Dirichlet noise on the root priors (``noise_fraction``) explores in self-play.

Every node keeps one value per seat, so any number of players works (with two sides one
network evaluation per position: the other side's chance is the complement). Play for points
(hidden hands) has no public chance layer and is refused.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sorry_env import engine as E
from sorry_env import game
from sorry_env.observation import OBS_SIZE, observe
from sorry_env.rules import DEFAULT_MAX_TURNS, N_CARDS, Rules, get_rules
from sorry_env.simulate import card_chances, is_chance_node, seed_from

from .base import ChoosingAgent, Turn
from .value_net import net_logit, pack

MAX_TURNS = DEFAULT_MAX_TURNS
# Node kinds.
UNEXPANDED, DECISION, CHANCE, LEAF = 0, 1, 2, 3
# Largest search a spec may ask for: the tree's arrays grow with simulations x actions (~180 bytes each).
MAX_SIMULATIONS = 5_000  # about 130 MB of tree with 2 players
LOGIT_CLIP = 12.0


@njit(cache=True)
def _sides(rules, state):
    """Number of sides among the active seats (2 for two players or two teams)."""
    count = 0
    for s in range(4):
        if not E.is_active(state, s):
            continue
        new = True
        for t in range(s):
            if E.is_active(state, t) and E.same_side(rules, s, t):
                new = False
        if new:
            count += 1
    return count


@njit(cache=True)
def position_values(state, rules, params, sizes, first, two_sides, obs, out):
    """out[seat] := each active seat's chance of winning from `state` (a position with no card
    in play, or a decision in the middle of a split seven): the outcome if the game is over,
    else the network's; `first` is evaluated first (with two sides the other side's chance
    is its complement). Returns `first`'s logit (clipped), which the priors use."""
    w = E.winner(state)
    out[:] = 0.0
    if w >= 0:
        for s in range(4):
            if E.is_active(state, s) and E.same_side(rules, s, w):
                out[s] = 1.0
        return LOGIT_CLIP if E.same_side(rules, first, w) else -LOGIT_CLIP
    observe(state, rules, first, obs)
    logit = min(LOGIT_CLIP, max(-LOGIT_CLIP, net_logit(params, sizes, obs)))
    v = 1.0 / (1.0 + np.exp(-logit))
    for s in range(4):
        if not E.is_active(state, s):
            continue
        if E.same_side(rules, s, first):
            out[s] = v
        elif two_sides:
            out[s] = 1.0 - v
        else:
            observe(state, rules, s, obs)
            out[s] = 1.0 / (1.0 + np.exp(-net_logit(params, sizes, obs)))
    return logit


@njit(cache=True)
def _new_node(tree_kind, visits, totals, n_nodes, kind, values):
    """Append a node of `kind` that has been seen once with `values`; its index."""
    k = n_nodes
    tree_kind[k] = kind
    visits[k] = 1.0
    totals[k, :] = values
    return k


@njit(cache=True)
def _expand(
    node,
    state,
    rules,
    params,
    sizes,
    policy_params,
    policy_sizes,
    prior_temperature,
    two_sides,
    tree_kind,
    visits,
    totals,
    first_edge,
    n_edges,
    edge_action,
    edge_prior,
    edge_child,
    counts,
    buf,
    child,
    obs,
    values,
    out,
):
    """Score every legal move of decision node `node` (at `state`), add the children, set
    the priors; out := the value of the best child for the mover."""
    mover = E.to_move(state)
    n = E.legal_actions(state, rules, buf)
    start = counts[1]
    best = -1.0
    logits = np.empty(n)
    for j in range(n):
        child[:] = state
        E.play(child, rules, buf[j])
        logit = position_values(child, rules, params, sizes, mover, two_sides, obs, values)
        if E.winner(child) >= 0 or not E.is_running(child, MAX_TURNS):
            kind = LEAF
        elif is_chance_node(child, rules):
            kind = CHANCE
        else:
            kind = UNEXPANDED  # the same player decides again (a split seven, a fire decision)
        k = _new_node(tree_kind, visits, totals, counts[0], kind, values)
        counts[0] += 1
        edge_action[start + j] = buf[j]
        edge_child[start + j] = k
        if policy_sizes.shape[0] > 0:
            observe(child, rules, mover, obs)
            logits[j] = net_logit(policy_params, policy_sizes, obs)
        else:
            logits[j] = logit / prior_temperature
        if values[mover] > best:
            best = values[mover]
            out[:] = values
    top = logits.max()
    total = 0.0
    for j in range(n):
        edge_prior[start + j] = np.exp(logits[j] - top)
        total += edge_prior[start + j]
    for j in range(n):
        edge_prior[start + j] /= total
    first_edge[node] = start
    n_edges[node] = n
    counts[1] += n
    tree_kind[node] = DECISION


@njit(cache=True)
def _select_edge(node, mover, c_puct, visits, totals, first_edge, n_edges, edge_prior, edge_child):
    """PUCT: the edge maximizing mean value for the mover + c_puct * prior * sqrt(N) / (1 + n)."""
    start = first_edge[node]
    root_n = np.sqrt(visits[node])
    best = -np.inf
    pick = start
    for e in range(start, start + n_edges[node]):
        k = edge_child[e]
        q = totals[k, mover] / visits[k]
        score = q + c_puct * edge_prior[e] * root_n / visits[k]  # visits[k] = 1 + selections
        if score > best:
            best = score
            pick = e
    return pick


@njit(cache=True)
def _mix_root_noise(edge_prior, n, noise_alpha, noise_fraction):
    """Dirichlet(noise_alpha) noise mixed into the root's `n` edge priors (the root's edges
    come first), a share of noise_fraction; drawn from the generator run_search seeded."""
    if noise_fraction > 0.0 and n > 1:
        noise = np.empty(n)
        for j in range(n):
            noise[j] = np.random.gamma(noise_alpha, 1.0)
        noise /= noise.sum()
        for j in range(n):
            edge_prior[j] = (1.0 - noise_fraction) * edge_prior[j] + noise_fraction * noise[j]


@njit(cache=True)
def run_search(
    root_state,
    rules,
    params,
    sizes,
    policy_params,
    policy_sizes,
    simulations,
    c_puct,
    prior_temperature,
    noise_alpha,
    noise_fraction,
    seed,
    root_actions,
    root_visits,
    root_values,
):
    """Search from `root_state` (a decision: the card to play is in it) for `simulations`
    expansions. root_actions/root_visits/root_values[:n] := the root's legal moves, how often
    the search chose each, and each one's mean value for the mover; returns n."""
    np.random.seed(seed)
    buf = E.action_buffer(rules)
    max_moves = buf.shape[0]
    capacity = 1 + (simulations + 1) * (max_moves + 1)  # the root's children, then per simulation a card and its moves
    tree_kind = np.zeros(capacity, dtype=np.int8)
    visits = np.zeros(capacity)
    totals = np.zeros((capacity, 4))
    first_edge = np.zeros(capacity, dtype=np.int64)
    n_edges = np.zeros(capacity, dtype=np.int64)
    card_child = np.full((capacity, N_CARDS), -1, dtype=np.int64)
    edge_action = np.zeros(capacity, dtype=np.int64)
    edge_prior = np.zeros(capacity)
    edge_child = np.zeros(capacity, dtype=np.int64)
    counts = np.zeros(2, dtype=np.int64)  # nodes, edges in use
    child = np.empty_like(root_state)
    state = np.empty_like(root_state)
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    values = np.empty(4)
    leaf = np.empty(4)
    chances = np.empty(N_CARDS)
    path = np.empty(4 * MAX_TURNS + 8, dtype=np.int64)
    two_sides = _sides(rules, root_state) == 2
    me = E.to_move(root_state)

    # the root: expanded at once (its value is not needed, only its children)
    tree_kind[0] = UNEXPANDED
    counts[0] = 1
    _expand(
        0, root_state, rules, params, sizes, policy_params, policy_sizes, prior_temperature, two_sides,
        tree_kind, visits, totals, first_edge, n_edges, edge_action, edge_prior, edge_child, counts,
        buf, child, obs, values, leaf,
    )  # fmt: skip
    visits[0] = 1.0
    totals[0, :] = leaf
    n = n_edges[0]
    _mix_root_noise(edge_prior, n, noise_alpha, noise_fraction)

    for _ in range(simulations):
        state[:] = root_state
        node = 0
        depth = 0
        path[0] = 0
        while True:
            kind = tree_kind[node]
            if kind == LEAF:
                leaf[:] = totals[node] / visits[node]
                break
            if kind == UNEXPANDED:
                _expand(
                    node, state, rules, params, sizes, policy_params, policy_sizes, prior_temperature, two_sides,
                    tree_kind, visits, totals, first_edge, n_edges, edge_action, edge_prior, edge_child, counts,
                    buf, child, obs, values, leaf,
                )  # fmt: skip
                break
            if kind == DECISION:
                e = _select_edge(
                    node, E.to_move(state), c_puct, visits, totals, first_edge, n_edges, edge_prior, edge_child
                )
                E.play(state, rules, edge_action[e])
                node = edge_child[e]
            else:  # CHANCE: the card whose share of the visits lags its probability most
                card_chances(state, rules, chances)
                best = -np.inf
                card = -1
                for c in range(N_CARDS):
                    if chances[c] <= 0.0:
                        continue
                    k = card_child[node, c]
                    lag = chances[c] * visits[node] - (visits[k] if k >= 0 else 0.0)
                    if lag > best:
                        best = lag
                        card = c
                E.deal(state, rules, card)
                k = card_child[node, card]
                if k < 0:
                    k = counts[0]
                    counts[0] += 1
                    tree_kind[k] = UNEXPANDED
                    card_child[node, card] = k
                node = k
            depth += 1
            path[depth] = node
            if depth + 1 >= path.shape[0]:  # a pathologically long line: score it where it stands
                position_values(state, rules, params, sizes, E.to_move(state), two_sides, obs, leaf)
                break
        for d in range(depth + 1):
            k = path[d]
            visits[k] += 1.0
            totals[k, :] += leaf

    for j in range(n):
        k = edge_child[j]
        root_actions[j] = edge_action[j]
        root_visits[j] = visits[k] - 1.0
        root_values[j] = totals[k, me] / visits[k]
    return n


class AZSearchAgent(ChoosingAgent):
    """Network-guided tree search with chance nodes (see the module doc)."""

    name = "azsearch"
    uses_torch = True  # loading the network files imports torch

    def __init__(
        self,
        seed: int | None = None,
        net: str | None = None,
        policy: str | None = None,
        simulations: int = 64,
        c_puct: float = 0.25,
        prior_temperature: float = 0.1,
        noise_alpha: float = 0.3,
        noise_fraction: float = 0.0,
    ):
        """net: value network file (afterstate, logit of the mover's chance of winning);
        policy: optional afterstate policy file for the priors (default: the value network's
        scores / prior_temperature); simulations: tree expansions per decision; c_puct: the
        weight of the prior in PUCT; noise_fraction: share of Dirichlet(noise_alpha) noise
        in the root priors (self-play exploration; 0 to play)."""
        if net is None:
            raise ValueError("azsearch needs net=FILE: a value network (afterstate policy file), e.g. "
                             "azsearch:net=checkpoints/value-2p.safetensors")  # fmt: skip
        if not 1 <= simulations <= MAX_SIMULATIONS:
            raise ValueError(f"azsearch simulations must be in 1..{MAX_SIMULATIONS}, got {simulations}")
        if not c_puct >= 0 or not prior_temperature > 0 or not noise_alpha > 0 or not 0 <= noise_fraction <= 1:
            raise ValueError(
                "azsearch needs c_puct >= 0, prior_temperature > 0, noise_alpha > 0 and 0 <= noise_fraction <= 1"
            )
        self.net, self.policy = net, policy
        self.params, self.sizes, self.net_meta = pack(net)
        if policy is None:
            self.policy_params, self.policy_sizes = np.zeros(0, np.float32), np.zeros(0, np.int64)
            self.policy_meta = None
        else:
            self.policy_params, self.policy_sizes, self.policy_meta = pack(policy)
        self.simulations = int(simulations)
        self.c_puct = float(c_puct)
        self.prior_temperature = float(prior_temperature)
        self.noise_alpha = float(noise_alpha)
        self.noise_fraction = float(noise_fraction)
        self._checked = None
        self.last_policy = None  # (actions, visit shares, values) of the last search
        self.reset(seed)

    def check_game(self, rules: Rules | str, num_players: int) -> None:
        """ValueError if the networks were trained for another game, or the rules have hidden
        hands (no public chance layer to search)."""
        if (rules, num_players) == self._checked:
            return
        r = get_rules(rules)
        if r.hand_size:
            raise ValueError(
                f"azsearch searches the public draw; rules {r.name!r} deal hidden hands (play for points), "
                "which it does not support"
            )
        from .policy import check_trained_for  # torch is loaded already: pack() used it

        check_trained_for(self.net, self.net_meta, r, num_players)
        if self.policy is not None:
            check_trained_for(self.policy, self.policy_meta, r, num_players)
        self._checked = (rules, num_players)

    def search(self, turn: Turn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(legal moves, times the search chose each, each one's mean value for the mover)."""
        self.check_game(turn.rules, len(game.seats(turn.state)))
        rules_array = game.rules_array(turn.rules)
        size = E.n_actions(rules_array)
        actions = np.empty(size, dtype=np.int64)
        visit_counts = np.empty(size)
        values = np.empty(size)
        n = run_search(
            turn.state,
            rules_array,
            self.params,
            self.sizes,
            self.policy_params,
            self.policy_sizes,
            self.simulations,
            self.c_puct,
            self.prior_temperature,
            self.noise_alpha,
            self.noise_fraction,
            seed_from(self.rng) & 0x7FFFFFFF,
            actions,
            visit_counts,
            values,
        )
        return actions[:n], visit_counts[:n], values[:n]

    def choose(self, turn: Turn, legal: np.ndarray) -> int:
        actions, visit_counts, values = self.search(turn)
        self.last_policy = (actions, search_policy(visit_counts, values), values)
        best = np.lexsort((-values, -visit_counts))[0]  # most visits, then the best value
        return int(actions[best])


def search_policy(visit_counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The search's improved policy over the root moves: visit shares (all on the best
    value when no move was chosen by the search, as with a single simulation)."""
    total = visit_counts.sum()
    if total > 0:
        return visit_counts / total
    out = np.zeros(len(values))
    out[np.argmax(values)] = 1.0
    return out
