"""calc: small statistics helpers."""

from calc.stats import mean, median, spread

__all__ = ["mean", "median", "spread"]
