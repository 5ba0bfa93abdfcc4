"""Shared fixtures of the Python module's tests: where the repository, the generated models and
the CLI are (CTest sets ONEPOOL_SOURCE_DIR, ONEPOOL_MODELS_DIR and ONEPOOL_CLI; run by hand,
they default to the checkout's build/)."""

import os
import pathlib

import pytest

ROOT = pathlib.Path(os.environ.get("ONEPOOL_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
MODELS = pathlib.Path(os.environ.get("ONEPOOL_MODELS_DIR", ROOT / "build" / "models"))
CLI = pathlib.Path(os.environ.get("ONEPOOL_CLI", ROOT / "build" / "onepool"))


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def mlp_path():
    path = MODELS / "mlp.onnx"
    assert path.exists(), f"{path} missing: build the model suite (ninja -C build onepool_models)"
    return path


@pytest.fixture(scope="session")
def data_dependent_path():
    path = MODELS / "data_dependent_heads.onnx"
    assert path.exists(), f"{path} missing: build the model suite (ninja -C build onepool_models)"
    return path


@pytest.fixture(scope="session")
def cli():
    assert CLI.exists(), f"{CLI} missing: build the CLI (ninja -C build onepool_cli)"
    return CLI
