"""GauS's differentiable relaxation of a modulo schedule at one I (Cai et al. 2026, "Differentiable
Scheduling Optimization via Gaussian Reparameterization"), extended to warp-group assignment.

Each op's start time is a Gaussian `X_v ~ N(mu_v, sigma_v^2)`; the probability of each cycle is a
CDF difference, `P(X_v = t) = Phi((t + 1/2 - mu_v)/sigma_v) - Phi((t - 1/2 - mu_v)/sigma_v)`.  Only
a band of cycles around `mu_v` is represented (sigma is kept below a third of the band), so the
cost per op does not grow with the length of the schedule.  Each op's group is a softmax over
logits, masked to the groups the op may run on (warp fit, variable latency).  From these the
relaxation states, as differentiable non-negative violations (zero when the rule holds for
every outcome):

- **dependence** (rules 1 and 3's premise): for each edge u -> v the expected shortfall
  `E[max(0, gap - (X_v - X_u))]` of the Gaussian difference, in closed form; `gap` is the delay
  minus distance*I, plus the edge's hand-off (cross-warp spill): `handoff` times the probability
  that the two ops are on different groups, `handoff_local` times the probability that they share
  one.  Recurrences are the edges with a distance.
- **capacity** (rule 2): the probabilities folded modulo I (wrapped into I slots), convolved
  with each op's folded reservation table (an FFT), give the expected use of each unit per slot;
  the excess over the capacity.
- **registers and memory** (rules 8 and 5): a value lives from `X_v` to its last read, a
  Gaussian whose mean is a smooth maximum of the readers' means (+ distance*I); folded modulo I,
  the start's CDF minus the end's gives the expected number of live copies per slot (the loop's
  steady state); weighted by registers and the group probabilities, or by footprints; the excess
  over each limit.
- **concurrency** (rule 9): the probability that an op which waits (a blocking edge, or a read
  from another group) issues in a slot that another op on its group occupies.
- **horizon**: start times within [0, D - cycles].

The objective is a smooth maximum of `mu_v + cycles_v` (the length).  `Relaxation.forward`
returns the objective and the violations; the optimizer (`gaus.py`) combines them in an
augmented Lagrangian.  Everything here is torch; nothing is decided here.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

import torch

from warpweave.core.ims import folded_runs
from warpweave.core.model import Model

SQRT_2PI = math.sqrt(2 * math.pi)


def band_half_width(I: int) -> int:  # noqa: E741
    """Half the band of cycles represented around each mean: about I/2, within [3, 24]."""
    return max(3, min(24, math.ceil(I / 2)))


class Relaxation(torch.nn.Module):
    """The parameters (means, spreads, group logits) and the violations at one I.

    `start` gives the initial means (cycles); `groups_allowed[v]` the groups op v may run on;
    `rules` the names of the constraints in force; `horizon` D bounds every op's end.
    """

    def __init__(self, model: Model, I: int, horizon: int,  # noqa: E741
                 rules: Collection[str], groups_allowed: Mapping[str, Sequence[str]],
                 start: Mapping[str, float], generator: torch.Generator,
                 device: torch.device):
        super().__init__()
        self.model, self.I, self.D = model, I, horizon
        self.device = device
        names = model.op_names
        self.index = {v: k for k, v in enumerate(names)}
        n = len(names)
        self.groups = [g.name for g in model.machine.warp_groups]
        G = len(self.groups)
        f32 = torch.float32

        def tensor(values, dtype=f32):
            return torch.tensor(values, dtype=dtype, device=device)

        self.h = band_half_width(I)
        self.W = 2 * self.h + 1
        self.sigma_floor = 0.2
        self.sigma_cap = self.h / 3.0  # lowered by the optimizer as it goes
        self.cycles = tensor([op.cycles for op in model.ops])

        noise = torch.randn(n, generator=generator).to(device) * 0.1
        self.mu = torch.nn.Parameter(tensor([float(start[v]) for v in names]) + noise)
        self.rho = torch.nn.Parameter(torch.zeros(n, device=device))
        mask = torch.full((n, G), -1e4, device=device)
        for v, allowed in groups_allowed.items():
            for g in allowed:
                mask[self.index[v], self.groups.index(g)] = 0.0
        self.mask = mask
        grouped = G > 1 and bool({"cross_warp_spill", "register_limit", "concurrency"} & set(rules))
        self.logits = torch.nn.Parameter(torch.randn(n, G, generator=generator).to(device) * 0.01,
                                         requires_grad=grouped)

        # Edges (self-loops hold at any I >= RecMII: left out).
        edges = [e for e in model.edges if e.src != e.dst]
        self.e_src = tensor([self.index[e.src] for e in edges], torch.long)
        self.e_dst = tensor([self.index[e.dst] for e in edges], torch.long)
        self.e_gap = tensor([e.delay - e.distance * I for e in edges])
        spill = "cross_warp_spill" in rules
        # The hand-off (rule 1): `handoff` across groups, `handoff_local` within one.
        self.e_spill = tensor([(e.handoff or 0) if spill and e.is_data else 0 for e in edges])
        self.e_local = tensor([e.handoff_local if spill and e.is_data else 0 for e in edges])
        self.dependence = "dependence" in rules and bool(edges)

        # Capacity: each op's reservations folded modulo I, per unit, in the frequency domain.
        self.units: list[tuple[torch.Tensor, torch.Tensor, int]] = []
        if "capacity" in rules:
            runs = folded_runs(model, I)
            for unit in model.machine.units:
                rows, table = [], []
                for v in names:
                    slots = [0.0] * I
                    for u, off, length, count in runs[v]:
                        if u == unit.name:
                            for k in range(length):
                                slots[(off + k) % I] += count
                    if any(slots):
                        rows.append(self.index[v])
                        table.append(slots)
                if rows and sum(map(sum, table)) > unit.capacity:
                    self.units.append((tensor(rows, torch.long),
                                       torch.fft.rfft(tensor(table), dim=1), unit.capacity))

        # Lifetimes: for each value with data reads, the readers and how long after the reader's
        # issue the read is done (its distance, plus the cycles the reader holds the value).
        self.lifetimes = bool({"register_limit", "memory"} & set(rules))
        reads = [(self.index[e.src], self.index[e.dst], e.distance * I + e.hold)
                 for e in model.edges if e.is_data]
        self.r_val = tensor([a for a, _, _ in reads], torch.long)
        self.r_use = tensor([b for _, b, _ in reads], torch.long)
        self.r_plus = tensor([c for _, _, c in reads])
        self.has_reads = torch.zeros(n, device=device)
        if reads:
            self.has_reads[self.r_val] = 1.0
        self.regs = tensor([op.regs for op in model.ops])
        self.reg_limit = tensor([g.reg_limit for g in model.machine.warp_groups])
        self.use_regs = "register_limit" in rules and bool(self.regs.sum() > 0)
        self.memories = [(tensor([op.footprint_in(m.name) for op in model.ops]), m.capacity)
                         for m in model.machine.memories] if "memory" in rules else []
        self.memories = [(w, c) for w, c in self.memories if float(w.sum()) > c]

        # Concurrency: who waits (blocking in-edge: always; data from another op: if apart).
        self.concurrency = "concurrency" in rules
        self.blocking = torch.zeros(n, device=device)
        data_in = [(self.index[e.src], self.index[e.dst]) for e in model.edges
                   if e.is_data and e.src != e.dst and not e.blocking]
        for e in model.edges:
            if e.blocking:
                self.blocking[self.index[e.dst]] = 1.0
        self.d_src = tensor([a for a, _ in data_in], torch.long)
        self.d_dst = tensor([b for _, b in data_in], torch.long)
        occ = [min(I, 1 if op.is_async else op.cycles) for op in model.ops]
        box = torch.zeros(n, I, device=device)
        for k, o in enumerate(occ):
            box[k, :o] = 1.0
        self.occupancy_f = torch.fft.rfft(box, dim=1)

    # -- distributions ---------------------------------------------------------------------------

    def sigma(self) -> torch.Tensor:
        return self.sigma_floor + (self.sigma_cap - self.sigma_floor) * torch.sigmoid(self.rho)

    def group_probabilities(self) -> torch.Tensor:
        return torch.softmax(self.logits + self.mask, dim=1)

    def _band(self, mu: torch.Tensor, sigma: torch.Tensor):
        """(first cycle of each band, CDF at each cycle of the band): P(X <= base + k)."""
        base = torch.floor(mu.detach()).long() - self.h
        k = torch.arange(self.W, device=self.device)
        t = (base[:, None] + k[None, :]).float()
        cdf = torch.special.ndtr((t + 0.5 - mu[:, None]) / sigma[:, None])
        return base, cdf

    def _fold(self, base: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Band values at cycles base + k added into their slots modulo I: (ops, I)."""
        k = torch.arange(self.W, device=self.device)
        slots = torch.remainder(base[:, None] + k[None, :], self.I)
        out = torch.zeros(values.shape[0], self.I, device=self.device, dtype=values.dtype)
        return out.scatter_add(1, slots, values)

    def _count(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """For each row, the number of cycles t in [a, b) with t = r (mod I), per slot r
        (negative when b < a)."""
        r = torch.arange(self.I, device=self.device)[None, :]

        def upto(c):  # cycles t < c with t = r (mod I), counted from a common origin
            return torch.div(c[:, None] - 1 - r, self.I, rounding_mode="floor")

        return (upto(b) - upto(a)).float()

    # -- the relaxation --------------------------------------------------------------------------

    def forward(self) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        mu, sigma, I = self.mu, self.sigma(), self.I  # noqa: E741
        pi = self.group_probabilities()
        violations: dict[str, torch.Tensor] = {}

        base, cdf = self._band(mu, sigma)
        before = torch.special.ndtr((base.float() - 0.5 - mu) / sigma)
        prob = torch.diff(cdf, dim=1, prepend=before[:, None])
        prob = prob / prob.sum(dim=1, keepdim=True).clamp_min(1e-6)
        folded = self._fold(base, prob)                      # P(X_v = r mod I)
        folded_f = torch.fft.rfft(folded, dim=1)

        if self.dependence:
            u, v = self.e_src, self.e_dst
            same = (pi[u] * pi[v]).sum(dim=1)
            gap = self.e_gap + self.e_spill * (1.0 - same) + self.e_local * same
            m = mu[v] - mu[u]
            s = torch.sqrt(sigma[u] ** 2 + sigma[v] ** 2)
            z = (gap - m) / s
            shortfall = (gap - m) * torch.special.ndtr(z) + s * torch.exp(-0.5 * z * z) / SQRT_2PI
            violations["dependence"] = shortfall / I

        if self.units:
            excess = []
            for rows, table_f, capacity in self.units:
                use = torch.fft.irfft((folded_f[rows] * table_f).sum(dim=0), n=I)
                excess.append(torch.relu(use - capacity) / capacity)
            violations["capacity"] = torch.cat(excess)

        if self.lifetimes and self.r_val.numel():
            live = self._live_copies(mu, sigma, cdf, base)   # expected live copies per slot
            if self.use_regs:
                weight = self.regs[:, None] * live
                pressure = torch.einsum("vg,vr->gr", pi, weight)
                violations["register_limit"] = (
                    torch.relu(pressure - self.reg_limit[:, None]) /
                    self.reg_limit.clamp_min(1)[:, None]).flatten()
            if self.memories:
                violations["memory"] = torch.cat([
                    torch.relu((w[:, None] * live).sum(dim=0) - c) / max(1, c)
                    for w, c in self.memories])

        if self.concurrency:
            occupied = torch.fft.irfft(folded_f * self.occupancy_f, n=I)   # (ops, I)
            group_load = torch.einsum("vg,vr->gr", pi, occupied)
            mine = pi[:, :, None] * occupied[:, None, :]                   # (ops, G, I)
            others = group_load[None, :, :] - mine
            clash = (pi[:, :, None] * folded[:, None, :] * others).sum(dim=(1, 2))
            waits = self.blocking.clone()
            if self.d_src.numel():
                apart = 1.0 - (pi[self.d_src] * pi[self.d_dst]).sum(dim=1)
                log_stay = torch.zeros_like(waits).index_add(
                    0, self.d_dst, torch.log((1.0 - apart).clamp_min(1e-6)))
                waits = torch.maximum(waits, 1.0 - torch.exp(log_stay))
            violations["concurrency"] = waits * clash

        violations["horizon"] = (torch.relu(mu + self.cycles - self.D) + torch.relu(-mu)) / I

        tau = max(1.0, I / 10)
        length = tau * torch.logsumexp((mu + self.cycles) / tau, dim=0)
        return length / I, violations

    def _live_copies(self, mu, sigma, cdf, base) -> torch.Tensor:
        """Expected live copies of each value per slot modulo I (zero for values nobody reads):
        the folded CDF of its start minus that of its end, plus whole periods in between."""
        n = mu.shape[0]
        reach = mu[self.r_use] + self.r_plus
        tau = 1.0
        top = torch.full((n,), -1e9, device=self.device).scatter_reduce(
            0, self.r_val, reach.detach(), "amax")
        weight = torch.exp((reach - top[self.r_val]) / tau)
        total = torch.zeros(n, device=self.device).index_add(0, self.r_val, weight)
        end_mu = top + tau * torch.log(total.clamp_min(1e-9))
        share = weight / total[self.r_val].clamp_min(1e-9)
        end_sigma = torch.zeros(n, device=self.device).index_add(
            0, self.r_val, share * sigma[self.r_use])
        end_mu = torch.where(self.has_reads > 0, end_mu, mu.detach())
        end_sigma = torch.where(self.has_reads > 0, end_sigma, sigma.detach())
        end_sigma = end_sigma.clamp(self.sigma_floor, self.sigma_cap)
        end_base, end_cdf = self._band(end_mu, end_sigma)
        live = self._fold(base, cdf) - self._fold(end_base, end_cdf) + \
            self._count(base + self.W, end_base + self.W)
        return live * self.has_reads[:, None]

    # -- decoding --------------------------------------------------------------------------------

    def decoded(self) -> tuple[dict[str, float], dict[str, str]]:
        """The wanted start times (the means) and the most likely allowed group of each op."""
        names = self.model.op_names
        mu = self.mu.detach().cpu().tolist()
        best = torch.argmax(self.logits.detach() + self.mask, dim=1).cpu().tolist()
        return ({v: mu[k] for k, v in enumerate(names)},
                {v: self.groups[best[k]] for k, v in enumerate(names)})
