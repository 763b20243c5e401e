"""Valyr: hero skirmish with "True Movement" measured by tape (the rule book: seeds/000_b6a76c7c967c9fa2.txt).

The game lives in `game.py` (registered by its folder); the other modules are its parts."""
