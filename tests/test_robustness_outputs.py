"""What warpweave writes: output paths checked before the work (one line naming the option),
names made safe for files and C, files replaced whole or not at all."""

from __future__ import annotations

import os

import pytest

from warpweave.core.formats import write_document
from warpweave.errors import InputError
from warpweave.outputs import (
    c_identifiers,
    file_stem,
    output_dir,
    output_file,
    renamed,
    write,
    write_into,
)


def test_an_output_directory_is_made_or_refused_in_one_line(tmp_path):
    assert output_dir(tmp_path / "a" / "b").is_dir()
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match=r'^--out = ".*f": is a file, not a directory$'):
        output_dir(tmp_path / "f")
    with pytest.raises(InputError, match=r'^--out = "/proc/ww-out": cannot make the directory'):
        output_dir("/proc/ww-out")
    later = output_dir(tmp_path / "later" / "x", make=False)  # checked, made by its writer
    assert not later.exists()
    with pytest.raises(InputError, match=r'f/x": cannot make the directory: .*f is a file$'):
        output_dir(tmp_path / "f" / "x", make=False)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_a_directory_without_write_permission_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(InputError, match="permission denied"):
        output_dir(locked)
    with pytest.raises(InputError, match="permission denied"):
        output_file(locked / "x.json")


def test_an_output_file_needs_its_directory_and_a_known_suffix(tmp_path):
    assert output_file(tmp_path / "x.json", suffixes=(".json",)) == tmp_path / "x.json"
    with pytest.raises(InputError, match=r'^-o = ".*nodir/x.json": directory .*nodir does '
                                         r'not exist$'):
        output_file(tmp_path / "nodir" / "x.json", "-o")
    with pytest.raises(InputError, match="is a directory, not a file"):
        output_file(tmp_path)
    with pytest.raises(InputError, match=r'x.yaml": the format is taken from the suffix, which '
                                         r'must be .json or .toml$'):
        write_document({}, tmp_path / "x.yaml", "-o")
    assert not (tmp_path / "x.yaml").exists()


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    write(target, "old")

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(InputError, match=r'report.json": cannot write: No space left on device$'):
        write(target, "new")
    assert target.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["report.json"]


def test_a_written_file_has_the_usual_permissions(tmp_path):
    mask = os.umask(0o022)
    try:
        assert write(tmp_path / "x.txt", b"x").stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(mask)


@pytest.mark.parametrize("name, stem", [
    ("fa3-fwd", "fa3-fwd"), ("../escaped", "_escaped"), ("ü/../x", "__.._x"), ("", "model"),
    ("...", "model"), ("a b", "a_b"), ("x" * 300, "x" * 100)])
def test_model_names_become_file_stems_that_stay_in_the_output_directory(tmp_path, name, stem):
    assert file_stem(name) == stem
    written = write_into(tmp_path, file_stem(name) + ".txt", "x")
    assert written.parent == tmp_path


@pytest.mark.parametrize("name", ["../x", "a/b", "..", ""])
def test_only_plain_file_names_are_written_into_a_directory(tmp_path, name):
    with pytest.raises(ValueError, match="not a plain file name"):
        write_into(tmp_path, name, "x")


def test_c_identifiers_are_distinct_and_keep_valid_names():
    ids = c_identifiers(["q-k", "q_k", "1st", "q k", "ok"])
    assert ids == {"q-k": "q_k_2", "q_k": "q_k", "1st": "v_1st", "q k": "q_k_3", "ok": "ok"}
    assert c_identifiers(["q_k", "q-k"]) == {"q_k": "q_k", "q-k": "q_k_2"}
    assert renamed(ids) == ["'q-k' -> 'q_k_2'", "'1st' -> 'v_1st'", "'q k' -> 'q_k_3'"]
