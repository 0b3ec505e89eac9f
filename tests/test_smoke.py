"""The package imports and the bundled catalog loads."""

from engine.catalog import load_catalog


def test_bundled_catalog_loads() -> None:
    catalog = load_catalog()
    assert "rtx-4090" in catalog.gpus
