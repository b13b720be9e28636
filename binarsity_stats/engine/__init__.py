"""Solving: the solver data protocol, CD/FISTA, Gram backend, polish, relax, path and CV."""
