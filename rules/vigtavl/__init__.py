"""Vigtavl v0.93 (Robert Carter Mills): medieval land and sea strategy on a hex map with walls on hex edges.

The game lives in `game.py` (registered by its folder); the other modules are its parts."""
