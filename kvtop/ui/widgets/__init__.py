"""Widgets: the GPU list and its bars, the header, the findings pane."""
