"""The audit store: hash-chained records, keys, replay."""
