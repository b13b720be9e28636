"""Exports that read the model description: SQL, scorecard, the standalone scorer."""
