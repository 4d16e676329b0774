"""GauS as a scheduler: the differentiable relaxation (`relaxation.py`) optimized with Adam under
an augmented Lagrangian, then legalized into a verified schedule (`legalize.py`).

At one I the relaxation starts from the earliest start times the dependences allow and is
optimized: minimize `f + sum(lambda * V) + rho/2 * sum(V^2)` over the means, spreads and group
logits with Adam, the multipliers updated `lambda += rho * V` every `dual_every` steps and rho
growing; the spreads' cap shrinks to nearly zero over the steps, so that the distributions end
nearly one-hot.  Every `legalize_every` steps and at the end, the means and the most likely
groups (spill-induced recurrences repaired) are legalized.

Which I: first the lower bound; if it does not legalize there, the same relaxed solution is
legalized at growing I (1%, 2%, 5%, ... above) until one verifies - some schedule early.  Then a
bisection between the lower bound and the best I found, a fresh relaxation at each I tried, its
solution also legalized at larger I below the best.  Feasibility is not monotone in I, so the
bisection is a search order, not a proof: GauS proves nothing; the lower bound it reports is
max(ResMII, RecMII).

The answer is verified against every constraint in force by `legalize`; a failed legalization is
reported (`ScaleResult.why`), never returned as a schedule.  A fixed `seed` gives the same
schedule (CPU, `threads` fixed) unless the time limit cuts the run short.  PyTorch is the optional
extra `warpweave[gaus]`; the device is the GPU when one is present (`device="auto"`), else CPU.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import attrs
import torch

from warpweave import limits
from warpweave.core.assign import allowed_groups
from warpweave.core.bounds import bounds, start_windows
from warpweave.core.constraints import Constraint
from warpweave.core.model import Model
from warpweave.core.schedule import Schedule
from warpweave.scale.legalize import legalize, repair_groups
from warpweave.scale.lowerbound import structural
from warpweave.scale.relaxation import Relaxation
from warpweave.scale.result import Improvement, Listener, ScaleResult


@attrs.frozen
class GausOptions:
    """The optimizer's settings (defaults measured on the kernel library and random graphs)."""

    iterations: int = 300      # Adam steps at each I
    lr: float = 0.05           # step of the means, in units of I
    rho: float = 1.0           # initial penalty weight
    rho_growth: float = 1.5
    rho_max: float = 1e4
    dual_every: int = 20       # steps between multiplier updates
    legalize_every: int = 100  # steps between legalizations
    fallback: int = 8          # larger I at which a failed I's solution is also legalized
    seed: int = 0
    device: str = "auto"       # auto: cuda when available, else cpu
    threads: int = 1           # CPU threads (1: the same schedule for the same seed)


