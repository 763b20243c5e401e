"""The game on the table, live or replayed: setup, the frame pipeline, floors, feeds, the live loop,
recording, replay, the timeline, the SQLite store and the frame messages a browser draws.

Imports calibration, vision and rules; never FastAPI, and never a game by its name."""
