"""The till's checks: a basket costs each price times its quantity."""

from prices import total


def test():
    return (total([]) == 0 and total([(3, 1)]) == 3 and total([(2, 4), (5, 2)]) == 18
            and total([(7, 0)]) == 0)
