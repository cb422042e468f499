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


def test_the_cmake_names_load_from_the_build_table():
    from portkit.buildfiles.cmake import _HANDLERS
    from portkit.buildfiles.table import default_table
    names = default_table().cmake
    assert "ARCHITECTURES" in names.hip_variables
    assert names.toolkit_variables["CUDA_INCLUDE_DIRS"] == "hip_INCLUDE_DIRS"
    assert names.findcuda_commands["cuda_add_library"] == "add_library"
    assert names.results.fullmatch("CUDA_cublas_LIBRARY") and not names.results.fullmatch("CUDA_PTX_FILE")
    assert {c for c, handler in _HANDLERS.items() if handler.__name__ == "findcuda_library"} == set(
        names.findcuda_libraries)


@pytest.mark.parametrize("old, new, message", [
    ('hip_properties = [', 'hip_propertys = [',
     "mappings/build.toml: [cmake]: unknown key 'hip_propertys'"),
    ('[cmake.toolkit_variables]\n', '[cmake.toolkit_variable]\n',
     "mappings/build.toml: [cmake]: unknown key 'toolkit_variable'"),
    ('cuda_add_cufft_to_target = "cufft"', 'cuda_add_cufft_to_target = "cufft_x"',
     "mappings/build.toml: [cmake].findcuda_libraries: cuda_add_cufft_to_target: 'cufft_x' is no [[library]] "
     "link name"),
    ('id = "culibos"\n', 'id = "culibos"\nhip_targt = "x"\n',
     "mappings/build.toml: library 16: unknown key 'hip_targt'"),
    ('action = "translate"\nhip = ["-ffast-math"]', 'action = "translate"\nhipp = ["-ffast-math"]',
     "mappings/build.toml: flag 4: unknown key 'hipp'"),
])
def test_a_bad_build_table_is_named(tmp_path, old, new, message):
    from portkit.buildfiles.table import load
    path = edited(tmp_path, "build.toml", old, new)
    with pytest.raises(MappingError) as info:
        load(path)
    assert str(info.value) == message
