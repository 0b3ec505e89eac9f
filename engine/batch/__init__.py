"""Many answers at once: JSON lines, local worker pool and Dask."""
