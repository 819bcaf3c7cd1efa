"""A small shop's till: what a basket costs."""


def total(items):
    """The price of a basket: items are (price, quantity) pairs."""
    return sum(price for price, quantity in items)
