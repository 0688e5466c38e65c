"""An audit's outcome as one record: the numbers, what was audited, and how to read them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

READING = (
    "ε_lb is a statistical lower bound on the true ε of the audited mechanism: with the stated "
    "confidence, no mechanism with a smaller ε could have produced these results. ε_lb ≤ claimed ε "
    "means the attack did not contradict dpgan's claim (it does not prove it); ε_lb > claimed ε would "
    "mean the claim is wrong. ε_lb = 0 means the attack found nothing."
)


@dataclass
class AuditResult:
    """What `dpgan audit` prints (`to_dict` is its `--json` output)."""

    mode: str
    recipe: str
    source: str
    audited: str
    epsilon_claimed: float
    epsilon_lower_bound: float
    confidence: float
    delta: float
    ceiling: float
    trials: int
    steps: int
    sample_rate: float
    noise_multiplier: float
    max_grad_norm: float
    model_epsilon: float
    ablate: str | None = None
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def consistent(self) -> bool:
        return self.epsilon_lower_bound <= self.epsilon_claimed

    @property
    def verdict(self) -> str:
        if self.consistent:
            return "consistent: the audit does not contradict the claimed ε"
        return "VIOLATION: the lower bound exceeds the claimed ε"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["consistent"] = self.consistent
        out["verdict"] = self.verdict
        out["reading"] = READING
        return out

    def to_text(self) -> str:
        """The terminal view: the two ε side by side, then what was audited and the caveats."""
        lines = [
            f"audit ({self.mode}{', ablated: ' + self.ablate if self.ablate else ''}) of {self.source}",
            f"  audited: {self.audited}",
            f"  claimed ε       = {self.epsilon_claimed:.4f}   (dpgan's accountant for exactly what was audited, "
            f"δ = {self.delta:g})",
            f"  ε lower bound   = {self.epsilon_lower_bound:.4f}   (confidence {100 * self.confidence:g}%; "
            f"these trials can certify at most {self.ceiling:.2f})",
            f"  {self.verdict}",
            f"  the model's whole training claims ε = {self.model_epsilon:.4f} (σ = {self.noise_multiplier:.4g}, "
            f"C = {self.max_grad_norm:g})",
            f"  {self.trials} trial(s) per world, {self.steps} step(s) each, q = {self.sample_rate:g}; "
            f"{self.seconds:.1f} s",
        ]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)
