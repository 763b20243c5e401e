"""Frame sources and recorders, tag detection, tracking and move events, and the synthetic scene renderer."""
