"""Cython kernels: typed loops without Python objects; they import nothing from the package."""
