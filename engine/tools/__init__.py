"""Tools over the engine: what-if, policy diff, scenarios, JSON Schemas."""
