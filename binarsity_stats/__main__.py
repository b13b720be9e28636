"""``python -m binarsity_stats``: see :mod:`binarsity_stats._cli`."""

from ._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
