"""Pure game logic in inches and hexes.

Nothing here imports cv2, reads files, reads clocks or uses global randomness: every function is a
function of (game state, measured positions, declared action, injected RNG). A test enforces it.
"""
