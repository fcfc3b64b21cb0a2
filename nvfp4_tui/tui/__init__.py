"""The Textual app: fleet grid, detail, leaderboard, compare and help screens."""
