"""A shopping cart."""

from shop.pricing import apply_discount, total


class Cart:
    """Items with quantities and an optional discount."""

    def __init__(self) -> None:
        self.items: list[tuple[int, int]] = []
        self.discount = 0

    def add(self, price_cents: int, qty: int = 1) -> None:
        """Add an item."""
        self.items.append((price_cents, qty))

    def checkout(self) -> int:
        """Amount to pay, in cents."""
        return apply_discount(total(self.items), self.discount)
