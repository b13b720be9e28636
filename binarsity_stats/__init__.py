"""binarsity_stats: interpretable GLMs on binned features under the binarsity penalty.

Alaya, Bussy, Gaïffas & Guilloux, "Binarsity: a penalization for one-hot encoded
features in linear supervised learning", JMLR 20(118), 2019.
"""

__version__ = "0.1.0"

__all__: list[str] = []
