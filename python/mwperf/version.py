"""The controller's version (a module of its own: anything may import it
without importing the package's entry points)."""

__version__ = "0.1.0"
