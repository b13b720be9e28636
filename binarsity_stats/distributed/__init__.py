"""Dask: per-partition summaries, the Dask formula door and the Dask solver."""
