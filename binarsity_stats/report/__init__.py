"""Rendering a results object: text/HTML summary, plots, the HTML report page."""
