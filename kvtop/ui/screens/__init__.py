"""Screens: dashboard, rank ledger, planner, help, probe."""