def device_for(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


class _Run:
    """One GauS run: the I loop, the optimizer, the best verified schedule so far."""

    def __init__(self, model: Model, constraints: Sequence[Constraint], options: GausOptions,
                 lower: int, max_stages: int, deadline: float | None,
                 listener: Listener | None, semantics: str = "loop"):
        self.model, self.constraints, self.options = model, list(constraints), options
        self.rules = {c.name for c in constraints}
        self.allowed = allowed_groups(model, self.rules)
        self.lower, self.max_stages = lower, max_stages
        self.deadline, self.listener = deadline, listener
        self.semantics = semantics
        self.started = time.perf_counter()
        self.device = device_for(options.device)
        self.generator = torch.Generator().manual_seed(options.seed)
        self.best: Schedule | None = None
        self.history: list[Improvement] = []
        self.notes: list[str] = []
        self.last_why: str | None = None
        self.steps = 0
        self.min_length = bounds(model, self.rules).min_length

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    def keep(self, schedule: Schedule, how: str) -> None:
        if self.best is None or (schedule.I, schedule.L) < (self.best.I, self.best.L):
            self.best = schedule
            self.history.append(Improvement(time.perf_counter() - self.started, schedule.I,
                                            schedule.L, self.lower, how))
            if self.listener:
                self.listener(self.history[-1])

    def try_legalize(self, rel: Relaxation, I: int, how: str) -> bool:  # noqa: E741
        want, group = rel.decoded()
        if I != rel.I:  # the same solution stretched to a larger I, stage by stage
            want = {v: t * I / rel.I for v, t in want.items()}
        horizon = self.horizon(I) + I
        group = repair_groups(self.model, I, group, self.rules, self.allowed)
        done = legalize(self.model, I, want, group, self.constraints, horizon=horizon,
                        deadline=self.deadline, semantics=self.semantics)
        if done.schedule is None:
            self.last_why = f"I={I}: {done.why}"
            return False
        self.keep(done.schedule, how)
        return True

    def horizon(self, I: int) -> int:  # noqa: E741
        stages = max(self.max_stages, math.ceil(self.min_length / I) + 2)
        return stages * I

    def relax(self, I: int) -> Relaxation | None:  # noqa: E741
        """The relaxation at I, from the earliest start times the dependences allow, optimized
        (legalizing as it goes); None if the dependences alone rule I out."""
        windows = start_windows(self.model, I, self.horizon(I), edges="dependence" in self.rules)
        if windows is None:
            return None
        start = {v: float(lo) for v, (lo, _) in windows.items()}
        rel = Relaxation(self.model, I, self.horizon(I), self.rules, self.allowed, start,
                         self.generator, self.device)
        self.optimize(rel)
        return rel

    def found_at_most(self, I: int) -> bool:  # noqa: E741
        return self.best is not None and self.best.I <= I

    def fallbacks(self, rel: Relaxation, upper: int) -> None:
        """The relaxed solution of a failed I legalized at larger I (growing by 1%, 2%, 5%,
        ... of it) below the best found and at most `upper`, until one verifies."""
        low = rel.I
        for share in (0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2, 3, 5, 8):
            top = upper if self.best is None else min(upper, self.best.I - 1)
            bigger = min(top, low + max(1, math.ceil(share * low)))
            if bigger <= low or self.out_of_time() or self.try_legalize(
                    rel, bigger, f"gaus (I={low} relaxed, legalized at {bigger})"):
                return
            if bigger == top:
                return

    def run(self, upper: int) -> None:
        """Phase A: optimize at the lower bound and legalize there, else the same solution at
        growing I until one verifies.  Phase B: bisect between the lower bound and the best I
        found, optimizing at each I tried and legalizing a failed one at larger I below the
        best."""
        low, first = self.lower, None
        while low <= upper and not self.out_of_time():
            first = self.relax(low)
            if first is not None:
                break
            low += 1  # a recurrence through the horizon: the dependences alone rule it out
        if first is None or self.found_at_most(low):
            return
        self.fallbacks(first, upper)
        left, right = low + 1, (self.best.I - 1 if self.best is not None else upper)
        while left <= right and not self.out_of_time():
            mid = (left + right) // 2
            rel = self.relax(mid)
            if not self.found_at_most(mid) and rel is not None:
                self.fallbacks(rel, right)
            if self.found_at_most(mid):
                right = self.best.I - 1
            else:
                left = mid + 1
                right = min(right, self.best.I - 1) if self.best is not None else right

    def optimize(self, rel: Relaxation) -> bool:
        """Adam under the augmented Lagrangian at rel.I; True when a legalization succeeded."""
        o = self.options
        params = [p for p in (rel.mu, rel.rho, rel.logits) if p.requires_grad]
        adam = _Adam(params, [o.lr * rel.I if p is rel.mu else o.lr * 2 for p in params])
        multipliers: dict[str, torch.Tensor] = {}
        rho = o.rho
        cap0 = rel.sigma_cap
        for step in range(1, o.iterations + 1):
            if self.out_of_time():
                return False
            rel.sigma_cap = cap0 - (cap0 - rel.sigma_floor - 0.05) * step / o.iterations
            objective, violations = rel()
            total = objective
            for name, v in violations.items():
                lam = multipliers.get(name)
                if lam is not None:
                    total = total + (lam * v).sum()
                total = total + rho / 2 * (v * v).sum()
            for p in params:
                p.grad = None
            total.backward()
            adam.step()
            self.steps += 1
            if step % o.dual_every == 0:
                with torch.no_grad():
                    for name, v in violations.items():
                        multipliers[name] = multipliers.get(name, torch.zeros_like(v)) + \
                            rho * v.detach()
                rho = min(rho * o.rho_growth, o.rho_max)
            if step % o.legalize_every == 0 or step == o.iterations:
                if self.try_legalize(rel, rel.I, f"gaus (I={rel.I}, step {step})"):
                    return True
        return False


class _Adam:
    """Adam (Kingma and Ba 2015) on a few tensors, each with its own step size.  Written out
    because constructing `torch.optim.Adam` imports torch._dynamo, 2.5-4.5 s of every run."""

    def __init__(self, params: list[torch.Tensor], lrs: list[float],
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        self.params, self.lrs, self.betas, self.eps = params, lrs, betas, eps
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]
        self.t = 0

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        for p, lr, m, v in zip(self.params, self.lrs, self.m, self.v, strict=True):
            if p.grad is None:
                continue
            m.mul_(b1).add_(p.grad, alpha=1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            step = lr / (1 - b1 ** self.t)
            p.addcdiv_(m, (v / (1 - b2 ** self.t)).sqrt_().add_(self.eps), value=-step)


def gaus_schedule(model: Model, constraints: Sequence[Constraint], *,
                  options: GausOptions = GausOptions(), lower: int | None = None,
                  max_stages: int | None = None, time_limit: float | None = None,
                  listener: Listener | None = None, semantics: str = "loop") -> ScaleResult:
    """GauS on `model` under `constraints` (see the module docstring).  `lower`: a proven lower
    bound on I to start from (default max(ResMII, RecMII) of the rules in force); `semantics`:
    what the verifier checks every schedule against (DESIGN section 3)."""
    started = time.perf_counter()
    torch.set_num_threads(max(1, options.threads))
    rules = {c.name for c in constraints}
    b = bounds(model, rules)
    low = max(b.lower, lower or 0)
    run = _Run(model, constraints, options, low, max_stages or b.default_max_stages(),
               None if time_limit is None else started + time_limit, listener, semantics)
    interrupted = timed_up = False
    stuck = next((v for v, gs in run.allowed.items() if not gs), None)
    if stuck is not None:
        why = f"no group may run {stuck} (warp fit, variable latency)"
    else:
        try:
            run.run(b.i_upper)
        except limits.TimeUp as stop:
            timed_up = True
            run.notes.append(str(stop))
        except KeyboardInterrupt:
            interrupted = True
            run.notes.append("interrupted")
        why = None if run.best is not None else (
            f"time limit of {time_limit} s reached" if run.out_of_time() else
            f"no legalization succeeded up to I={b.i_upper}") + \
            (f"; last failure at {run.last_why}" if run.last_why else "")
    device = run.device.type
    notes = run.notes + [f"GauS: {run.steps} Adam steps on {device}"
             + (f" ({options.threads} thread{'s' * (options.threads != 1)})"
                if device == "cpu" else "") + f", seed {options.seed}"]
    how = structural(b).how if low == b.lower else (f"given: {low}",)
    timed_out = time_limit is not None and (timed_up or run.out_of_time())
    if timed_out and not timed_up and run.best is not None:
        notes.insert(0, f"time limit of {time_limit:g} s reached")
    return ScaleResult("gaus", model, run.best, low, b, how,
                       tuple(run.history), time.perf_counter() - started,
                       None if run.best is not None else why, tuple(notes),
                       interrupted=interrupted, timed_out=timed_out)
