"""LMDeploy seen from outside: its live endpoints (`endpoint`). Everything pure it knows (log lines,
demo behaviour, identity) is `kvtop.domain.engines.lmdeploy`."""
