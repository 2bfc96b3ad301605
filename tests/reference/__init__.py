"""Reference models that check the library from outside it (SimPy event models of the schemes)."""
