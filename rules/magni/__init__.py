"""Rise of the Magni (seed 001): two players place 10 hero tiles each on a 19-cell hex board.

The game lives in `game.py` (registered by its folder); the other modules are its parts."""
