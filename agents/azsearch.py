"""`azsearch`: tree search whose only knowledge of the game is a network (AlphaZero-style
search with chance nodes), compiled with numba.

The tree alternates decision nodes (a player holds a card and chooses a move) and chance
nodes (a move has been played and the next card is not drawn yet). A chance node's children
are the possible next cards, weighted by the public draw-pile counts (:func:`card_chances`:
nothing hidden is used); a 2 gives the same player another card, and a split seven under way
keeps the same player's decision, which the engine's turn order already encodes.

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

- **Many games at once.** :func:`run_search_many` searches many games' positions in lockstep:
  each step descends every tree to the position it needs valued, scores all of them in one
  batched network evaluation (:func:`sorry_env.agents.value_net.net_logits`) and backs the
  values up. A game gets the search it would have alone, bit for bit (the network's score of
  a position does not depend on the rest of the batch); :func:`run_search` is the one-game
  case. The agent's :meth:`AZSearchAgent.act_turns` uses it in the arena's lockstep play, and
  expert iteration's self-play searches its games side by side.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.observation import OBS_SIZE, observe
from sorry_env.board.rules import DEFAULT_MAX_TURNS, N_CARDS, Rules, get_rules
from sorry_env.board.simulate import card_chances, is_chance_node, seed_from

from .base import ChoosingAgent, Turn
from .catalog import NetworkFiles
from .value_net import NO_NET, net_logits, pack

MAX_TURNS = DEFAULT_MAX_TURNS
# Node kinds.
UNEXPANDED, DECISION, CHANCE, LEAF = 0, 1, 2, 3
# Largest search a spec may ask for: the tree's arrays grow with simulations x actions (~180 bytes each).
MAX_SIMULATIONS = 5_000  # about 130 MB of tree with 2 players
LOGIT_CLIP = 12.0
# Games searched side by side by one agent call: at most LOCKSTEP_NODES / simulations (a tree
# holds about 8 nodes of ~180 bytes per simulation: ~90 MB for a group) and MAX_LOCKSTEP_GAMES.
LOCKSTEP_NODES = 65_536
MAX_LOCKSTEP_GAMES = 256


# ---- positions waiting for the network -------------------------------------------------------
# A search step queues the positions it needs valued (a decision's afterstates, or a line cut
# short) as rows of observations; one batched evaluation (value_net.net_logits) scores every
# row of every game; the step then reads each position's values back. How a seat's value is
# found: not in the game, the first viewer's side (its row), the complement of the first
# viewer's (two sides), or a row of its own (three or more sides).
SEAT_OUT, SEAT_FIRST, SEAT_COMPLEMENT, SEAT_OWN = 0, 1, 2, 3
# What a game's search does with the network's rows in a step.
NOTHING, EXPAND, EVALUATE = 0, 1, 2
GAME_OVER = 1  # pos_row[p, 5]: position p's game is over (its values are the outcome)
# Room for the rows of one position: the first viewer's and up to three more seats'.
ROWS_PER_POSITION = 4


@njit(cache=True)
def _queue_position(state, rules, first, two_sides, with_policy, x, n_rows, p, pos_row, pos_mode, pos_values):
    """Queue position p (`state`: no card in play, or a decision in the middle of a split
    seven) for valuing from `first`'s view: the outcome if the game is over (no rows, except
    the policy's view of it when priors come from a policy network), else rows of x. Returns
    the new row count. pos_row[p, 4] is the first viewer's row (-1: none), pos_row[p, s] a
    seat's own row, pos_row[p, 5] GAME_OVER when the outcome is known."""
    w = E.winner(state)
    pos_values[p, :] = 0.0
    pos_row[p, :] = -1
    if w >= 0:
        pos_row[p, 5] = GAME_OVER
        for s in range(4):
            pos_mode[p, s] = SEAT_OUT
            if E.is_active(state, s) and E.same_side(rules, s, w):
                pos_values[p, s] = 1.0
        pos_values[p, 4] = LOGIT_CLIP if E.same_side(rules, first, w) else -LOGIT_CLIP
        if with_policy:  # the prior still scores the winning (or losing) move
            observe(state, rules, first, x[n_rows])
            pos_row[p, 4] = n_rows
            n_rows += 1
        return n_rows
    observe(state, rules, first, x[n_rows])
    pos_row[p, 4] = n_rows
    n_rows += 1
    for s in range(4):
        if not E.is_active(state, s):
            pos_mode[p, s] = SEAT_OUT
        elif E.same_side(rules, s, first):
            pos_mode[p, s] = SEAT_FIRST
        elif two_sides:
            pos_mode[p, s] = SEAT_COMPLEMENT
        else:
            pos_mode[p, s] = SEAT_OWN
            observe(state, rules, s, x[n_rows])
            pos_row[p, s] = n_rows
            n_rows += 1
    return n_rows


