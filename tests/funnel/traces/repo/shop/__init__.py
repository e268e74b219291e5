"""A tiny shop: prices, discounts and carts."""
