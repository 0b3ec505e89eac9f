"""Facts about one request: what the rules read, and the registry that declares them."""
