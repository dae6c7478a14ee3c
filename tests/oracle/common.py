"""Shared by the oracle scripts."""


def digest(data):
    """FNV-1a 64 of the bytes plus their length, as rbag-testkit's `digest` computes it."""
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x%08x" % (h, len(data))
