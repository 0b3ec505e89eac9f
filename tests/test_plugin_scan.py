"""The stand-in for pydantic's plugin loader: no importlib.metadata while plugins are off,
pydantic's own answers otherwise. Each case runs in a fresh interpreter (sys.modules)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent("""
    import json, os, sys
    from engine.plugin_scan import skip_plugin_loader
    stood_in = skip_plugin_loader()
    import pydantic

    class Team(pydantic.BaseModel):
        name: str
        gpus: int

    team = Team.model_validate({"name": "lab", "gpus": "8"})
    import pydantic.plugin._loader as loader
    found = {"stood_in": stood_in, "gpus": team.gpus,
             "metadata_imported": "importlib.metadata" in sys.modules,
             "group": loader.PYDANTIC_ENTRY_POINT_GROUP}
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "someone-else"  # plugins on again
    found["plugins_after"] = list(loader.get_plugins())
    found["metadata_after"] = "importlib.metadata" in sys.modules
    print(json.dumps(found))
""")


def _probe(setting: str | None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    if setting is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = setting
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                          text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("setting", ["__all__", "1", "true"])
def test_plugins_off_validate_without_importing_metadata(setting: str) -> None:
    found = _probe(setting)
    assert found["stood_in"] is True
    assert found["gpus"] == 8
    assert found["metadata_imported"] is False
    # a name the stand-in does not define comes from pydantic's own loader
    assert found["group"] == "pydantic"
    # plugins enabled again: pydantic's own loader scans (and finds none installed here)
    assert found["metadata_after"] is True
    assert found["plugins_after"] == []


@pytest.mark.parametrize("setting", [None, "", "some-plugin"])
def test_plugins_on_keep_pydantic_loader(setting: str | None) -> None:
    found = _probe(setting)
    assert found["stood_in"] is False
    assert found["gpus"] == 8
    assert found["metadata_imported"] is True


def test_the_command_line_stands_in() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    probe = ("import sys, engine.cli, engine.answers.model; "
             "print('importlib.metadata' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "False"
