"""The engine's version: recorded with every decision and part of every cache key."""

__version__ = "0.2.0"