@njit(cache=True)
def _read_position(p, pos_row, pos_mode, pos_values, logits, out):
    """out[seat] := each active seat's chance of winning at queued position p (the outcome,
    or the network's); the first viewer's logit (clipped) is returned, which the priors use."""
    if pos_row[p, 5] == GAME_OVER:  # the outcome
        out[:] = pos_values[p, :4]
        return pos_values[p, 4]
    logit = min(LOGIT_CLIP, max(-LOGIT_CLIP, logits[pos_row[p, 4]]))
    v = 1.0 / (1.0 + np.exp(-logit))
    for s in range(4):
        mode = pos_mode[p, s]
        if mode == SEAT_OUT:
            out[s] = 0.0
        elif mode == SEAT_FIRST:
            out[s] = v
        elif mode == SEAT_COMPLEMENT:
            out[s] = 1.0 - v
        else:
            out[s] = 1.0 / (1.0 + np.exp(-logits[pos_row[p, s]]))
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
def _queue_expansion(state, rules, two_sides, with_policy, buf, child, x, n_rows, c0, child_action, child_kind,
                     pos_row, pos_mode, pos_values):  # fmt: skip
    """Queue every legal move's afterstate at decision `state` as positions c0, c0 + 1, ...
    (a one-ply expansion). Returns (moves, new row count)."""
    mover = E.to_move(state)
    n = E.legal_actions(state, rules, buf)
    for j in range(n):
        child[:] = state
        E.play(child, rules, buf[j])
        n_rows = _queue_position(child, rules, mover, two_sides, with_policy, x, n_rows, c0 + j, pos_row, pos_mode,
                                 pos_values)  # fmt: skip
        if E.winner(child) >= 0 or not E.is_running(child, MAX_TURNS):
            child_kind[c0 + j] = LEAF
        elif is_chance_node(child, rules):
            child_kind[c0 + j] = CHANCE
        else:
            child_kind[c0 + j] = UNEXPANDED  # the same player decides again (a split seven, a fire decision)
        child_action[c0 + j] = buf[j]
    return n, n_rows


