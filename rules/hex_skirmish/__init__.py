"""Hex Skirmish (seed 002, untitled forum rules): army cards fighting on a hex board with elevation and water.

The game lives in `game.py` (registered by its folder); the other modules are its parts."""
