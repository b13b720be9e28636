"""The binarsity penalty: block kinds, weights, value, prox, metric prox, lambda_max."""
