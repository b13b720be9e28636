"""The scikit-learn estimators (BinarsityGLM, BinarsityClassifier and their CV twins)."""
