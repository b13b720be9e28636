"""Argument validation and the scikit-learn base stand-ins every layer uses."""
