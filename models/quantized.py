"""int8 models of the generated suite (see generate.py): builders, their inputs, and the ops they add."""
OPS = set()
MODELS = {}