@njit(cache=True)
def _finish_expansion(node, mover, c0, n, with_policy, prior_temperature, child_action, child_kind, pos_row, pos_mode,
                      pos_values, logits, policy_logits, tree_kind, visits, totals, first_edge, n_edges, edge_action,
                      edge_prior, edge_child, counts, values, out):  # fmt: skip
    """Add decision node `node`'s children from its queued afterstates (positions c0..c0+n-1,
    now valued), set the priors; out := the value of the best child for the mover."""
    start = counts[1]
    best = -1.0
    prior_logits = np.empty(n)
    for j in range(n):
        logit = _read_position(c0 + j, pos_row, pos_mode, pos_values, logits, values)
        k = _new_node(tree_kind, visits, totals, counts[0], child_kind[c0 + j], values)
        counts[0] += 1
        edge_action[start + j] = child_action[c0 + j]
        edge_child[start + j] = k
        if with_policy:
            prior_logits[j] = policy_logits[pos_row[c0 + j, 4]]
        else:
            prior_logits[j] = logit / prior_temperature
        if values[mover] > best:
            best = values[mover]
            out[:] = values
    top = prior_logits.max()
    total = 0.0
    for j in range(n):
        edge_prior[start + j] = np.exp(prior_logits[j] - top)
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
def _grown(a, size):
    """A copy of 1-d array `a` with room for `size` entries."""
    b = np.zeros(size, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _grown_rows(a, size, fill):
    """A copy of 2-d array `a` with room for `size` rows (new rows := fill)."""
    b = np.full((size, a.shape[1]), fill, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _node_room(needed, tree_kind, visits, first_edge, n_edges, totals, card_child):
    """The node arrays, grown (doubled past `needed`) if they hold fewer than `needed` nodes."""
    if needed > tree_kind.shape[0]:
        size = 2 * needed
        return (
            _grown(tree_kind, size),
            _grown(visits, size),
            _grown(first_edge, size),
            _grown(n_edges, size),
            _grown_rows(totals, size, 0.0),
            _grown_rows(card_child, size, -1),
        )
    return tree_kind, visits, first_edge, n_edges, totals, card_child


@njit(cache=True)
def _edge_room(needed, edge_action, edge_prior, edge_child):
    """The edge arrays, grown (doubled past `needed`) if they hold fewer than `needed` edges."""
    if needed > edge_action.shape[0]:
        size = 2 * needed
        return _grown(edge_action, size), _grown(edge_prior, size), _grown(edge_child, size)
    return edge_action, edge_prior, edge_child


@njit(cache=True)
def _score_rows(params, sizes, policy_params, policy_sizes, x, n_rows, logits, policy_logits):
    """The value network's logits (and the policy network's, when there is one) of x[:n_rows],
    in `logits` / `policy_logits`, grown to x's rows when smaller; returns both."""
    if logits.shape[0] < x.shape[0]:
        logits = np.empty(x.shape[0], dtype=np.float32)
        policy_logits = np.empty(x.shape[0], dtype=np.float32)
    net_logits(params, sizes, x, n_rows, logits)
    if policy_sizes.shape[0] > 0:
        net_logits(policy_params, policy_sizes, x, n_rows, policy_logits)
    return logits, policy_logits


@njit(cache=True)
def _back_up(path, depth, leaf, visits, totals):
    """Add one visit and the leaf's values to every node of path[: depth + 1]."""
    for d in range(depth + 1):
        k = path[d]
        visits[k] += 1.0
        totals[k, :] += leaf


@njit(cache=True)
def _deal_lagging_card(s, rules, node, chances, visits, card_child, tree_kind, counts):
    """At chance node `node` with position `s`: deal (into `s`) the card whose share of the
    node's visits lags its probability most (deterministic stratified sampling), and return its
    child node (created unexpanded if new)."""
    card_chances(s, rules, chances)
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
    E.deal(s, rules, card)
    k = card_child[node, card]
    if k < 0:
        k = counts[0]
        counts[0] += 1
        tree_kind[k] = UNEXPANDED
        card_child[node, card] = k
    return k


@njit(cache=True)
def _mix_root_noise(edge_prior, start, n, noise_alpha, noise_fraction, seed):
    """Dirichlet(noise_alpha) noise mixed into a root's `n` edge priors (from edge `start`), a
    share of noise_fraction, drawn from the generator seeded with the game's `seed`."""
    if noise_fraction <= 0.0 or n <= 1:
        return
    np.random.seed(seed)
    noise = np.empty(n)
    for j in range(n):
        noise[j] = np.random.gamma(noise_alpha, 1.0)
    noise /= noise.sum()
    for j in range(n):
        e = start + j
        edge_prior[e] = (1.0 - noise_fraction) * edge_prior[e] + noise_fraction * noise[j]


@njit(cache=True)
def _root_results(r, me, visits, totals, first_edge, n_edges, edge_action, edge_child, actions, visit_counts, values):
    """actions/visit_counts/values[:n] := root r's moves, how often the search chose each and
    each one's mean value for the mover `me`; returns n."""
    n = n_edges[r]
    start = first_edge[r]
    for j in range(n):
        k = edge_child[start + j]
        actions[j] = edge_action[start + j]
        visit_counts[j] = visits[k] - 1.0
        values[j] = totals[k, me] / visits[k]
    return n


@njit(cache=True)
def run_search_many(
    root_states,
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
    seeds,
    root_actions,
    root_visits,
    root_values,
    n_moves,
):
    """Search every position of `root_states` (games x state; each a decision: the card to play
    is in it) for `simulations` expansions each, in lockstep: each step descends every game's
    tree to the position it needs valued, scores all of them in one batched network evaluation
    and backs the values up. Game g's search is the one it would have alone (the same seed
    `seeds[g]` for its root noise, the same network values bit for bit: see net_logits).
    root_actions/root_visits/root_values[g, :n_moves[g]] := game g's root moves, how often the
    search chose each, and each one's mean value for the mover. Returns the nodes of all the trees."""
    games = root_states.shape[0]
    buf = E.action_buffer(rules)
    max_moves = buf.shape[0]
    with_policy = policy_sizes.shape[0] > 0
    # Every game's tree in one pool of nodes and edges, grown (doubled) before a step could fill
    # it; a search adds about 6 nodes per simulation with 2 players, so this first guess grows.
    node_room = games * (max_moves + 2) + games * (simulations + 1) * 2
    edge_room = node_room
    tree_kind = np.zeros(node_room, dtype=np.int8)
    visits = np.zeros(node_room)
    totals = np.zeros((node_room, 4))
    first_edge = np.zeros(node_room, dtype=np.int64)
    n_edges = np.zeros(node_room, dtype=np.int64)
    card_child = np.full((node_room, N_CARDS), -1, dtype=np.int64)
    edge_action = np.zeros(edge_room, dtype=np.int64)
    edge_prior = np.zeros(edge_room)
    edge_child = np.zeros(edge_room, dtype=np.int64)
    counts = np.zeros(2, dtype=np.int64)  # nodes, edges in use
    # A step's positions (at most max_moves per game) and their rows of observations.
    pos_row = np.empty((games * max_moves, 6), dtype=np.int64)
    pos_mode = np.empty((games * max_moves, 4), dtype=np.int8)
    pos_values = np.empty((games * max_moves, 5))
    child_action = np.empty(games * max_moves, dtype=np.int64)
    child_kind = np.empty(games * max_moves, dtype=np.int8)
    x = np.zeros((games * 16, OBS_SIZE), dtype=np.float32)
    logits = np.empty(x.shape[0], dtype=np.float32)
    policy_logits = np.empty(x.shape[0], dtype=np.float32)
    # Each game's search.
    root = np.empty(games, dtype=np.int64)
    two_sides = np.empty(games, dtype=np.bool_)
    me = np.empty(games, dtype=np.int64)
    work = np.empty(games, dtype=np.int8)
    work_node = np.empty(games, dtype=np.int64)
    work_first = np.empty(games, dtype=np.int64)  # the game's first position this step
    work_moves = np.zeros(games, dtype=np.int64)
    depth = np.zeros(games, dtype=np.int64)
    path = np.empty((games, 4 * MAX_TURNS + 8), dtype=np.int64)
    leaf = np.empty((games, 4))
    state = np.empty_like(root_states)
    child = np.empty(root_states.shape[1], dtype=root_states.dtype)
    values = np.empty(4)
    chances = np.empty(N_CARDS)
    for g in range(games):
        root[g] = g
        tree_kind[g] = UNEXPANDED
        two_sides[g] = E.num_sides(rules, root_states[g]) == 2
        me[g] = E.to_move(root_states[g])
    counts[0] = games

    for step in range(simulations + 1):  # step 0 expands the roots
        # room for this step: per game a card node, a decision's children, its rows
        tree_kind, visits, first_edge, n_edges, totals, card_child = _node_room(
            counts[0] + games * (max_moves + 2), tree_kind, visits, first_edge, n_edges, totals, card_child
        )
        edge_action, edge_prior, edge_child = _edge_room(
            counts[1] + games * max_moves, edge_action, edge_prior, edge_child
        )
        n_rows = 0
        n_pos = 0
        for g in range(games):
            if x.shape[0] - n_rows < ROWS_PER_POSITION * max_moves:
                x = _grown_rows(x, 2 * (n_rows + ROWS_PER_POSITION * max_moves), np.float32(0.0))
            s = state[g]
            s[:] = root_states[g]
            node = root[g]
            d = 0
            path[g, 0] = node
            work[g] = NOTHING
            work_first[g] = n_pos
            while True:
                kind = tree_kind[node]
                if kind == LEAF:
                    leaf[g, :] = totals[node] / visits[node]
                    break
                if kind == UNEXPANDED:
                    n, n_rows = _queue_expansion(s, rules, two_sides[g], with_policy, buf, child, x, n_rows, n_pos,
                                                 child_action, child_kind, pos_row, pos_mode, pos_values)  # fmt: skip
                    work[g] = EXPAND
                    work_node[g] = node
                    work_moves[g] = n
                    n_pos += n
                    break
                if kind == DECISION:
                    e = _select_edge(node, E.to_move(s), c_puct, visits, totals, first_edge, n_edges, edge_prior,
                                     edge_child)  # fmt: skip
                    E.play(s, rules, edge_action[e])
                    node = edge_child[e]
                else:  # CHANCE
                    node = _deal_lagging_card(s, rules, node, chances, visits, card_child, tree_kind, counts)
                d += 1
                path[g, d] = node
                if d + 1 >= path.shape[1]:  # a pathologically long line: score it where it stands
                    n_rows = _queue_position(s, rules, E.to_move(s), two_sides[g], False, x, n_rows, n_pos, pos_row,
                                             pos_mode, pos_values)  # fmt: skip
                    work[g] = EVALUATE
                    n_pos += 1
                    break
            depth[g] = d

        logits, policy_logits = _score_rows(
            params, sizes, policy_params, policy_sizes, x, n_rows, logits, policy_logits
        )

        for g in range(games):
            if work[g] == EXPAND:
                _finish_expansion(
                    work_node[g], E.to_move(state[g]), work_first[g], work_moves[g], with_policy, prior_temperature,
                    child_action, child_kind, pos_row, pos_mode, pos_values, logits, policy_logits, tree_kind, visits,
                    totals, first_edge, n_edges, edge_action, edge_prior, edge_child, counts, values, leaf[g],
                )  # fmt: skip
            elif work[g] == EVALUATE:
                _read_position(work_first[g], pos_row, pos_mode, pos_values, logits, leaf[g])
            if step == 0:  # the root: its value is not needed, only its children
                r = root[g]
                visits[r] = 1.0
                totals[r, :] = leaf[g]
                _mix_root_noise(edge_prior, first_edge[r], n_edges[r], noise_alpha, noise_fraction, seeds[g])
                continue
            _back_up(path[g], depth[g], leaf[g], visits, totals)

    for g in range(games):
        n_moves[g] = _root_results(root[g], me[g], visits, totals, first_edge, n_edges, edge_action, edge_child,
                                   root_actions[g], root_visits[g], root_values[g])  # fmt: skip
    return counts[0]


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
    """One position's search (:func:`run_search_many` with one game). root_actions/
    root_visits/root_values[:n] := the root's legal moves, how often the search chose each,
    and each one's mean value for the mover; returns n."""
    n_moves = np.zeros(1, dtype=np.int64)
    seeds = np.full(1, seed, dtype=np.int64)
    actions = np.empty((1, root_actions.shape[0]), dtype=np.int64)
    visit_counts = np.empty((1, root_actions.shape[0]))
    values = np.empty((1, root_actions.shape[0]))
    run_search_many(
        root_state.reshape((1, root_state.shape[0])), rules, params, sizes, policy_params, policy_sizes, simulations,
        c_puct, prior_temperature, noise_alpha, noise_fraction, seeds, actions, visit_counts, values, n_moves,
    )  # fmt: skip
    n = n_moves[0]
    root_actions[:n] = actions[0, :n]
    root_visits[:n] = visit_counts[0, :n]
    root_values[:n] = values[0, :n]
    return n


class AZSearchAgent(NetworkFiles, ChoosingAgent):
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
        self.policy_params, self.policy_sizes, self.policy_meta = (*NO_NET, {}) if policy is None else pack(policy)
        for path, sizes in ((net, self.sizes), (policy, self.policy_sizes)):
            if sizes.shape[0] and sizes[0] != OBS_SIZE:
                raise ValueError(f"{path}: its network reads {sizes[0]} inputs; azsearch gives it the "
                                 f"{OBS_SIZE}-entry observation of a position")  # fmt: skip
        self.simulations = int(simulations)
        self.c_puct = float(c_puct)
        self.prior_temperature = float(prior_temperature)
        self.noise_alpha = float(noise_alpha)
        self.noise_fraction = float(noise_fraction)
        # (actions, visit shares, values) of the last search
        self.last_policy: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.reset(seed)

    def check_game(self, rules: Rules | str, num_players: int) -> None:
        """ValueError if the networks were trained for another game, or the rules have hidden
        hands (no public chance layer to search)."""
        r = get_rules(rules)
        if r.hand_size:
            raise ValueError(
                f"azsearch searches the public draw; rules {r.name!r} deal hidden hands (play for points), "
                "which it does not support"
            )
        super().check_game(rules, num_players)

    def network_files(self) -> list[tuple[str, dict]]:
        return [(self.net, self.net_meta)] + ([] if self.policy is None else [(self.policy, self.policy_meta)])

    def search(self, turn: Turn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(legal moves, times the search chose each, each one's mean value for the mover)."""
        return self.search_many([turn])[0]

    def search_many(self, turns: list[Turn]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """:meth:`search` of each turn (of any games, the same rules), the turns searched side
        by side with one batched network evaluation per step (:func:`run_search_many`), in
        groups of at most :data:`MAX_LOCKSTEP_GAMES` and :data:`LOCKSTEP_NODES` / simulations (the trees' memory). Each
        search draws its seed from this agent's generator in the order of `turns`."""
        if not turns:
            return []
        rules_array = game.rules_array(self.check_turns(turns))
        size = E.n_actions(rules_array)
        seeds = np.array([seed_from(self.rng) & 0x7FFFFFFF for _ in turns], dtype=np.int64)
        group = max(1, min(MAX_LOCKSTEP_GAMES, LOCKSTEP_NODES // self.simulations))
        out = []
        for start in range(0, len(turns), group):
            part = turns[start : start + group]
            n = len(part)
            actions, visit_counts, values = np.empty((n, size), np.int64), np.empty((n, size)), np.empty((n, size))
            n_moves = np.zeros(n, np.int64)
            run_search_many(
                np.array([turn.state for turn in part]), rules_array, self.params, self.sizes, self.policy_params,
                self.policy_sizes, self.simulations, self.c_puct, self.prior_temperature, self.noise_alpha,
                self.noise_fraction, seeds[start : start + n], actions, visit_counts, values, n_moves,
            )  # fmt: skip
            out += [
                (actions[g, : n_moves[g]], visit_counts[g, : n_moves[g]], values[g, : n_moves[g]]) for g in range(n)
            ]
        return out

    def choose(self, turn: Turn, legal: np.ndarray) -> int:
        return self._pick(*self.search(turn))

    def _pick(self, actions: np.ndarray, visit_counts: np.ndarray, values: np.ndarray) -> int:
        """The move visited most (ties: the better value); keeps the search's policy."""
        self.last_policy = (actions, search_policy(visit_counts, values), values)
        best = np.lexsort((-values, -visit_counts))[0]
        return int(actions[best])

    @property
    def acts_in_batches(self) -> bool:
        """True when :meth:`act_turns` decides many games' turns with the same moves as
        :meth:`act` one at a time: without root noise (the only use of a search's seed) the
        search is a function of the position alone. The arena then plays its games in lockstep."""
        return self.noise_fraction == 0.0

    def act_turns(self, turns: list[Turn]) -> np.ndarray:
        """int64 moves for a list of turns (of any games), searched side by side
        (:meth:`search_many`); a lone legal move is played without a search, as in :meth:`act`."""
        moves = np.array([turn.legal[0] for turn in turns], dtype=np.int64)
        searched = [k for k, turn in enumerate(turns) if len(turn.legal) > 1]
        for k, result in zip(searched, self.search_many([turns[k] for k in searched])):
            moves[k] = self._pick(*result)
        return moves


def search_policy(visit_counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The search's improved policy over the root moves: visit shares (all on the best
    value when no move was chosen by the search, as with a single simulation)."""
    total = visit_counts.sum()
    if total > 0:
        return visit_counts / total
    out = np.zeros(len(values))
    out[np.argmax(values)] = 1.0
    return out
