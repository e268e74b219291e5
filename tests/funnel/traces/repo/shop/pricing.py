"""Prices and discounts, in integer cents."""


def apply_discount(price_cents: int, percent: int) -> int:
    """Price after a percentage discount, in cents."""
    if percent < 0 or percent > 100:
        raise ValueError(f"bad discount {percent}")
    return price_cents - price_cents * percent // 10


def total(items: list[tuple[int, int]]) -> int:
    """Sum of price * quantity, in cents."""
    return sum(price * qty for price, qty in items)
