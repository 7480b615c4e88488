"""Bradley–Terry strengths from pairwise games, with bootstrap confidence intervals.

Each comparison record is one game between its `a` and `b`, scored as `assay winrate` scores it
(`measure.inputs.prob_b_wins`): by its `preference` (P(b beats a): a panel's or a shuffled
judge's share of the votes) when it has one, else by its verdict, a tie half a win to each side;
games are pooled across judges. The fit is the unregularised maximum likelihood of
P(i beats j) = σ(β_i − β_j) on the aggregated win counts (scipy's L-BFGS-B with the exact
gradient, to a gradient tolerance of 1e-9), with the first player's β fixed at 0. Strengths are exp(β) normalised to
sum to 1. The MLE exists only when the win graph is strongly connected (every player both wins
and loses against the rest, directly or not); otherwise the command reports it instead of
printing meaningless numbers. Bootstrap intervals resample whole games with replacement (a
game is a win for one side, a tie, or a share of votes): each resample draws as many games as were played, over
the (pair, outcome) cells in proportion to their counts, and is refitted; the interval is the
2.5th and 97.5th percentiles of the refitted strengths (a game scored by a share of votes keeps
that share in every resample that draws it). There is no interval (None, and the
reason in `Rating.undefined`) when a resample has no maximum-likelihood strengths (a player
never loses, or never wins, in it: too few games, and its refit would be an arbitrary point
where the optimiser stopped), or when every resample gives the same strengths (ties only, or
a single game: `[0.5, 0.5]` would claim certainty from games without spread).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.optimize import minimize
from scipy.sparse.csgraph import connected_components
from scipy.special import expit, log_expit
from threadpoolctl import threadpool_limits

WIN = {"a": 1.0, "b": 0.0, "tie": 0.5}

Outcome = str | float
"""A game's outcome: the verdict ("a", "b", "tie"), or P(b beats a) in [0, 1] (a panel's or
a shuffled judge's share of the votes, `Comparison.preference`)."""


@dataclass
class Rating:
    name: str
    strength: float
    ci_low: float | None
    ci_high: float | None
    games: int
    wins: float
    undefined: dict[str, str] = field(default_factory=dict)
    """Why a figure is None: field name → reason."""


@dataclass
class Games:
    """Aggregated games: for each unordered pair (i < j), how many times i scored over j, and
    the distinct outcomes played (`cell`: the pair's index, `score`: i's score of a game,
    `count`: games with that outcome), which the bootstrap resamples whole."""

    names: list[str]
    i: np.ndarray
    j: np.ndarray
    wins_i: np.ndarray  # score of i (ties half, a share of votes as it is)
    wins_j: np.ndarray
    ties: np.ndarray  # games of the pair that were ties (counted half in wins_i and wins_j)
    cell: np.ndarray
    score: np.ndarray
    count: np.ndarray

    @property
    def total(self) -> np.ndarray:
        return np.asarray(self.wins_i + self.wins_j, dtype=float)


def score_of_a(outcome: Outcome) -> float:
    """a's score of one game: 1 a win, 0 a loss, 0.5 a tie, 1 − P(b beats a) for a share."""
    if isinstance(outcome, str):
        return WIN[outcome]
    return 1.0 - float(outcome)


def aggregate(pairs: Sequence[tuple[str, str, Outcome]]) -> Games:
    """(a, b, outcome) games → per-pair scores; self-games are ignored."""
    names = sorted({p for a, b, _ in pairs for p in (a, b)})
    index = {name: k for k, name in enumerate(names)}
    a = np.fromiter((index[p[0]] for p in pairs), dtype=np.int64, count=len(pairs))
    b = np.fromiter((index[p[1]] for p in pairs), dtype=np.int64, count=len(pairs))
    score_a = np.fromiter((score_of_a(p[2]) for p in pairs), dtype=float, count=len(pairs))
    keep = a != b
    a, b, score_a = a[keep], b[keep], score_a[keep]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    score_lo = np.where(a == lo, score_a, 1.0 - score_a)
    k = len(names)
    cell = lo * k + hi
    cells, inverse = np.unique(cell, return_inverse=True)
    wins_lo = np.bincount(inverse, weights=score_lo, minlength=len(cells))
    count = np.bincount(inverse, minlength=len(cells)).astype(float)
    ties = np.bincount(inverse, weights=(score_lo == 0.5), minlength=len(cells))
    outcomes, played = np.unique(np.column_stack([inverse, score_lo]), axis=0, return_counts=True)
    return Games(
        names,
        cells // k,
        cells % k,
        wins_lo,
        count - wins_lo,
        ties,
        outcomes[:, 0].astype(np.int64) if len(outcomes) else np.zeros(0, dtype=np.int64),
        outcomes[:, 1] if len(outcomes) else np.zeros(0),
        played.astype(float),
    )


def resample_games(games: Games, rng: np.random.Generator, size: int) -> np.ndarray:
    """`size` game-level bootstrap resamples: rows of (wins_i, wins_j) per pair, concatenated.

    Every game is drawn whole, so a resample has as many games as were played and each game
    keeps its full variance (a tie stays one game worth half a win to each side, a share of
    votes one game worth that share)."""
    draws = rng.multinomial(round(float(games.count.sum())), games.count / games.count.sum(), size)
    shares = np.zeros((len(games.cell), len(games.i)))  # outcome → i's score in its pair
    shares[np.arange(len(games.cell)), games.cell] = games.score
    played = np.zeros_like(shares)
    played[np.arange(len(games.cell)), games.cell] = 1.0
    wins_i = draws @ shares
    return np.hstack([wins_i, draws @ played - wins_i])


