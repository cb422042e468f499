"""The small data tables (effort, build names, targets, rule facts) load into typed records, and an
unknown or missing key is an error naming the file and the entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from portkit import effort
from portkit.errors import MappingError
from portkit.mappings import tables_dir


def edited(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A copy of the shipped table `name` with `old` replaced by `new` (once)."""
    text = (tables_dir() / name).read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def test_the_cost_model_loads_into_records():
    model = effort.default_model()
    assert isinstance(model.units["validate_kernel"], effort.Unit)
    assert model.units["validate_kernel"].fact == "kernels"
    assert model.units["validate_kernel"].repeat_in_file == 0.5
    ci = model.fixed["ci"]
    assert (ci.fact, ci.when, ci.max) == ("cuda_files", ("cuda-sources",), (1.5, 3.0, 6.0))
    assert model.archetypes[-1] == effort.Archetype("other", model.archetypes[-1].label, (), "nothing to port", True)
    assert model.focus_hours_per_week == 30.0


@pytest.mark.parametrize("old, new, message", [
    ('[unit.validate_kernel]\nhours', '[unit.validate_kernel]\nhourz = 1\nhours',
     "mappings/effort.toml: unit.validate_kernel: unknown key 'hourz'"),
    ('[fixed.ci]\nbase', '[fixed.ci]\nbasis_ = "x"\nbase',
     "mappings/effort.toml: fixed.ci: unknown key 'basis_'"),
    ('focus_hours_per_week = 30', 'focus_hours_per_weak = 30',
     "mappings/effort.toml: [model]: unknown key 'focus_hours_per_weak'"),
    ('per_site = 0.1\n', '',
     "mappings/effort.toml: [model]: missing key 'per_site'"),
    ('[calibration]\nprojects = 9', '[calibration]\nproject = 9',
     "mappings/effort.toml: [calibration]: unknown key 'project'"),
    ('id = "jax"\n', '',
     "mappings/effort.toml: archetype 5: missing key 'id'"),
    ('id = "jax"\n', 'id = "jax"\nfeasable = true\n',
     "mappings/effort.toml: archetype 5: unknown key 'feasable'"),
    ('schema = 1\n', 'schema = 1\n[modle]\n',
     "mappings/effort.toml: unknown key 'modle'"),
])
def test_a_bad_cost_model_is_named(tmp_path, old, new, message):
    with pytest.raises(MappingError) as info:
        effort.load(edited(tmp_path, "effort.toml", old, new))
    assert str(info.value) == message
