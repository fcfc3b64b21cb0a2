"""Screens of the app: fleet grid, endpoint detail, leaderboard, keys help, quit confirmation."""