def strongly_connected(
    games: Games, wins_i: np.ndarray | None = None, wins_j: np.ndarray | None = None
) -> bool:
    """Whether the MLE exists: the directed graph of (partial) wins is strongly connected
    (for the given per-pair scores, a resample's, else the games')."""
    k = len(games.names)
    wi = games.wins_i if wins_i is None else wins_i
    wj = games.wins_j if wins_j is None else wins_j
    rows = np.concatenate([games.i[wi > 0], games.j[wj > 0]])
    cols = np.concatenate([games.j[wi > 0], games.i[wj > 0]])
    graph = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(k, k))
    count, _ = connected_components(graph, directed=True, connection="strong")
    return bool(count == 1)


def _negative_log_likelihood(
    free: np.ndarray, i: np.ndarray, j: np.ndarray, wins_i: np.ndarray, wins_j: np.ndarray
) -> tuple[float, np.ndarray]:
    """−log L of the aggregated games and its gradient; β of player 0 is fixed at 0."""
    beta = np.concatenate([[0.0], free])
    diff = beta[i] - beta[j]
    loss = -float(np.sum(wins_i * log_expit(diff) + wins_j * log_expit(-diff)))
    # d(−log L)/d diff = −(wins_i·σ(−diff) − wins_j·σ(diff)) = total·σ(diff) − wins_i
    slope = (wins_i + wins_j) * expit(diff) - wins_i
    grad = np.bincount(i, weights=slope, minlength=len(beta)) - np.bincount(
        j, weights=slope, minlength=len(beta)
    )
    return loss, grad[1:]


def fit_log_strengths(
    games: Games,
    wins_i: np.ndarray | None = None,
    wins_j: np.ndarray | None = None,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """Maximum-likelihood β (player 0 at 0) by L-BFGS on the exact log-likelihood."""
    wi = games.wins_i if wins_i is None else wins_i
    wj = games.wins_j if wins_j is None else wins_j
    k = len(games.names)
    x0 = np.zeros(k - 1) if start is None else start[1:]
    result = minimize(
        _negative_log_likelihood,
        x0,
        args=(games.i, games.j, wi, wj),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 10_000, "gtol": 1e-9, "ftol": 1e-15},
    )
    return np.concatenate([[0.0], np.asarray(result.x, dtype=float)])


def normalise(beta: np.ndarray) -> np.ndarray:
    """exp(β) scaled to sum to 1."""
    strengths = np.exp(beta - beta.max())
    return np.asarray(strengths / strengths.sum())


def fit_strengths(
    games: Games, wins_i: np.ndarray | None = None, wins_j: np.ndarray | None = None
) -> np.ndarray:
    """Maximum-likelihood strengths (sum 1) for the given per-pair scores."""
    return normalise(fit_log_strengths(games, wins_i, wins_j))


def rank(
    pairs: Sequence[tuple[str, str, Outcome]], *, bootstrap: int = 200, seed: int = 0
) -> list[Rating]:
    """Ratings, strongest first. Raises ValueError when the MLE does not exist."""
    # tiny problems: one BLAS thread is far faster than several contending for the cores
    with threadpool_limits(1):
        return _rank(pairs, bootstrap, seed)


def _rank(pairs: Sequence[tuple[str, str, Outcome]], bootstrap: int, seed: int) -> list[Rating]:
    games = aggregate(pairs)
    if len(games.names) < 2 or len(games.i) == 0:
        raise ValueError("need games between at least two different players")
    if not strongly_connected(games):
        raise ValueError(
            "the maximum-likelihood strengths do not exist: some players never lose (or never win)"
            " against the rest, or the comparisons form disconnected groups"
        )
    beta = fit_log_strengths(games)
    strengths = normalise(beta)
    low, high, why = _intervals(games, beta, bootstrap, seed)
    k = len(games.names)
    played = np.bincount(games.i, weights=games.total, minlength=k) + np.bincount(
        games.j, weights=games.total, minlength=k
    )
    wins = np.bincount(games.i, weights=games.wins_i, minlength=k) + np.bincount(
        games.j, weights=games.wins_j, minlength=k
    )
    ratings = [
        Rating(
            name,
            float(strengths[n]),
            None if low is None else float(low[n]),
            None if high is None else float(high[n]),
            round(float(played[n])),
            float(wins[n]),
            {} if why is None else {"ci_low": why, "ci_high": why},
        )
        for n, name in enumerate(games.names)
    ]
    return sorted(ratings, key=lambda r: (-r.strength, r.name))


def _intervals(
    games: Games, beta: np.ndarray, bootstrap: int, seed: int
) -> tuple[np.ndarray | None, np.ndarray | None, str | None]:
    """Percentile bootstrap bounds of every strength, or None and why there are none."""
    if bootstrap == 0:
        return None, None, "--bootstrap 0"
    rng = np.random.default_rng(seed)
    draws = resample_games(games, rng, bootstrap)
    m = len(games.i)
    missing = sum(1 for d in draws if not strongly_connected(games, d[:m], d[m:]))
    if missing:
        return (
            None,
            None,
            (
                f"{missing} of {bootstrap} resamples have no maximum-likelihood strengths:"
                " too few games"
            ),
        )
    samples = np.vstack(
        [normalise(fit_log_strengths(games, d[:m], d[m:], start=beta)) for d in draws]
    )
    if np.allclose(samples, samples[0], rtol=0.0, atol=1e-9):
        ties = round(float(games.ties.sum()))
        played = round(float(games.total.sum()))
        what = f"{played} game{'' if played == 1 else 's'}" + (
            ", only ties" if ties == played else ""
        )
        return None, None, f"every resample gives the same strengths ({what}): no spread"
    low, high = np.percentile(samples, [2.5, 97.5], axis=0)
    return low, high, None
