"""What each engine looks like from outside: its log lines, process titles and endpoints (`<engine>/`)."""
