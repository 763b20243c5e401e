"""Valknut: Skirmish Game — two players, five Runic-Armored units each, on a 22" x 30" battlefield.

The game lives in `game.py` (registered by its folder); the other modules are its parts."""
