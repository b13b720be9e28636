"""The binned design: binarizer, BinnedDesign, estimator feature kinds, the model description."""
