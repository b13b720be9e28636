"""The families: loss, gradient, curvature, bounds, deviance (GLM families and Cox)."""
