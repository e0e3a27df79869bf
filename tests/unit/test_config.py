"""Settings: file < environment < flags, and clear errors naming the culprit."""

from __future__ import annotations

from pathlib import Path

import pytest

from pheron_tui.config import ConfigError, load_settings


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_precedence_flags_over_environment_over_file(tmp_path: Path) -> None:
    path = write(tmp_path, 'max_steps = 3\nmodel = "from-file"\napprove = "all"\n')
    env = {"PHERON_MAX_STEPS": "5", "PHERON_MODEL": "from-env"}
    settings = load_settings({"model": "from-flag"}, config_path=path, environ=env)
    assert (settings.model, settings.max_steps, settings.approve) == ("from-flag", 5, "all")


def test_broken_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "max_steps = = 3\n")
    with pytest.raises(ConfigError, match=rf"{path}: not valid TOML"):
        load_settings(config_path=path, environ={})


def test_mistyped_value_names_file_key_and_problem(tmp_path: Path) -> None:
    path = write(tmp_path, 'max_steps = "many"\n')
    with pytest.raises(ConfigError, match=rf"{path}: max_steps: .*integer.*'many'"):
        load_settings(config_path=path, environ={})


def test_unknown_key_in_file(tmp_path: Path) -> None:
    path = write(tmp_path, "max_stepz = 3\n")
    with pytest.raises(ConfigError, match="max_stepz: unknown setting"):
        load_settings(config_path=path, environ={})


def test_bad_environment_variable_is_named() -> None:
    with pytest.raises(ConfigError, match="PHERON_MAX_STEPS"):
        load_settings(environ={"PHERON_MAX_STEPS": "lots"})
    with pytest.raises(ConfigError, match="PHERON_COLOUR: unknown setting"):
        load_settings(environ={"PHERON_COLOUR": "red"})


def test_missing_explicit_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        load_settings(config_path=tmp_path / "nope.toml", environ={})
