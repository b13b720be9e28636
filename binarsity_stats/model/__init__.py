"""glm() and BinarsityModel, results, path/CV results, refit, bootstrap, comparison."""
