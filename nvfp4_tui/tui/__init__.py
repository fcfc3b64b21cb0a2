"""The Textual app: fleet grid, detail, leaderboard and help screens."""
