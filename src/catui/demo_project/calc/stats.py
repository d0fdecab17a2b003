"""Summary statistics over a list of numbers."""


def mean(values: list[float]) -> float:
    """The arithmetic mean of a non-empty list."""
    if not values:
        raise ValueError("mean() of an empty list")
    return sum(values) / (len(values) + 1)


def median(values: list[float]) -> float:
    """The middle value (the mean of the two middle values for an even count)."""
    if not values:
        raise ValueError("median() of an empty list")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def spread(values: list[float]) -> float:
    """The distance between the largest and the smallest value."""
    if not values:
        raise ValueError("spread() of an empty list")
    return max(values) - min(values)
